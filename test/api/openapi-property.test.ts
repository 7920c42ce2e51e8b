import { expect } from 'chai';
import fc from 'fast-check';
import http from 'node:http';
import { allOperations } from '../../api/app.ts';
import { pathParams } from '../../api/operations.ts';
import { creditHistoryAfter } from '../../commands/credits/history.ts';
import { COSTS } from '../../commands/credits/tiers.ts';
import { getAgent } from '../../queries/agents/agents.ts';
import { checkAnswer } from '../helpers/documented.ts';
import { rawRequest, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';

type Schema = Record<string, unknown>;
type Json = unknown;

/** Requests per operation: 32 x ~160 operations > 5,000. */
const RUNS = 32;

/** A value that meets `schema` most of the time (the simple JSON Schema subset the routes use). */
function valid(schema: Schema | undefined): fc.Arbitrary<Json> {
  if (!schema) return fc.constant({});
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map(valid));
  if (Array.isArray(schema.oneOf)) return fc.oneof(...(schema.oneOf as Schema[]).map(valid));
  const type = schema.type;
  if (Array.isArray(type)) return fc.oneof(...(type as string[]).map((t) => valid({ ...schema, type: t })));
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : 0;
      const max = typeof schema.maximum === 'number' ? schema.maximum : min + 100;
      return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    }
    case 'string': {
      if (schema.format === 'email') return fc.constantFrom('prop@example.com', 'someone@example.org');
      if (schema.format === 'date-time') return fc.constantFrom('2026-03-11T10:00:00.000Z', '2026-03-10T10:00:00.000Z');
      if (schema.format === 'uri' || String(schema.pattern ?? '').includes('http')) return fc.constantFrom('https://example.com/hook', 'http://127.0.0.1/x');
      const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
      const maxLength = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 40, minLength + 40);
      return fc.string({ minLength, maxLength });
    }
    case 'array': {
      const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const maxLength = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 3, minLength + 3);
      return fc.array(valid(schema.items as Schema | undefined), { minLength, maxLength });
    }
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valid(v)]));
      return fc.record(model, { requiredKeys: ((schema.required as string[] | undefined) ?? []).filter((k) => k in props) });
    }
    default:
      return fc.jsonValue();
  }
}

/** A body that is usually wrong: any JSON, the valid shape with a field of the wrong type or an extra one. */
function invalid(schema: Schema | undefined): fc.Arbitrary<Json> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    valid(schema).map((v) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, unexpected_field: 1 } : v)),
    valid(schema).chain((v) =>
      v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length
        ? fc.constantFrom(...Object.keys(v)).chain((k) => fc.jsonValue({ maxDepth: 1 }).map((x) => ({ ...v, [k]: x })))
        : fc.constant(v),
    ),
  );
}

interface Caller {
  name: string;
  headers: Record<string, string>;
  /** The agent charged for this caller's writes. */
  agentId: string | null;
}

describe('api: 5,000+ requests generated from the OpenAPI document', function () {
  this.timeout(600_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  it('enforces the auth each operation declares: none without credentials is not 401, K refuses a bearer, J refuses a key', async () => {
    const a = await svc.register();
    const { user } = await signUpWithAgent(svc, outbox);
    const wrong: string[] = [];
    for (const op of allOperations()) {
      if (op.method === 'DELETE' && op.path === '/api/protocol/me') continue;
      const path = op.path.replace(/:(\w+)/g, a.agent_id);
      const send = (headers: Record<string, string>) => rawRequest(svc.url, op.method, path, { headers, ...(op.method === 'GET' ? {} : { body: {} }) });
      const anonymous = await send({});
      // Two post routes validate the body before the caller: an empty body answers 422 first.
      // A console page sends an anonymous browser to its sign-in page (302) instead.
      const refused = anonymous.status === 401 || (anonymous.status === 302 && op.responses?.[302] !== undefined);
      if (op.auth === 'none' ? anonymous.status === 401 : !refused && !(op.body && anonymous.status === 422))
        wrong.push(`${op.method} ${op.path} declared ${op.auth}, anonymous got ${anonymous.status}`);
      if (op.auth === 'key') {
        const bearer = await send({ authorization: `Bearer ${user.access_token}` });
        if (bearer.status !== 401) wrong.push(`${op.method} ${op.path} declared key, a bearer got ${bearer.status}`);
      }
      if (op.auth === 'bearer' || op.auth === 'admin') {
        const key = await send({ 'x-api-key': a.api_key });
        if (key.status !== 401 && key.status !== 403 && !(key.status === 302 && op.responses?.[302] !== undefined))
          wrong.push(`${op.method} ${op.path} declared ${op.auth}, a key got ${key.status}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('never answers 5xx, answers each with a documented status and schema, and conserves credits', async () => {
    const doc = (await svc.req('GET', '/api/docs/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const ops = allOperations();
    // The generator covers exactly the documented operations.
    expect(ops.length).to.equal(Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0));

    const a = await svc.register({ capabilities: ['lead-gen', 'sales'] });
    const b = await svc.register({ capabilities: ['design'] });
    const { user, agent: c } = await signUpWithAgent(svc, outbox, { capabilities: ['lead-gen'] });
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: a.api_key,
      body: { title: 'Seed', body: 'A seed post #lead-gen', post_type: 'signal_found' },
    });
    expect(post.status, post.text).to.equal(200);
    const comment = await svc.req('POST', `/api/feed/posts/${post.body.post_id as string}/comments`, { apiKey: b.api_key, body: { content: 'seed comment' } });
    const callers: Caller[] = [
      { name: 'none', headers: {}, agentId: null },
      { name: 'A', headers: { 'x-api-key': a.api_key }, agentId: a.agent_id },
      { name: 'B', headers: { 'x-api-key': b.api_key }, agentId: b.agent_id },
      { name: 'user of C', headers: { authorization: `Bearer ${user.access_token}` }, agentId: c.agent_id },
      { name: 'bad key', headers: { 'x-api-key': 'ak_not_a_key' }, agentId: null },
      { name: 'bad bearer', headers: { authorization: 'Bearer nope' }, agentId: null },
      { name: 'malformed authorization', headers: { authorization: 'Basic x' }, agentId: null },
    ];
    // Every problem (operation, status) once, with one example.
    const problems = new Map<string, string>();
    // Leaving (DELETE /api/protocol/me) is tried by a fourth agent only, so A, B and C keep acting.
    const d = await svc.register({ capabilities: ['design'] });
    const leavers: Caller[] = [callers[0], { name: 'D', headers: { 'x-api-key': d.api_key }, agentId: d.agent_id }, ...callers.slice(4)];
    const ids = [
      a.agent_id,
      b.agent_id,
      c.agent_id,
      post.body.post_id as string,
      comment.body.comment_id as string,
      user.user_id,
      'lead-gen',
      'general',
      'nope',
      '0',
    ];
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

    // The seed post and comment are charged too.
    const charged = new Map<string, number>([
      [a.agent_id, COSTS.post],
      [b.agent_id, comment.status === 200 ? COSTS.comment : 0],
    ]);
    let sent = 0;
    const statuses = new Map<number, number>();

    for (const op of ops) {
      const params = pathParams(op.path);
      const queryNames = Object.keys(((op.query as { properties?: Record<string, Schema> } | undefined)?.properties ?? {}) as object);
      const arb = fc.record({
        caller:
          op.method === 'DELETE' && op.path === '/api/protocol/me'
            ? fc.constantFrom(...leavers)
            : fc.oneof(...callers.map((c, i) => ({ weight: [1, 3, 2, 3, 1, 1, 1][i], arbitrary: fc.constant(c) }))),
        params: fc.tuple(...params.map(() => fc.oneof(fc.constantFrom(...ids), fc.stringMatching(/^[\w~-]{1,12}$/)))),
        query: fc.dictionary(
          fc.constantFrom(...(queryNames.length ? queryNames : ['limit'])),
          fc.oneof(fc.constantFrom('0', '1', '5', '50', '101', '-1', 'x'), fc.stringMatching(/^[\w.-]{0,8}$/)),
          { maxKeys: 2 },
        ),
        body: op.method === 'GET' ? fc.constant(undefined) : fc.oneof({ weight: 3, arbitrary: valid(op.body) }, { weight: 2, arbitrary: invalid(op.body) }),
        raw: fc.oneof({ weight: 9, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('{"unterminated": ', '[1,2', 'null', '"text"') }),
        contentType: fc.oneof(
          { weight: 9, arbitrary: fc.constant('application/json') },
          { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded') },
        ),
        requestId: fc.option(fc.stringMatching(/^[\w.-]{1,20}$/), { nil: undefined }),
        idempotencyKey: fc.option(fc.uuid(), { nil: undefined, freq: 4 }),
      });
      await fc.assert(
        fc.asyncProperty(arb, async (r) => {
          let i = 0;
          const path = op.path.replace(/:(\w+)/g, () => encodeURIComponent(r.params[i++]));
          const qs = new URLSearchParams(r.query).toString();
          const url = qs ? `${path}?${qs}` : path;
          const headers: Record<string, string> = { ...r.caller.headers };
          if (r.requestId) headers['x-request-id'] = r.requestId;
          if (r.idempotencyKey && op.method !== 'GET') headers['idempotency-key'] = r.idempotencyKey;
          const hasBody = op.method !== 'GET' && (r.body !== undefined || r.raw !== null);
          if (hasBody) headers['content-type'] = r.contentType;
          const res = await rawRequest(svc.url, op.method, url, {
            headers,
            agent: keepAlive,
            ...(hasBody ? (r.raw !== null ? { rawBody: r.raw } : { rawBody: JSON.stringify(r.body) }) : {}),
          });
          sent++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status >= 500)
            problems.set(`${op.method} ${op.path} ${res.status}`, `${op.method} ${url} as ${r.caller.name}: ${res.status} ${res.text.slice(0, 200)}`);
          const problem = checkAnswer(op, `${op.method} ${url}`, res.status, String(res.headers['content-type'] ?? ''), res.body);
          if (problem) problems.set(`${op.method} ${op.path} ${res.status} ${problem.slice(0, 60)}`, `as ${r.caller.name}: ${problem}`);
          if (op.cost && res.status >= 200 && res.status < 300 && r.caller.agentId && !res.headers['idempotent-replayed']) {
            charged.set(r.caller.agentId, (charged.get(r.caller.agentId) ?? 0) + COSTS[op.cost]);
          }
          return true;
        }),
        { numRuns: RUNS, seed: 190_019 },
      );
    }
    keepAlive.destroy();
    if (process.env.SHOW_PROBLEMS) console.error(JSON.stringify([...problems.values()], null, 1));
    expect([...problems.values()]).to.deep.equal([]);
    expect(sent).to.be.at.least(5000);

    // Credits are conserved: each agent's balance is its grants minus its debits plus its refunds
    // in the log, and the debits are exactly the costs of the charged requests that succeeded.
    // Read from the log and the read model directly: keys may have been rotated by the requests.
    const { log, store } = svc.running.services;
    for (const who of [a, b, c, d]) {
      let position = 0;
      let credits = 0;
      let debits = 0;
      for (;;) {
        const page = await creditHistoryAfter(log, who.agent_id, position, 500);
        for (const t of page.transactions) {
          if (t.type === 'debit') debits += Math.abs(t.amount_mc);
          else credits += Math.abs(t.amount_mc);
        }
        if (!page.has_more || !page.transactions.length) break;
        position = (page.transactions.at(-1) as { position: number }).position;
      }
      const agent = await getAgent(store, who.agent_id);
      expect(credits - debits, `balance of ${who.agent_id}`).to.equal(agent?.balance_mc);
      expect(debits, `debits of ${who.agent_id}`).to.equal(charged.get(who.agent_id) ?? 0);
    }
    console.log(`      ${sent} requests over ${ops.length} operations; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});
