import { expect } from 'chai';
import { ERROR_CODES, isErrorCode } from '../../events/kernel/error-codes.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';

/** The one envelope: code from the registry with its status, request_id = X-Request-Id. */
function expectEnvelope(res: TestResponse, status: number, code: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.code).to.equal(code);
  expect(isErrorCode(res.body.code)).to.equal(true);
  expect(ERROR_CODES[res.body.code as keyof typeof ERROR_CODES].status).to.equal(status);
  expect(res.body.request_id).to.be.a('string').and.not.equal('');
  expect(res.body.request_id).to.equal(res.headers['x-request-id']);
  expect(res.body).to.have.property('detail');
}

describe('API: one error envelope {detail, code, request_id}', function () {
  this.timeout(300_000);
  let svc: TestService;
  before(async () => (svc = await startTestService()));
  after(() => svc.stop());

  it('a route miss, a wrong method, a bad key, a missing key, bad JSON and a conflict all carry code and request_id', async () => {
    expectEnvelope(await svc.req('GET', '/api/no-such-route'), 404, 'route_not_found');
    expectEnvelope(await svc.req('DELETE', '/api/protocol/register'), 405, 'method_not_allowed');
    expectEnvelope(await svc.req('GET', '/api/protocol/me', { apiKey: 'ans_live_wrong' }), 401, 'unauthorized');
    expectEnvelope(await svc.req('GET', '/api/protocol/me'), 401, 'unauthorized');
    expectEnvelope(await svc.req('POST', '/api/protocol/register', { rawBody: '{"name": ' }), 400, 'invalid_json');
    expectEnvelope(await svc.req('POST', '/api/protocol/register', { rawBody: JSON.stringify({ name: 'x'.repeat(200_000) }) }), 413, 'payload_too_large');
    await svc.register({ owner_email: 'envelope-owner@example.com' });
    const dup = await svc.req('POST', '/api/protocol/register', {
      body: { name: 'Again', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'envelope-owner@example.com' },
    });
    expectEnvelope(dup, 409, 'owner_email_taken');
    expectEnvelope(await svc.req('GET', '/api/protocol/agents/agt_nobody'), 404, 'agent_not_found');
  });

  it('422 keeps detail as the list of field errors, with code validation_failed', async () => {
    const res = await svc.req('POST', '/api/protocol/register', { body: { name: '' } });
    expectEnvelope(res, 422, 'validation_failed');
    expect(res.body.detail).to.be.an('array').with.length.greaterThan(0);
    for (const d of res.body.detail) expect(d).to.have.keys('loc', 'msg', 'type');
  });

  it('request_id is the caller-given X-Request-Id when it is well-formed', async () => {
    const res = await svc.req('GET', '/api/no-such-route', { headers: { 'x-request-id': 'client-trace.42' } });
    expectEnvelope(res, 404, 'route_not_found');
    expect(res.body.request_id).to.equal('client-trace.42');
  });

  it('a 429 keeps its retry_after beside the envelope', async () => {
    const busy = await startTestService({ RATE_LIMIT_SCALE: '1' });
    try {
      let res: TestResponse | undefined;
      for (let i = 0; i < 200 && res?.status !== 429; i++)
        res = await busy.req('POST', '/api/auth/login', { body: { email: 'a@example.com', password: 'wrong-password' } });
      expect(res?.status).to.equal(429);
      if (!res) return;
      expectEnvelope(res, 429, res.body.code);
      expect(res.body.retry_after).to.be.a('number');
    } finally {
      await busy.stop();
    }
  });
});
