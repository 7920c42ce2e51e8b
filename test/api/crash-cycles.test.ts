import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerProcess } from '../helpers/process.ts';
import { bootServerProcess } from '../helpers/process.ts';
import type { RequestOptions, TestService } from '../helpers/service.ts';
import { request } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';

/** How many kill -9 cycles (CRASH_CYCLES to run more or fewer). */
const CYCLES = Number(process.env.CRASH_CYCLES ?? 20);
/** Each cycle's process is killed once this many writes were acknowledged in it, a contract transition and a top-up among them. */
const ACKS_PER_CYCLE = 12;

const CONTRACT_STEPS = [
  ['provider', 'accept', 'accepted'],
  ['provider', 'start', 'in_progress'],
  ['provider', 'deliver', 'delivered'],
  ['requester', 'complete', 'completed'],
] as const;
const STATE_ORDER = ['open', 'accepted', 'in_progress', 'delivered', 'completed'];

/** What verify takes of a sandbox payment. */
const proof = (paid: Record<string, unknown>) => ({ order_id: paid.order_id, payment_id: paid.payment_id, signature: paid.signature });

interface Agent {
  agent_id: string;
  api_key: string;
}

/**
 * A mixed write load on a real service process, killed with SIGKILL 20 times: posts, DMs, contract
 * transitions (with the listings and responses that open them) and paid top-ups. After the last
 * restart every acknowledged write is in the log and the read models, none is there twice, and
 * each agent's balance is what its stored writes and top-ups make it. docs/SECURITY.md "Crash
 * cycles" has the figures.
 */
describe('crash safety: kill -9 cycles under a mixed write load', () => {
  it(`keeps every acknowledged post, DM, contract transition and top-up over ${CYCLES} kill -9 cycles, none doubled, credits conserved`, async function () {
    this.timeout(600_000);
    const started = Date.now();
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-cycles-'));
    const outbox = mkdtempSync(join(tmpdir(), 'agent-network-cycles-outbox-'));
    const env = { MAIL_OUTBOX_DIR: outbox };
    let server: ServerProcess = await bootServerProcess(dataDir, env);
    const boots: number[] = [];
    // The test helpers' service face, on whichever process is running now.
    const svc = {
      req: (method: string, path: string, opts?: RequestOptions) => request(server.url, method, path, opts),
      async register(overrides: Record<string, unknown> = {}) {
        const body = { name: 'Cycle agent', capabilities: ['lead-gen'], owner_name: 'O', owner_email: `o${Math.random()}@example.com`, ...overrides };
        const r = await request(server.url, 'POST', '/api/protocol/register', { body });
        return { agent_id: r.body.agent_id as string, api_key: r.body.api_key as string, body: r.body };
      },
    } as unknown as TestService;
    try {
      // Two claimed agents on the pro tier (top-ups need a paid tier), paid through the sandbox.
      const parties: Agent[] = [];
      for (let i = 0; i < 2; i++) {
        const { agent } = await signUpWithAgent(svc, outbox);
        const order = await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/upgrade`, { body: { tier: 'pro' } });
        expect(order.status, order.text).to.equal(200);
        const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: order.body.order_id } });
        const verified = await svc.req('POST', '/api/credits/topup/verify', { body: proof(paid.body) });
        expect(verified.status, verified.text).to.equal(200);
        parties.push({ agent_id: agent.agent_id, api_key: agent.api_key });
      }
      const [a, b] = parties;
      const balance = async (p: Agent) => (await svc.req('GET', `/api/protocol/agents/${p.agent_id}/credits`, { apiKey: p.api_key })).body.balance as number;
      const start = { a: await balance(a), b: await balance(b) };

      const acked = { posts: new Map<string, string>(), dms: new Set<string>(), contracts: new Map<string, string>(), topups: new Set<string>() };
      let unacknowledged = 0;

      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
        let stop = false;
        // The kill waits for ACKS_PER_CYCLE writes, among them a contract transition and a top-up.
        const count = { all: 0, transitions: 0, topups: 0 };
        let enough: () => void = () => undefined;
        const reached = new Promise<void>((resolve) => (enough = resolve));
        const ack = (kind?: 'transitions' | 'topups') => {
          count.all++;
          if (kind) count[kind]++;
          if (count.all >= ACKS_PER_CYCLE && count.transitions > 0 && count.topups > 0) enough();
        };
        /** One write: its answer when 2xx, else null (an error or a dead server count as unacknowledged). */
        const write = async (method: string, path: string, opts: RequestOptions): Promise<Record<string, unknown> | null> => {
          try {
            const r = await request(server.url, method, path, { agent, ...opts });
            if (r.status >= 200 && r.status < 300) return r.body as Record<string, unknown>;
            if (!stop) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
          } catch (err) {
            if (!stop && !(err as { code?: string }).code) throw err;
          }
          unacknowledged++;
          return null;
        };
        const loop = async (step: (i: number) => Promise<boolean>) => {
          for (let i = 0; !stop; i++) if (!(await step(i))) return;
        };
        const workers = [
          // Posts by A.
          loop(async (i) => {
            const title = `post ${cycle}-${i}`;
            const r = await write('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title, body: 'load', post_type: 'signal_found' } });
            if (r) acked.posts.set(title, r.post_id as string);
            if (r) ack();
            return r !== null;
          }),
          // DMs from A to B.
          loop(async (i) => {
            const message = `dm ${cycle}-${i}`;
            const r = await write('POST', `/api/protocol/agents/${a.agent_id}/dm`, { apiKey: a.api_key, body: { to_agent_id: b.agent_id, message } });
            if (r) acked.dms.add(message);
            if (r) ack();
            return r !== null;
          }),
          // Contracts: the unfinished one carries on from the state the log has after the last kill
          // (an unacknowledged move may have happened); else A lists, B responds, A accepts (the
          // contract opens). Then its next transition.
          loop(async (i) => {
            let id = [...acked.contracts].find(([, st]) => st !== 'completed')?.[0];
            if (id === undefined) {
              const listing = await write('POST', '/api/agent/marketplace', {
                apiKey: a.api_key,
                body: { title: `listing ${cycle}-${i}`, description: 'crash load', category: 'engineering', price: 10, pricing_type: 'fixed' },
              });
              if (!listing) return false;
              ack();
              const response = await write('POST', `/api/agent/marketplace/${listing.intent_id}/respond`, { apiKey: b.api_key, body: { message: 'on it' } });
              if (!response) return false;
              ack();
              const opened = await write('POST', `/api/agent/marketplace/${listing.intent_id}/responses/${response.response_id}/accept`, { apiKey: a.api_key });
              if (!opened) return false;
              ack();
              id = opened.contract_id as string;
              acked.contracts.set(id, 'open');
            }
            const now = await write('GET', `/api/agent/contracts/${id}`, { apiKey: a.api_key });
            if (!now) return false;
            const next = CONTRACT_STEPS[STATE_ORDER.indexOf(now.state as string)];
            if (next === undefined) {
              acked.contracts.set(id, now.state as string);
              return true;
            }
            const [who, verb, state] = next;
            const moved = await write('POST', `/api/agent/contracts/${id}/${verb}`, { apiKey: (who === 'provider' ? b : a).api_key, body: {} });
            if (!moved) return false;
            acked.contracts.set(id, state);
            ack('transitions');
            return true;
          }),
          // Top-ups of A: order, a sandbox payment, verify (the acknowledged grant).
          loop(async () => {
            const order = await write('POST', '/api/credits/topup/order', { apiKey: a.api_key, body: { pack: 'small' } });
            if (!order) return false;
            const paid = await write('POST', '/api/credits/sandbox/pay', { body: { order_id: order.order_id } });
            if (!paid) return false;
            const verified = await write('POST', '/api/credits/topup/verify', { body: proof(paid) });
            if (verified) acked.topups.add(order.order_id as string);
            if (verified) ack('topups');
            return verified !== null;
          }),
        ];
        const load = Promise.all(workers);
        await Promise.race([reached, load]);
        // Every worker is mid-request here: the kill lands on writes in flight.
        const killed = server.stop('SIGKILL');
        stop = true;
        await load;
        agent.destroy();
        await killed;
        const t = Date.now();
        server = await bootServerProcess(dataDir, env);
        boots.push(Date.now() - t);
      }

      // ---- The read models after the last restart -------------------------------------------
      const titles = new Map<string, number>();
      for (let page = 0; ; page++) {
        const r = await svc.req('GET', `/api/feed/posts?limit=100&page=${page}`);
        for (const p of r.body.items as Array<{ title: string; post_id: string }>) titles.set(p.title, (titles.get(p.title) ?? 0) + 1);
        if (r.body.items.length < 100) break;
      }
      for (const [title, id] of acked.posts) expect(titles.get(title), `${title} (${id})`).to.equal(1);
      for (const [title, n] of titles) expect(n, title).to.equal(1);
      for (const [id, state] of acked.contracts) {
        const r = await svc.req('GET', `/api/agent/contracts/${id}`, { apiKey: a.api_key });
        expect(r.status, r.text).to.equal(200);
        expect(STATE_ORDER.indexOf(r.body.state as string), `${id}: ${r.body.state} after an acknowledged ${state}`).to.be.at.least(STATE_ORDER.indexOf(state));
      }
      const finalBalance = { a: await balance(a), b: await balance(b) };
      await server.stop('SIGKILL');

      // ---- The log ------------------------------------------------------------------------------
      const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
      const events = (type: string) =>
        (db.prepare('SELECT stream, data FROM events WHERE type = ?').all(type) as Array<{ stream: string; data: string }>).map((e) => ({
          stream: e.stream,
          data: JSON.parse(e.data) as Record<string, unknown>,
        }));
      const posts = events('PostPublished').filter((e) => e.data.agent_id === a.agent_id);
      const dms = events('DirectMessageSent').filter((e) => JSON.stringify(e.data).includes(a.agent_id));
      const listings = events('ListingCreated').filter((e) => JSON.stringify(e.data).includes(a.agent_id));
      const responses = events('ListingResponded').filter((e) => JSON.stringify(e.data).includes(b.agent_id));
      const topups = events('CreditsToppedUp').filter((e) => e.data.agent_id === a.agent_id);
      const transitions = events('ContractTransitioned');
      db.close();

      const dmTexts = dms.map((e) => JSON.stringify(e.data).match(/dm \d+-\d+/)?.[0]);
      for (const m of acked.dms)
        expect(
          dmTexts.filter((t) => t === m),
          m,
        ).to.have.length(1);
      expect(new Set(dmTexts).size, 'no DM twice').to.equal(dmTexts.length);
      const orders = topups.map((e) => e.data.order_id as string);
      for (const o of acked.topups)
        expect(
          orders.filter((x) => x === o),
          o,
        ).to.have.length(1);
      expect(new Set(orders).size, 'no top-up twice').to.equal(orders.length);
      const moves = transitions.map((e) => `${e.stream} ${String(e.data.to ?? e.data.status ?? e.data.verb)}`);
      expect(new Set(moves).size, 'no transition twice').to.equal(moves.length);
      expect(posts.length).to.equal(titles.size);

      // Credits: each balance is its start, plus the top-ups stored, less the charges of the writes stored.
      const spentA = posts.length * 0.1 + dms.length * 0.25 + listings.length * 0.5;
      expect(finalBalance.a).to.be.closeTo(start.a + topups.length * 50 - spentA, 1e-9);
      expect(finalBalance.b).to.be.closeTo(start.b - responses.length * 0.25, 1e-9);

      const figures = {
        cycles: CYCLES,
        seconds: Math.round((Date.now() - started) / 100) / 10,
        boot_ms_median: boots.sort((x, y) => x - y)[Math.floor(boots.length / 2)],
        acknowledged: {
          posts: acked.posts.size,
          dms: acked.dms.size,
          contracts: acked.contracts.size,
          transitions: [...acked.contracts.values()].reduce((n, st) => n + STATE_ORDER.indexOf(st), 0),
          topups: acked.topups.size,
        },
        stored: {
          posts: posts.length,
          dms: dms.length,
          listings: listings.length,
          responses: responses.length,
          transitions: transitions.length,
          topups: topups.length,
        },
        unacknowledged,
      };
      console.log(`      crash cycles: ${JSON.stringify(figures)}`);
      expect(acked.posts.size + acked.dms.size + acked.contracts.size + acked.topups.size).to.be.greaterThan(CYCLES * 4);
    } finally {
      server.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(outbox, { recursive: true, force: true });
    }
  });
});
