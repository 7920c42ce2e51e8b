import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { agentStream } from '../../events/agents.ts';
import { chargeOf } from '../../events/types.ts';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const HOUR = 3600_000;
const CREDIT_EVENTS = new Set(['MonthlyCreditsGranted', 'CreditsToppedUp', 'AgentTierUpgraded']);

describe('api: admin credit audits (history, export, CLI)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let stopped = false;
  let outbox: string;
  let admin: { access_token: string };
  let member: { access_token: string };
  let agent: { agent_id: string; api_key: string };
  let other: { agent_id: string; api_key: string };
  let midway: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'auditor@example.com' }));
    agent = await svc.register();
    other = await svc.register();
    for (let i = 0; i < 3; i++)
      await svc.req('POST', '/api/feed/posts', { apiKey: agent.api_key, body: { title: `p${i}`, body: 'b', post_type: 'signal_found' } });
    svc.clock.advance(2 * HOUR);
    midway = svc.clock.now().toISOString();
    await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/dm`, { apiKey: agent.api_key, body: { to_agent_id: other.agent_id, message: 'hi' } });
    const order = await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/upgrade`, { body: { tier: 'pro' } });
    const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: order.body.order_id } });
    const { order_id, payment_id, signature } = paid.body as Record<string, string>;
    expect((await svc.req('POST', '/api/credits/topup/verify', { body: { order_id, payment_id, signature } })).status).to.equal(200);
    const topup = await svc.req('POST', '/api/credits/topup/order', { apiKey: agent.api_key, body: { pack: 'small' } });
    const p2 = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: topup.body.order_id } });
    const v2 = p2.body as Record<string, string>;
    expect(
      (await svc.req('POST', '/api/credits/topup/verify', { body: { order_id: v2.order_id, payment_id: v2.payment_id, signature: v2.signature } })).status,
    ).to.equal(200);
    await svc.req('POST', '/api/feed/posts', { apiKey: agent.api_key, body: { title: 'after', body: 'b', post_type: 'signal_found' } });
    // Signed in last: access tokens live 15 minutes on the moved clock.
    admin = await signUp(svc, outbox, 'auditor@example.com');
    member = await signUp(svc, outbox);
  });
  after(() => stopWithOutbox(stopped ? undefined : svc, outbox));

  /** The ledger read directly from the agent's stream: every grant, top-up, upgrade and charge, oldest first. */
  async function fromStream(s: TestService) {
    const events = await s.running.services.log.readStream(agentStream(agent.agent_id));
    return events
      .filter((e) => CREDIT_EVENTS.has(e.type) || chargeOf(e.data))
      .map((e) => ({ position: e.position, event_id: e.id, event_type: e.type, actor: e.metadata.actor, created_at: e.metadata.occurred_at }));
  }

  async function allPages(query = '', limit = 2) {
    const out: Array<Record<string, unknown>> = [];
    let after = '0';
    for (let i = 0; i < 100; i++) {
      const res = await svc.req('GET', `/api/admin/agents/${agent.agent_id}/credits/history?limit=${limit}&after=${after}${query}`, {
        headers: bearer(admin.access_token),
      });
      expect(res.status, res.text).to.equal(200);
      out.push(...res.body.entries);
      if (!res.body.has_more) return out;
      after = res.body.next_cursor;
    }
    throw new Error('too many pages');
  }

  it("lets a super admin page through any agent's ledger, equal to its stream, with positions and actors", async () => {
    const entries = await allPages();
    const expected = await fromStream(svc);
    expect(
      entries.map((e) => ({ position: e.position, event_id: e.event_id, event_type: e.event_type, actor: e.actor, created_at: e.created_at })),
    ).to.deep.equal(expected);
    expect(entries.map((e) => e.action)).to.include.members(['monthly_allocation', 'post', 'dm', 'upgrade_allocation', 'topup']);
    const post = entries.find((e) => e.action === 'post');
    expect(post).to.include({ type: 'debit', amount: 0.1, actor: agent.agent_id });
  });

  it('filters by type, action and time range', async () => {
    const all = await allPages('', 50);
    const debits = await allPages('&type=debit', 50);
    expect(debits.map((e) => e.position)).to.deep.equal(all.filter((e) => e.type === 'debit').map((e) => e.position));
    const posts = await allPages('&action=post', 50);
    expect(posts).to.have.length(4);
    const later = await allPages(`&from=${encodeURIComponent(midway)}`, 50);
    expect(later.map((e) => e.position)).to.deep.equal(all.filter((e) => (e.created_at as string) >= midway).map((e) => e.position));
    const earlier = await allPages(`&to=${encodeURIComponent(midway)}`, 50);
    expect(earlier.length + later.length).to.equal(all.length);
    const bad = await svc.req('GET', `/api/admin/agents/${agent.agent_id}/credits/history?type=refund`, { headers: bearer(admin.access_token) });
    expect(bad.status).to.equal(422);
  });

  it('refuses a member (403), an API key (401) and answers 404 for an unknown agent', async () => {
    const path = `/api/admin/agents/${agent.agent_id}/credits/history`;
    const m = await svc.req('GET', path, { headers: bearer(member.access_token) });
    expect(m.status).to.equal(403);
    expect(m.body.code).to.equal('admin_required');
    expect((await svc.req('GET', path, { apiKey: agent.api_key })).status).to.equal(401);
    expect((await svc.req('GET', path)).status).to.equal(401);
    const unknown = await svc.req('GET', '/api/admin/agents/agt_nobody0000000000000/credits/history', { headers: bearer(admin.access_token) });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('agent_not_found');
  });

  it('exports the filtered ledger as NDJSON and CSV', async () => {
    const all = await allPages('', 50);
    const nd = await svc.req('GET', `/api/admin/agents/${agent.agent_id}/credits/history/export?format=ndjson`, { headers: bearer(admin.access_token) });
    expect(nd.status).to.equal(200);
    expect(nd.headers['content-type']).to.match(/application\/x-ndjson/);
    expect(
      nd.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).to.deep.equal(all);
    const csv = await svc.req('GET', `/api/admin/agents/${agent.agent_id}/credits/history/export?format=csv&type=debit`, {
      headers: bearer(admin.access_token),
    });
    expect(csv.status).to.equal(200);
    expect(csv.headers['content-type']).to.match(/text\/csv/);
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).to.equal('position,revision,created_at,event_id,event_type,type,action,amount,balance_after,actor,reference');
    expect(lines.slice(1).map((l) => Number(l.split(',')[0]))).to.deep.equal(all.filter((e) => e.type === 'debit').map((e) => e.position));
  });

  it('the CLI prints the same ledger (--json, filters) and exits 1 for an unknown agent', async () => {
    const api = await allPages('', 50);
    const apiDebits = await allPages('&type=debit', 50);
    const dataDir = svc.dataDir;
    const expected = await fromStream(svc);
    await svc.stop({ keepData: true });
    stopped = true;
    const cli = (...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', 'api/cli.ts', ...args], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir, SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
      });
    try {
      const parse = (out: string) =>
        out
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .reverse();
      const { stdout } = await cli('credits', 'history', agent.agent_id, '--json', '--limit', '1000');
      expect(parse(stdout)).to.deep.equal(api);
      expect(parse(stdout).map((e) => e.event_id)).to.deep.equal(expected.map((e) => e.event_id));
      const debits = await cli('credits', 'history', agent.agent_id, '--json', '--type', 'debit', '--limit', '1000');
      expect(parse(debits.stdout)).to.deep.equal(apiDebits);
      try {
        await cli('credits', 'history', 'agt_nobody0000000000000');
        expect.fail('an unknown agent must fail');
      } catch (err) {
        expect((err as { code?: number }).code).to.equal(1);
        expect((err as { stderr: string }).stderr).to.contain('no agent agt_nobody0000000000000');
      }
    } finally {
      (await import('node:fs')).rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
