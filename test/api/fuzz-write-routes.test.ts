import { expect } from 'chai';
import { defined } from '../helpers/defined.ts';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { bootServerProcess, projectRoot } from '../helpers/process.ts';
import type { ServerProcess } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';

/** Every write route of docs/ROUTES.md (kept current by routes-doc.test.ts). */
function writeRoutes(): Array<{ method: string; path: string }> {
  const text = readFileSync(join(projectRoot, 'docs/ROUTES.md'), 'utf8');
  return [...text.matchAll(/^\| (POST|PUT|PATCH|DELETE) \| `([^`]+)` \|/gm)].map((m) => ({ method: m[1], path: m[2] }));
}

/** Field names the write routes read (a body gets some of them, with any value). */
const FIELDS = [
  'name',
  'title',
  'body',
  'content',
  'description',
  'capabilities',
  'to_agent_id',
  'intent',
  'payload',
  'sign',
  'message',
  'reason',
  'otp',
  'code',
  'email',
  'password',
  'new_password',
  'full_name',
  'owner_name',
  'owner_email',
  'claim_token',
  'refresh_token',
  'webhook_url',
  'signature_scheme',
  'post_type',
  'option_index',
  'hashtags',
  'room_slug',
  'poll',
  'options',
  'publish_at',
  'parameters',
  'action_type',
  'participant_agent_ids',
  'thread_id',
  'reaction',
  'emoji',
  'enabled',
  'limit',
  'auto_post_on_scout',
  'auto_post_on_mixer',
  'agent_id',
  'match_id',
  'text',
  'intent_type',
  'query',
  '__proto__x',
];

const UNICODE_EDGE = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udc00x',
  'x\ud83d',
  '\u202e',
  '\u2066rtl\u2069',
  '\u200f',
  '\ufeff',
  'e\u0301',
  '\u0301',
  '\uffff',
  '\ufffe',
  '😀'.repeat(40),
  'Ǆ'.repeat(300),
  '\u{10ffff}',
  '\r\n\t',
  '<script>alert(1)</script>',
  '${x}',
  '%00',
  '../../etc/passwd',
  'null',
  '',
  ' ',
  'a'.repeat(10_001),
];

/**
 * A value nested `depth` levels deep stands in the generated body as a marker string, replaced by
 * its JSON text when the request is sent (so fast-check never walks or prints the deep value).
 */
const DEEP = '\u0001DEEP:';
function deepText(depth: number): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    open.push(i % 2 ? '[' : '{"a":');
    close.push(i % 2 ? ']' : '}');
  }
  return `${open.join('')}"leaf"${close.reverse().join('')}`;
}
const bodyText = (v: unknown): string => (JSON.stringify(v) ?? 'null').replace(/"\\u0001DEEP:(\d+)"/g, (_, n: string) => deepText(Number(n)));

const scalar = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.constantFrom(...UNICODE_EDGE),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 0.5),
  fc.boolean(),
  fc.constant(null),
);

/** Nested, huge, unicode-edge and type-swapped values. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: scalar },
  { weight: 2, arbitrary: fc.array(scalar, { maxLength: 8 }) },
  { weight: 2, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 6 }) },
  { weight: 2, arbitrary: fc.integer({ min: 2, max: 5000 }).map((n) => `${DEEP}${n}`) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 80_000 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 4 }) },
);

const body: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 8 }) },
  { weight: 1, arbitrary: value },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 6 }) },
  // The free-form fields at the depths that once broke the serialisers (about 4,000 levels).
  {
    weight: 1,
    arbitrary: fc.record({
      to_agent_id: fc.constantFrom('AGENT_B', 'agt_none'),
      intent: fc.constantFrom('intro_request', 'x'),
      payload: fc.integer({ min: 3_000, max: 9_000 }).map((n) => ({ deep: `${DEEP}${n}` })),
      parameters: fc.integer({ min: 3_000, max: 9_000 }).map((n) => `${DEEP}${n}`),
      sign: fc.boolean(),
    }),
  },
);

describe('fuzz: every write route, with nested, huge, unicode-edge and type-swapped bodies (real process)', function () {
  this.timeout(300_000);
  let dataDir: string;
  let outbox: string;
  let server: ServerProcess | null = null;
  after(async () => {
    if (server) await server.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outbox, { recursive: true, force: true });
  });

  it('answers no 5xx in 5,000 requests; then a clean stop commits the read models and the next start replays nothing', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-fuzz-'));
    outbox = mkdtempSync(join(tmpdir(), 'agent-network-fuzz-outbox-'));
    server = await bootServerProcess(dataDir, { MAIL_OUTBOX_DIR: outbox });
    const url = server.url;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

    // A world to aim at: two agents, a post with a comment, a signed-in user.
    const register = async (n: number) => {
      const r = await request(url, 'POST', '/api/protocol/register', {
        body: { name: `Fuzz ${n}`, capabilities: ['lead-gen'], owner_name: 'O', owner_email: `fuzz${n}.${process.pid}@example.com` },
      });
      expect(r.status, r.text).to.equal(200);
      return r.body as { agent_id: string; api_key: string; claim_token: string };
    };
    const a = await register(1);
    const b = await register(2);
    const keys = { a: a.api_key };
    const post = await request(url, 'POST', '/api/feed/posts', { apiKey: keys.a, body: { title: 'target', body: 'a #post', post_type: 'signal_found' } });
    expect(post.status, post.text).to.equal(200);
    const postId = post.body.post_id as string;
    const comment = await request(url, 'POST', `/api/feed/posts/${postId}/comments`, { apiKey: keys.a, body: { content: 'a comment' } });
    const commentId = (comment.body.comment_id as string | undefined) ?? 'cmt_none';
    const email = `fuzz-user.${process.pid}@example.com`;
    expect((await request(url, 'POST', '/api/auth/send-verification-otp', { body: { email } })).status).to.equal(200);
    const [mail] = await waitForMails(outbox, email);
    const signed = await request(url, 'POST', '/api/auth/verify-email-otp', {
      body: { email, otp: codeIn(mail), password: 'fuzz-password-1', full_name: 'Fuzz' },
    });
    expect(signed.status, signed.text).to.equal(200);
    const bearer = signed.body.access_token as string;

    const ids: Record<string, string[]> = {
      id: [b.agent_id, a.agent_id, postId],
      agent_id: [b.agent_id],
      post_id: [postId],
      comment_id: [commentId],
      thread_id: ['thr_none'],
      slug: ['lead-gen'],
      message_id: ['msg_none'],
      digest_id: ['dig_none'],
    };
    const routes = writeRoutes();
    expect(routes.length).to.be.greaterThan(40);
    const param = (name: string) =>
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(ids[name] ?? ['x'])) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) });
    const call = fc.record({
      route: fc.constantFrom(...routes),
      params: fc.record(Object.fromEntries(Object.keys(ids).map((k) => [k, param(k)]))),
      auth: fc.constantFrom('key', 'key', 'bearer', 'none'),
      body,
      raw: fc.option(fc.constantFrom('[', '{"a":', '{"a":1}x', '"str"', '\u0000', `${'['.repeat(20_000)}${']'.repeat(20_000)}`, deepText(3000)), { freq: 10 }),
    });

    let sent = 0;
    const statuses = new Map<number, number>();
    type Call = { route: { method: string; path: string }; params: Record<string, string>; auth: string; body: unknown; raw: string | null };
    const send = async (c: Call) => {
      const path = c.route.path.replace(/:(\w+)/g, (_: string, name: string) => encodeURIComponent(c.params[name] ?? 'x'));
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (c.auth === 'bearer') headers.authorization = `Bearer ${bearer}`;
      const text = (c.raw ?? bodyText(c.body)).replace('"AGENT_B"', JSON.stringify(b.agent_id));
      const r = await request(url, c.route.method, path, { rawBody: text, headers, apiKey: c.auth === 'key' ? keys.a : undefined, agent });
      sent++;
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      // A key rotated by the fuzzer is followed, so later requests stay authenticated.
      if (r.status === 200 && typeof r.body?.api_key === 'string' && c.auth === 'key') keys.a = r.body.api_key as string;
      return r;
    };

    const BATCH = 5;
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const answers = await Promise.all(batch.map(send));
        for (const [i, r] of answers.entries()) {
          expect(r.status, `${batch[i].route.method} ${batch[i].route.path}: ${r.text.slice(0, 300)}`).to.be.below(500);
        }
      }),
      { numRuns: 1000, seed: Number(process.env.FUZZ_SEED ?? 22), endOnFailure: true },
    );
    expect(sent).to.be.at.least(5000);
    // The service answered every route in more than one way (not 5,000 times the same refusal).
    expect(statuses.size).to.be.greaterThan(5);

    const before = defined(server.line('read models caught up'), "the line 'read models caught up'");
    expect(await server.stop('SIGTERM')).to.equal(0);
    server = await bootServerProcess(dataDir, { MAIL_OUTBOX_DIR: outbox });
    const after = defined(server.line('read models caught up'), "the line 'read models caught up'");
    expect(after).to.include({ store: 'sqlite' });
    expect(after.position).to.be.greaterThan(before.position as number);
    expect(after.from, 'the start found every event of the last run committed').to.equal(after.position);
    const feed = await request(server.url, 'GET', '/api/feed/posts?limit=5');
    expect(feed.status).to.equal(200);
    expect(await server.stop('SIGTERM')).to.equal(0);
    server = null;
    agent.destroy();
  });
});
