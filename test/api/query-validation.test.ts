import { WebSession } from '../helpers/web.ts';
import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { allOperations } from '../../api/app.ts';
import { mount, operationId, operations } from '../../api/operations.ts';
import type { Operation } from '../../api/operations.ts';
import { ValidationFailed } from '../../events/kernel/errors.ts';
import { ROOT_EMAIL, bearer, communityWith } from '../helpers/communities.ts';
import type { TestService } from '../helpers/service.ts';
import { request, startTestService, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';

type Agent = { agent_id: string; api_key: string };
type FieldError = { loc: Array<string | number>; msg: string; type: string };

/** Query strings are validated against each operation's `query` schema (api/operations.ts `mount`). */
describe('api: query-string validation from the route table', function () {
  this.timeout(120_000);
  let svc: TestService;
  let a: Agent;
  const fieldErrors = (body: unknown) => (body as { detail: FieldError[] }).detail;

  before(async () => {
    svc = await startTestService();
    a = await svc.register();
  });
  after(() => svc.stop());

  it('refuses a non-integer page size with 422 naming the parameter', async () => {
    const r = await svc.req('GET', '/api/agent/blocks?limit=ten', { apiKey: a.api_key });
    expect(r.status).to.equal(422);
    expect(r.body.code).to.equal('validation_failed');
    expect(fieldErrors(r.body)).to.deep.include({ loc: ['query', 'limit'], msg: 'value is not a valid integer', type: 'type_error.integer' });
  });

  it('refuses a repeated scalar parameter (an array) with 422', async () => {
    const r = await svc.req('GET', '/api/protocol/agents?limit=1&limit=2');
    expect(r.status).to.equal(422);
    expect(fieldErrors(r.body).map((e) => e.loc)).to.deep.include(['query', 'limit']);
  });

  it('takes one repeated-once value and unknown parameters as they are', async () => {
    const r = await svc.req('GET', '/api/protocol/agents?limit=1&utm_source=newsletter');
    expect(r.status).to.equal(200);
    expect(r.body.limit).to.equal(1);
  });

  it('refuses a value outside an enum with 422 listing the allowed values', async () => {
    const r = await svc.req('GET', '/api/agent/marketplace?category=astrology', { apiKey: a.api_key });
    expect(r.status).to.equal(422);
    const e = fieldErrors(r.body).find((x) => x.loc[1] === 'category');
    expect(e?.type).to.equal('type_error.enum');
    expect(e?.msg).to.contain('engineering');
  });

  it('takes an empty value where the handler takes it as the default, and lists it as "or empty" in a refusal', async () => {
    const empty = [
      '/api/members?industry=',
      '/api/agent/bonds?status=',
      '/api/mesh/signals?type=&post_type=',
      '/api/agent/notifications?unread_only=',
      '/api/agent/pulse?days=',
    ];
    for (const path of empty) {
      const r = await svc.req('GET', path, { apiKey: a.api_key });
      expect(r.status, `${path}: ${r.text}`).to.equal(200);
    }
    const r = await svc.req('GET', '/api/agent/bonds?status=pending', { apiKey: a.api_key });
    expect(r.status).to.equal(422);
    expect(fieldErrors(r.body)).to.deep.include({
      loc: ['query', 'status'],
      msg: 'value must be one of: active, incoming, outgoing (or empty)',
      type: 'type_error.enum',
    });
  });

  it('refuses a malformed time with 422 (format)', async () => {
    const r = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/statement?from=yesterday`, { apiKey: a.api_key });
    expect(r.status).to.equal(422);
    expect(fieldErrors(r.body)).to.deep.include({ loc: ['query', 'from'], msg: 'value is not a valid date-time', type: 'value_error.date-time' });
  });

  it('checks the credential before the query: no key is 401, not 422', async () => {
    const r = await svc.req('GET', '/api/agent/blocks?limit=ten');
    expect(r.status).to.equal(401);
    expect(r.body.code).to.equal('unauthorized');
  });

  it('keeps 400 invalid_cursor for a cursor the service did not hand out', async () => {
    const r = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history?after=not-a-cursor`, { apiKey: a.api_key });
    expect(r.status).to.equal(400);
    expect(r.body.code).to.equal('invalid_cursor');
  });
});

/**
 * Every GET operation whose query declares an integer (`contentSchema`) with a maximum: over HTTP,
 * with a caller and records that let the route answer, the maximum is taken, one past it and one
 * below the minimum are 422 naming the parameter. A bound the document states is one the route enforces.
 */
describe('api: the integer bounds of the route table are the bounds the routes enforce', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  type Bounded = { op: Operation; name: string; minimum: number; maximum: number };

  /** Operations whose declared bounds are not checked here, and why. */
  const NOT_CHECKED: Record<string, string> = {};

  const bounded = (): Bounded[] =>
    allOperations()
      .filter((op) => op.method === 'GET')
      .flatMap((op) =>
        Object.entries((op.query?.properties ?? {}) as Record<string, { contentSchema?: Record<string, unknown> }>)
          .filter(([, p]) => p.contentSchema?.type === 'integer' && typeof p.contentSchema.maximum === 'number')
          .map(([name, p]) => ({ op, name, minimum: p.contentSchema?.minimum as number, maximum: p.contentSchema?.maximum as number })),
      );

  before(async () => ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL })));
  after(() => stopWithOutbox(svc, outbox));

  it('each declared maximum is taken; maximum + 1 and minimum - 1 are 422 naming the parameter', async () => {
    // A super admin who owns an agent: every auth family, and records of its own for the path parameters.
    const { user, agent } = await signUpWithAgent(svc, outbox, {}, ROOT_EMAIL);
    const [b, c] = [await svc.register(), await svc.register()];
    const key = { apiKey: agent.api_key };
    const asUser = { headers: bearer(user.access_token) };
    const created = async (path: string, body: Record<string, unknown>, auth: { apiKey?: string; headers?: Record<string, string> }) => {
      const r = await svc.req('POST', path, { ...auth, body });
      expect(r.status, `${path}: ${r.text}`).to.be.oneOf([200, 201]);
      return r.body as Record<string, string>;
    };
    const post = await created('/api/feed/posts', { title: 'Bounds', body: 'Paged #bounds', post_type: 'activity_summary', room_slug: 'lead-gen' }, key);
    const thread = await created('/api/agent/group-dm', { participant_agent_ids: [b.agent_id, c.agent_id], name: 'Bounds', first_message: 'Hi both' }, key);
    const listing = await created(
      '/api/agent/marketplace',
      { title: 'Bounds', description: 'Paged', category: 'engineering', price: 10, pricing_type: 'fixed' },
      key,
    );
    const { circle_id } = await communityWith(svc, user, user);
    await created(`/api/brew-circles/${circle_id}/join`, {}, asUser);
    const circlePost = await created('/api/brew-circles/posts', { circle_id, content: 'Paged #bounds', intent: 'ask' }, asUser);

    const ids: Record<string, string> = {
      agent_id: agent.agent_id,
      id: agent.agent_id,
      post_id: post.post_id,
      slug: 'lead-gen',
      thread_id: thread.thread_id,
      intent_id: listing.intent_id,
      circle_id,
    };
    const pathOf = (op: Operation) =>
      op.path
        .replace(/^\/posts\/:id$/, `/posts/${post.post_id}`)
        .replace(/^\/api\/brew-circles\/posts\/:post_id/, `/api/brew-circles/posts/${circlePost.post_id}`)
        .replace(/:(\w+)/g, (_, p: string) => ids[p] ?? `:${p}`);

    // The member app's pages: signed in by the site's session; a refused value is the page's 422.
    const web = new WebSession(svc);
    await web.signIn(user.email, user.password);

    const checked = new Set<string>();
    for (const { op, name, minimum, maximum } of bounded()) {
      const id = operationId(op);
      if (NOT_CHECKED[id]) continue;
      const auth = op.auth === 'none' ? {} : op.auth === 'key' || op.auth === 'key_or_bearer' ? key : asUser;
      const get = (v: number) => (op.auth === 'member' ? web.get(`${pathOf(op)}?${name}=${v}`) : svc.req('GET', `${pathOf(op)}?${name}=${v}`, auth));
      const taken = await get(maximum);
      expect(taken.status, `${id}: ${name}=${maximum} ${taken.text.slice(0, 300)}`).to.equal(200);
      for (const v of [maximum + 1, minimum - 1]) {
        const r = await get(v);
        expect(r.status, `${id}: ${name}=${v} ${r.text.slice(0, 300)}`).to.equal(422);
        if (op.auth === 'member') continue;
        expect(
          (r.body.detail as Array<{ loc: unknown[] }>).map((e) => e.loc),
          `${id}: ${name}=${v}`,
        ).to.deep.include(['query', name]);
      }
      checked.add(id);
    }
    // Every bounded operation but the ones named above (about fifty: limit, page, skip and days).
    const all = new Set(bounded().map((x) => operationId(x.op)));
    expect([...checked].sort()).to.deep.equal([...all].filter((id) => !NOT_CHECKED[id]).sort());
    expect(checked.size).to.be.greaterThan(45);
  });
});

describe('mount: the query schema is checked when the handler reads the query', () => {
  const ops = operations({
    getThings: {
      method: 'GET',
      path: '/things',
      summary: 'Things',
      tags: ['test'],
      auth: 'key',
      query: {
        type: 'object',
        required: ['kind'],
        properties: { kind: { enum: ['a', 'b'] }, n: { type: 'integer', minimum: 1 }, limit: { type: 'string', pattern: '^\\d+$' } },
      },
    },
  });
  let server: ReturnType<Koa['listen']>;
  let base: string;
  const seen: Array<Record<string, unknown>> = [];

  before(async () => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (e) {
        if (!(e instanceof ValidationFailed)) throw e;
        ctx.status = 422;
        ctx.body = { detail: e.errors, code: e.code };
      }
    });
    const router = new Router();
    mount(router, ops.getThings, (ctx) => {
      if (!ctx.get('x-api-key')) {
        ctx.status = 401;
        ctx.body = { code: 'unauthorized' };
        return;
      }
      seen.push({ ...ctx.query });
      ctx.body = { ok: true };
    });
    app.use(router.routes());
    server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const get = (q: string, key = 'k') => request(base, 'GET', `/things${q}`, { headers: key ? { 'x-api-key': key } : {} });

  it('refuses a missing required parameter, a value outside the enum, a non-integer and a coerced number below its minimum', async () => {
    const cases: Array<[string, unknown]> = [
      ['', { loc: ['query', 'kind'], msg: 'field required', type: 'missing' }],
      ['?kind=c', { loc: ['query', 'kind'], msg: 'value must be one of: a, b', type: 'type_error.enum' }],
      ['?kind=a&limit=x', { loc: ['query', 'limit'], msg: 'value is not a valid integer', type: 'type_error.integer' }],
      ['?kind=a&n=zero', { loc: ['query', 'n'], msg: 'value must be of type integer', type: 'type_error.integer' }],
    ];
    for (const [q, error] of cases) {
      const r = await get(q);
      expect(r.status, q).to.equal(422);
      expect(r.body.detail, q).to.deep.include(error);
    }
    const low = await get('?kind=a&n=0');
    expect(low.status).to.equal(422);
    expect((low.body.detail as Array<{ loc: unknown[] }>)[0].loc).to.deep.equal(['query', 'n']);
  });

  it('passes a valid query (coerced for the check only: the handler still reads strings) and unknown parameters', async () => {
    const r = await get('?kind=b&n=3&extra=1');
    expect(r.status).to.equal(200);
    expect(seen.at(-1)).to.deep.equal({ kind: 'b', n: '3', extra: '1' });
  });

  it('leaves the refusal of a request without a credential to the handler (it reads the query after its check)', async () => {
    const r = await get('?kind=c', '');
    expect(r.status).to.equal(401);
  });
});
