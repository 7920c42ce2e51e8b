import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SignedStatement } from '../../commands/credits/statement.ts';
import { verifyStatement } from '../../commands/credits/statement.ts';
import { chainLink } from '../../events/kernel/signing.ts';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const HOUR = 3600_000;

describe('api: verifiable credit statements', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let agent: { agent_id: string; api_key: string };
  let key: string;
  let jwks: unknown;
  const times: string[] = [];

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'auditor@example.com' }));
    agent = await svc.register();
    times.push(svc.clock.now().toISOString());
    for (let day = 0; day < 3; day++) {
      svc.clock.advance(24 * HOUR);
      times.push(svc.clock.now().toISOString());
      for (let i = 0; i < 2; i++)
        await svc.req('POST', '/api/feed/posts', { apiKey: agent.api_key, body: { title: `d${day}p${i}`, body: 'b', post_type: 'signal_found' } });
      await svc.req('POST', '/api/agent/match', { apiKey: agent.api_key, body: { gives: ['lead-gen'], asks: [`topic-${day}`] } });
    }
    svc.clock.advance(HOUR);
    times.push(svc.clock.now().toISOString());
    const wk = await svc.req('GET', '/.well-known/service-key.json');
    jwks = wk.body;
    key = (wk.body as { keys: Array<{ x: string }> }).keys[0].x;
  });
  after(() => stopWithOutbox(svc, outbox));

  const statement = async (from?: string, to?: string): Promise<SignedStatement> => {
    const q = new URLSearchParams({ ...(from ? { from } : {}), ...(to ? { to } : {}) });
    const res = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits/statement?${q.toString()}`, { apiKey: agent.api_key });
    expect(res.status, res.text).to.equal(200);
    return res.body as SignedStatement;
  };
  const copy = (s: SignedStatement): SignedStatement => JSON.parse(JSON.stringify(s)) as SignedStatement;

  it('verifies offline with the published key: signature, hash chain (previous hash, event id, position, amount, balance after) and balances', async () => {
    const s = await statement();
    expect(s.statement.entries.length).to.equal(1 + 3 * 3);
    expect(s.statement.previous_hash).to.equal('0'.repeat(64));
    expect(s.statement).to.include({ opening_balance_mc: 0, closing_balance_mc: 50_000 - 3 * (200 + 1000) });
    const [first] = s.statement.entries;
    const { hash: _h, type: _t, ...link } = first;
    expect(first.hash).to.equal(chainLink('0'.repeat(64), link));
    expect(verifyStatement(s, key)).to.deep.equal([]);
  });

  it('fails after any one entry is changed, dropped or reordered (even with the chain recomputed)', async () => {
    const s = await statement();
    const changed = copy(s);
    changed.statement.entries[3].amount_mc -= 100;
    expect(verifyStatement(changed, key)).to.not.deep.equal([]);
    const balance = copy(s);
    balance.statement.entries[5].balance_after_mc += 1000;
    expect(verifyStatement(balance, key)).to.not.deep.equal([]);
    const dropped = copy(s);
    dropped.statement.entries.splice(4, 1);
    expect(verifyStatement(dropped, key)).to.not.deep.equal([]);
    const reordered = copy(s);
    const [x, y] = [reordered.statement.entries[2], reordered.statement.entries[3]];
    reordered.statement.entries[2] = y;
    reordered.statement.entries[3] = x;
    expect(verifyStatement(reordered, key)).to.not.deep.equal([]);
    // An attacker who rebuilds the chain after a change still fails the signature.
    const rebuilt = copy(s);
    rebuilt.statement.entries.splice(4, 1);
    let h = rebuilt.statement.previous_hash;
    for (const e of rebuilt.statement.entries) {
      const { hash: _h, type: _t, ...link } = e;
      e.hash = h = chainLink(h, link);
    }
    rebuilt.statement.last_hash = h;
    expect(verifyStatement(rebuilt, key)).to.include('the signature does not match the statement and the service key');
    const otherKey = copy(s);
    expect(verifyStatement(otherKey, 'A'.repeat(43))).to.not.deep.equal([]);
  });

  it('links adjacent periods by their hashes, and the periods add up to the whole ledger', async () => {
    const whole = await statement(times[0], times[4]);
    const a = await statement(times[0], times[2]);
    const b = await statement(times[2], times[3]);
    const c = await statement(times[3], times[4]);
    for (const s of [a, b, c]) expect(verifyStatement(s, key)).to.deep.equal([]);
    expect(b.statement.previous_hash).to.equal(a.statement.last_hash);
    expect(c.statement.previous_hash).to.equal(b.statement.last_hash);
    expect(c.statement.last_hash).to.equal(whole.statement.last_hash);
    expect(b.statement.opening_balance_mc).to.equal(a.statement.closing_balance_mc);
    expect([...a.statement.entries, ...b.statement.entries, ...c.statement.entries]).to.deep.equal(whole.statement.entries);
    expect(b.statement.entries).to.have.length(3);
  });

  it('is the agent\u2019s own (403 for another agent); a super admin reads the same statement, a member gets 403', async () => {
    const other = await svc.register();
    const res = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits/statement`, { apiKey: other.api_key });
    expect(res.status).to.equal(403);
    const admin = await signUp(svc, outbox, 'auditor@example.com');
    const member = await signUp(svc, outbox);
    const path = `/api/admin/agents/${agent.agent_id}/credits/statement?from=${encodeURIComponent(times[0])}&to=${encodeURIComponent(times[2])}`;
    const viaAdmin = await svc.req('GET', path, { headers: bearer(admin.access_token) });
    expect(viaAdmin.status, viaAdmin.text).to.equal(200);
    expect(viaAdmin.body).to.deep.equal(await statement(times[0], times[2]));
    expect((await svc.req('GET', path, { headers: bearer(member.access_token) })).status).to.equal(403);
    const backwards = await svc.req(
      'GET',
      `/api/protocol/agents/${agent.agent_id}/credits/statement?from=${encodeURIComponent(times[2])}&to=${encodeURIComponent(times[0])}`,
      {
        apiKey: agent.api_key,
      },
    );
    expect(backwards.status).to.equal(422);
  });

  it('npm run cli -- statement verify <file> accepts a statement and refuses a tampered one (exit 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'statement-'));
    try {
      const s = await statement();
      writeFileSync(join(dir, 'ok.json'), JSON.stringify(s));
      writeFileSync(join(dir, 'keys.json'), JSON.stringify(jwks));
      const bad = copy(s);
      bad.statement.entries.splice(1, 1);
      writeFileSync(join(dir, 'bad.json'), JSON.stringify(bad));
      const cli = (...args: string[]) =>
        run(process.execPath, ['--import', 'tsx', 'api/cli.ts', ...args], { cwd: root, env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'silent' } });
      const ok = await cli('statement', 'verify', join(dir, 'ok.json'), '--jwks', join(dir, 'keys.json'));
      expect(ok.stdout).to.match(/^valid: statement of agt_/);
      try {
        await cli('statement', 'verify', join(dir, 'bad.json'), '--jwks', join(dir, 'keys.json'));
        expect.fail('a tampered statement must fail');
      } catch (err) {
        expect((err as { code?: number }).code).to.equal(1);
        expect((err as { stdout: string }).stdout).to.match(/^INVALID statement/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
