import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BODY_LIMITS } from '../../api/validation.ts';
import { IMAGE_MAX_BYTES, IMAGE_QUOTA_BYTES, IMAGE_UPLOADS_PER_DAY } from '../../commands/feed/image.ts';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { a2aMessageSent, ALICE } from '../fixtures/events.ts';
import { codeIn, readOutbox, waitForMails } from '../helpers/mail.ts';
import { bootServerProcess } from '../helpers/process.ts';
import type { ServerProcess } from '../helpers/process.ts';
import { request, startTestService, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { png } from '../helpers/images.ts';

/** A value nested `depth` levels deep: {"a":{"a":...{}}}. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}
const from = (ip: string) => ({ 'x-forwarded-for': ip });

const PNG = png();
function multipart(data: Buffer) {
  const boundary = `----abuse${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { rawBody: body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('api: abuse hardening (issue 22)', function () {
  this.timeout(120_000);

  describe('request bodies at the edge', () => {
    let svc: TestService;
    let apiKey: string;
    let other: string;
    before(async () => {
      svc = await startTestService();
      ({ api_key: apiKey } = await svc.register());
      ({ agent_id: other } = await svc.register());
    });
    after(() => svc.stop());

    it('a payload nested 4,100 levels deep answers 422 naming the limit (was 500), signed or not', async () => {
      for (const sign of [false, true]) {
        const r = await svc.req('POST', '/api/agent/a2a/message', {
          apiKey,
          body: { to_agent_id: other, intent: 'intro_request', payload: nested(4100), sign },
        });
        expect(r.status, r.text).to.equal(422);
        expect(r.body.detail[0].type).to.equal('value_error.json.depth');
        expect(r.body.detail[0].msg).to.contain(String(BODY_LIMITS.maxDepth));
      }
    });

    it('a free-form payload deeper than 16 levels or larger than 16 KB answers 422; within them it is accepted', async () => {
      const deep = await svc.req('POST', '/api/agent/a2a/message', { apiKey, body: { to_agent_id: other, intent: 'intro_request', payload: nested(17) } });
      expect(deep.status, deep.text).to.equal(422);
      expect(deep.body.detail[0]).to.include({ type: 'value_error.json.depth' });
      expect(deep.body.detail[0].loc).to.deep.equal(['body', 'payload']);
      const big = await svc.req('POST', '/api/agent/a2a/message', {
        apiKey,
        body: { to_agent_id: other, intent: 'intro_request', payload: { x: 'y'.repeat(17_000) } },
      });
      expect(big.status, big.text).to.equal(422);
      expect(big.body.detail[0]).to.include({ type: 'value_error.json.size' });
      const ok = await svc.req('POST', '/api/agent/a2a/message', {
        apiKey,
        body: { to_agent_id: other, intent: 'intro_request', payload: nested(16), sign: true },
      });
      expect(ok.status, ok.text).to.equal(200);
    });

    it('NUL and lone surrogates answer 422 in any string of any body (were stored)', async () => {
      const cases: Array<[string, string, unknown]> = [
        ['PATCH', '/api/protocol/me', { name: '\u0000' }],
        ['PATCH', '/api/protocol/me', { description: 'a\ud800b' }],
        ['POST', '/api/feed/posts', { title: 'ok', body: 'x\u0000y', post_type: 'signal_found' }],
        ['POST', '/api/feed/posts', { title: 'ok', body: 'tail \udc00', post_type: 'signal_found' }],
        ['POST', '/api/agent/a2a/message', { to_agent_id: other, intent: 'intro_request', payload: { deep: ['\u0000'] } }],
      ];
      for (const [method, path, body] of cases) {
        const r = await svc.req(method, path, { apiKey, rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
        expect(r.status, `${method} ${path} ${r.text}`).to.equal(422);
        expect(r.body.detail[0].type).to.match(/^value_error\.str\.(nul|surrogate)$/);
      }
      // A key carrying NUL too, and the same through koa-body's path (chunked, no Content-Length).
      const key = await svc.req('POST', '/api/agent/a2a/message', {
        apiKey,
        rawBody: '{"to_agent_id":"x","intent":"intro_request","payload":{"\\u0000":1}}',
        headers: { 'content-type': 'application/json; charset=latin1' },
      });
      expect(key.status, key.text).to.equal(422);
    });

    it('names and titles refuse bidirectional controls and are stored in NFC', async () => {
      const bidi = await svc.req('PATCH', '/api/protocol/me', { apiKey, body: { name: 'evil\u202Egnp.exe' } });
      expect(bidi.status, bidi.text).to.equal(422);
      expect(bidi.body.detail[0]).to.include({ type: 'value_error.str.bidi_control' });
      const title = await svc.req('POST', '/api/feed/posts', { apiKey, body: { title: 'a\u2066b', body: 'fine', post_type: 'signal_found' } });
      expect(title.status, title.text).to.equal(422);
      // A bidi mark in a body (not a name) is allowed: right-to-left text needs it.
      const body = await svc.req('POST', '/api/feed/posts', { apiKey, body: { title: 'rtl', body: 'שלום\u200F ok', post_type: 'signal_found' } });
      expect(body.status, body.text).to.equal(200);
      const decomposed = 'Cafe\u0301';
      const named = await svc.req('PATCH', '/api/protocol/me', { apiKey, body: { name: decomposed } });
      expect(named.status, named.text).to.equal(200);
      const me = await svc.req('GET', '/api/protocol/me', { apiKey });
      expect(me.body.name).to.equal('Caf\u00e9');
    });

    it('rate-limit headers on 401, 422 and idempotent replays of a limited route', async () => {
      const unauth = await svc.req('POST', '/api/feed/posts', { body: { title: 't', body: 'b', post_type: 'signal_found' } });
      expect(unauth.status).to.equal(401);
      expect(unauth.headers['ratelimit-limit']).to.match(/^\d+$/);
      const invalid = await svc.req('POST', '/api/feed/posts', { apiKey, body: { title: 5 } });
      expect(invalid.status).to.equal(422);
      expect(invalid.headers['ratelimit-remaining']).to.match(/^\d+$/);
      const headers = { 'idempotency-key': 'replay-headers-1' };
      const first = await svc.req('POST', '/api/feed/posts', { apiKey, headers, body: { title: 'once', body: 'b', post_type: 'signal_found' } });
      expect(first.status, first.text).to.equal(200);
      const replay = await svc.req('POST', '/api/feed/posts', { apiKey, headers, body: { title: 'once', body: 'b', post_type: 'signal_found' } });
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.headers['ratelimit-limit']).to.equal(first.headers['ratelimit-limit']);
      expect(replay.headers['ratelimit-reset']).to.match(/^\d+$/);
    });
  });

  describe('client addresses (TRUST_PROXY=1, real limits)', () => {
    let svc: TestService;
    let outbox: string;
    before(async () => ({ svc, outbox } = await startWithOutbox({ TRUST_PROXY: '1', RATE_LIMIT_SCALE: '1' })));
    after(() => stopWithOutbox(svc, outbox));

    it('a registration replayed from another address does not hand out the first one’s secrets', async () => {
      const body = { name: 'Replayed', capabilities: ['lead-gen'], owner_name: 'O', owner_email: `replay.${process.pid}@example.com` };
      const headers = { 'idempotency-key': 'same-key-for-both' };
      const first = await svc.req('POST', '/api/protocol/register', { body, headers: { ...headers, ...from('203.0.113.7') } });
      expect(first.status, first.text).to.equal(200);
      const mine = await svc.req('POST', '/api/protocol/register', { body, headers: { ...headers, ...from('203.0.113.7') } });
      expect(mine.headers['idempotent-replayed']).to.equal('true');
      expect(mine.body.api_key).to.equal(first.body.api_key);
      const stranger = await svc.req('POST', '/api/protocol/register', { body, headers: { ...headers, ...from('198.51.100.9') } });
      expect(stranger.headers['idempotent-replayed']).to.equal(undefined);
      expect(stranger.text).to.not.contain(first.body.api_key);
      expect(stranger.text).to.not.contain(first.body.claim_token);
    });

    it('asking whether an e-mail owns an agent is rationed: 5 owner_email_taken answers per address an hour, then 429 for every registration from it', async () => {
      const held = `held.${process.pid}.${Date.now()}@example.com`;
      const reg = (email: string, ip: string) =>
        svc.req('POST', '/api/protocol/register', {
          headers: from(ip),
          body: { name: 'Prober', capabilities: ['lead-gen'], owner_name: 'P', owner_email: email },
        });
      expect((await reg(held, '203.0.113.50')).status).to.equal(200);
      const prober = '203.0.113.51';
      for (let i = 0; i < 5; i++) {
        const dup = await reg(held, prober);
        expect(dup.status, dup.text).to.equal(409);
        expect(dup.body.code).to.equal('owner_email_taken');
        expect(dup.body.detail).to.match(/^An agent is already registered for this owner e-mail\. Each owner e-mail has one agent/);
      }
      const sixth = await reg(held, prober);
      expect(sixth.status, sixth.text).to.equal(429);
      expect(sixth.body.code).to.equal('rate_limited');
      expect(sixth.body.detail).to.contain('owner email refusals');
      expect(sixth.headers['ratelimit-limit']).to.equal('5');
      expect(sixth.headers['ratelimit-remaining']).to.equal('0');
      expect(Number(sixth.headers['retry-after'])).to.be.within(1, 3600);
      // A free address from the same client waits too, so the 429 says nothing about the address asked.
      const fresh = `fresh.${process.pid}.${Date.now()}@example.com`;
      const free = await reg(fresh, prober);
      expect(free.status, free.text).to.equal(429);
      expect(free.body.code).to.equal('rate_limited');
      expect(free.body.detail).to.equal(sixth.body.detail);
      // Another client is not affected; the prober asks again an hour later.
      expect((await reg(`other.${fresh}`, '203.0.113.52')).status).to.equal(200);
      svc.clock.advance(3600_000);
      expect((await reg(fresh, prober)).status).to.equal(200);
      expect((await reg(held, prober)).status).to.equal(409);
    });

    it('an owner still gets a claim code while a stranger hammers request-otp; the OTP 429 has its own headers', async () => {
      const email = `claim.${process.pid}.${Date.now()}@example.com`;
      const agent = await svc.register({ owner_email: email });
      const path = `/api/protocol/agents/${agent.agent_id}/claim/lite/request-otp`;
      const statuses: number[] = [];
      let refused: Awaited<ReturnType<TestService['req']>> | null = null;
      for (let i = 0; i < 20; i++) {
        const r = await svc.req('POST', path, { headers: from('198.51.100.66'), body: {} });
        statuses.push(r.status);
        if (r.status === 429) refused = r;
      }
      expect(statuses.slice(0, 3)).to.deep.equal([200, 200, 200]);
      expect(statuses.slice(3).every((st) => st === 429)).to.equal(true);
      expect(refused?.headers['ratelimit-limit']).to.equal('3');
      expect(refused?.headers['ratelimit-remaining']).to.equal('0');
      expect(refused?.headers['retry-after']).to.match(/^\d+$/);
      // The stranger's three requests mailed one code (then resent it): the owner's request gets it again.
      const owner = await svc.req('POST', path, { headers: from('192.0.2.10'), body: {} });
      expect(owner.status, owner.text).to.equal(200);
      const mails = await waitForMails(outbox, email, 4);
      const codes = new Set(mails.filter((m) => /claim/i.test(m.subject)).map((m) => codeIn(m)));
      expect(codes.size).to.equal(1);
      const verified = await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/claim/lite/verify`, {
        headers: from('192.0.2.10'),
        body: { otp: [...codes][0] },
      });
      expect(verified.status, verified.text).to.equal(200);
      expect(readOutbox(outbox).length).to.be.greaterThan(0);
    });

    it('past the per-agent ceiling the OTP 429 carries the ceiling, not the auth limiter’s values', async () => {
      const email = `ceiling.${process.pid}.${Date.now()}@example.com`;
      const agent = await svc.register({ owner_email: email });
      const path = `/api/protocol/agents/${agent.agent_id}/claim/lite/request-otp`;
      let last = null as Awaited<ReturnType<TestService['req']>> | null;
      for (let a = 1; a <= 4; a++) for (let i = 0; i < 3; i++) last = await svc.req('POST', path, { headers: from(`192.0.2.${100 + a}`), body: {} });
      expect(last?.status).to.equal(429);
      expect(last?.body.code).to.equal('otp_rate_limited');
      expect(last?.headers['ratelimit-limit']).to.equal('10');
      expect(last?.headers['ratelimit-remaining']).to.equal('0');
      expect(Number(last?.headers['retry-after'])).to.be.greaterThan(0);
    });
  });

  describe('sign-in under guessing (TRUST_PROXY=1, every limit scaled by 0.1 so that 30 addresses exceed the account ceiling quickly)', () => {
    // Scaled: 1 failure per (account, address) per 15 minutes, 10 per account per hour, 3 auth requests per address per minute.
    const PAIR_LIMIT = 1;
    const ACCOUNT_LIMIT = 10;
    let svc: TestService;
    let outbox: string;
    before(async () => ({ svc, outbox } = await startWithOutbox({ TRUST_PROXY: '1', RATE_LIMIT_SCALE: '0.1' })));
    after(() => stopWithOutbox(svc, outbox));

    it('a member whose password is guessed from 30 addresses still signs in from their own address', async () => {
      // Signed up from the test's own address (127.0.0.1): that address is known to the account.
      const user = await signUp(svc, outbox);
      const guess = async (a: number) => {
        for (let i = 0; i < PAIR_LIMIT; i++) {
          const r = await svc.req('POST', '/api/auth/login', { headers: from(`198.51.100.${a}`), body: { email: user.email, password: `guess-${a}-${i}` } });
          expect(r.status).to.be.oneOf([401, 429]);
        }
      };
      await Promise.all(Array.from({ length: 30 }, (_, a) => guess(a + 1)));
      for (let a = 1; a <= 30; a++) {
        const locked = await svc.req('POST', '/api/auth/login', { headers: from(`198.51.100.${a}`), body: { email: user.email, password: user.password } });
        expect(locked.status, 'the guessing address is refused').to.equal(429);
        expect(locked.headers['retry-after']).to.match(/^\d+$/);
      }
      // The per-account ceiling (100 failures an hour, here 10) now slows every address the account does not know ...
      const fresh = await svc.req('POST', '/api/auth/login', { headers: from('192.0.2.200'), body: { email: user.email, password: 'another-guess' } });
      expect(fresh.status).to.equal(429);
      expect(fresh.headers['retry-after']).to.match(/^\d+$/);
      expect(fresh.headers['ratelimit-limit']).to.equal(String(ACCOUNT_LIMIT));
      // ... but the owner signs in from their own address.
      const owner = await svc.req('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
      expect(owner.status, owner.text).to.equal(200);
    });
  });

  describe('image storage', () => {
    let svc: TestService;
    before(async () => (svc = await startTestService()));
    after(() => svc.stop());
    const blobs = () => readdirSync(join(svc.dataDir, 'blobs'));

    it('an agent stores at most 50 MB of images (413 past it, bytes not kept)', async () => {
      const { api_key: apiKey } = await svc.register();
      const five = png({ size: IMAGE_MAX_BYTES });
      for (let i = 0; i < IMAGE_QUOTA_BYTES / IMAGE_MAX_BYTES; i++) {
        const r = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(five) });
        expect(r.status, r.text).to.equal(200);
      }
      const count = blobs().length;
      const over = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(PNG) });
      expect(over.status, over.text).to.equal(413);
      expect(over.body.code).to.equal('image_quota_exceeded');
      expect(blobs().length).to.equal(count);
    });

    it('at most 30 uploads a day (429 with Retry-After); unreferenced images expire a day later, referenced ones stay', async () => {
      const { api_key: apiKey } = await svc.register();
      const ids: string[] = [];
      for (let i = 0; i < IMAGE_UPLOADS_PER_DAY; i++) {
        const r = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(PNG) });
        expect(r.status, r.text).to.equal(200);
        ids.push(r.body.image_id as string);
      }
      const capped = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(PNG) });
      expect(capped.status, capped.text).to.equal(429);
      expect(capped.body.code).to.equal('image_daily_cap');
      expect(capped.headers['retry-after']).to.equal(String(24 * 3600));
      const used = await svc.req('POST', '/api/feed/posts', {
        apiKey,
        body: { title: 'pic', body: `look ![image](${svc.url}/api/feed/images/${ids[0]})`, post_type: 'signal_found' },
      });
      expect(used.status, used.text).to.equal(200);

      svc.clock.advance(24 * 3600_000 + 1);
      const workers = svc.running.workers;
      if (!workers) throw new Error('workers are off');
      expect(await workers.expireImages()).to.be.at.least(IMAGE_UPLOADS_PER_DAY - 1);
      expect((await svc.req('GET', `/api/feed/images/${ids[0]}`)).status).to.equal(200);
      expect((await svc.req('GET', `/api/feed/images/${ids[1]}`)).status).to.equal(404);
      expect(blobs()).to.include(ids[0]);
      expect(blobs()).to.not.include(ids[1]);
      // A day later the cap has room again.
      expect((await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(PNG) })).status).to.equal(200);
    });
  });

  describe('an event too deep for v8.serialize (real processes)', () => {
    let dataDir: string;
    let server: ServerProcess | null = null;
    before(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'agent-network-poison-'));
    });
    after(async () => {
      if (server) await server.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('a stored event nested 4,000 levels deep does not stop the snapshot or the SQLite store: the next start restores it', async () => {
      // As an event accepted before the edge bounded depth: appended to the log directly.
      const log = await SqliteEventLog.open({ path: join(dataDir, 'events.sqlite'), synchronous: 'NORMAL' });
      const event = a2aMessageSent({ agent_id: ALICE, payload: nested(4000) });
      const metadata = { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: event.data.sent_at, schema_version: 1 };
      await log.append(`agent-${ALICE}`, [{ id: '00000000-0000-4000-8000-000000000001', type: event.type, data: event.data, metadata }], 'any');
      await log.close();

      // The snapshot is the in-memory read store's.
      server = await bootServerProcess(dataDir, { READ_STORE: 'memory' });
      expect((await request(server.url, 'GET', '/api/health')).status).to.equal(200);
      const stopped = server.stop('SIGTERM');
      expect(await stopped).to.equal(0);
      expect(server.line('read-model snapshot written'), 'the clean stop wrote the snapshot').to.not.equal(undefined);
      server = await bootServerProcess(dataDir, { READ_STORE: 'memory' });
      expect(server.line('read models restored from snapshot'), 'the start used it').to.not.equal(undefined);
      expect(await server.stop('SIGTERM')).to.equal(0);
      server = null;

      // The SQLite read store writes it to its tables (as JSON text, docs.ts), and a restart carries on from there.
      server = await bootServerProcess(dataDir, { READ_STORE: 'sqlite' });
      expect((await request(server.url, 'GET', '/api/health')).status).to.equal(200);
      expect(await server.stop('SIGTERM')).to.equal(0);
      server = await bootServerProcess(dataDir, { READ_STORE: 'sqlite' });
      const caughtUp = server.line('read models caught up');
      expect(caughtUp?.from, 'the restart replayed nothing').to.equal(caughtUp?.position);
      expect(await server.stop('SIGTERM')).to.equal(0);
      server = null;
    });
  });
});
