import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { mount, operations } from '../../api/operations.ts';
import { ValidationFailed } from '../../events/kernel/errors.ts';
import type { TestService } from '../helpers/service.ts';
import { request, startTestService } from '../helpers/service.ts';

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
