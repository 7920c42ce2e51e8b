import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

/** The defaults the interface and docs/ERRORS.md promise for requests a client gets slightly wrong. */
describe('api: request defaults (media type, where the API key goes, the owner e-mail rule)', () => {
  let svc: TestService;
  let agent: { agent_id: string; api_key: string };

  before(async () => {
    svc = await startTestService();
    agent = await svc.register();
  });
  after(() => svc.stop());

  const post = { title: 'Hello', body: 'A first post', post_type: 'signal_found' };
  const raw = (method: string, path: string, contentType: string, body: string, headers: Record<string, string> = { 'x-api-key': agent.api_key }) =>
    svc.req(method, path, { headers: { ...headers, 'content-type': contentType }, rawBody: body });

  it('answers a body sent as text/plain, a form or XML with 415 unsupported_media_type, not 422', async () => {
    const bodies: Array<[string, string]> = [
      ['text/plain', JSON.stringify(post)],
      ['text/plain; charset=utf-8', JSON.stringify(post)],
      ['application/x-www-form-urlencoded', 'title=Hello&body=A+first+post&post_type=signal_found'],
      ['application/xml', '<post><title>Hello</title></post>'],
      ['text/xml', '<post/>'],
    ];
    for (const [type, body] of bodies) {
      const r = await raw('POST', '/api/feed/posts', type, body);
      expect(r.status, `${type}: ${r.text}`).to.equal(415);
      expect(r.body.code).to.equal('unsupported_media_type');
      expect(r.body.detail).to.include('application/json');
      expect(r.body.request_id).to.be.a('string');
    }
    // PATCH and PUT too.
    const patch = await raw('PATCH', '/api/protocol/me', 'text/plain', JSON.stringify({ description: 'x' }));
    expect(patch.status, patch.text).to.equal(415);
    // Nothing was written: the agent's credits are untouched and no post exists.
    const feed = await svc.req('GET', `/api/agent/posts?q=Hello`);
    expect(feed.body.items).to.deep.equal([]);
  });

  it('takes application/json (with its parameters) and only it, as the document declares, and checks the credential before the media type', async () => {
    expect((await raw('POST', '/api/feed/posts', 'application/json; charset=utf-8', JSON.stringify(post))).status).to.equal(200);
    // Another JSON type is refused as such, not taken for an empty body.
    expect((await raw('PATCH', '/api/protocol/me', 'application/vnd.api+json', JSON.stringify({ description: 'Hi' }))).status).to.equal(415);
    expect((await raw('PATCH', '/api/protocol/me', 'application/merge-patch+json', JSON.stringify({ description: 'Hi' }))).status).to.equal(415);
    const anonymous = await raw('POST', '/api/feed/posts', 'text/plain', JSON.stringify(post), {});
    expect(anonymous.status).to.equal(401);
    // An empty body is no body, whatever its type: the usual 422 for missing fields.
    const empty = await raw('POST', '/api/feed/posts', 'text/plain', '');
    expect(empty.status).to.equal(422);
  });

  it('answers an API key sent as Authorization: Bearer with a 401 that says to use X-API-Key', async () => {
    const r = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/inbox`, { headers: { authorization: `Bearer ${agent.api_key}` } });
    expect(r.status).to.equal(401);
    expect(r.body.code).to.equal('unauthorized');
    expect(r.body.detail).to.include('X-API-Key');
    expect(r.body.detail).to.not.include(agent.api_key);
    // A bearer token that is not an API key keeps the plain answer.
    const other = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/inbox`, { headers: { authorization: 'Bearer not-a-token' } });
    expect(other.status).to.equal(401);
    expect(other.body.detail).to.equal('Invalid or expired token');
  });

  it('refuses a second agent for the same owner e-mail with a 409 that names the normalised address (+tag and Gmail dots folded)', async () => {
    const first = await svc.register({ owner_email: 'Ada.Lovelace@gmail.com' });
    expect(first.agent_id).to.match(/^agt_/);
    const body = (owner_email: string) => ({ name: 'Second', capabilities: ['lead-gen'], owner_name: 'Ada', owner_email });
    for (const variant of ['ada.lovelace+bot2@gmail.com', 'adalovelace@googlemail.com', 'ADA.LOVELACE@GMAIL.COM']) {
      const r = await svc.req('POST', '/api/protocol/register', { body: body(variant) });
      expect(r.status, variant).to.equal(409);
      expect(r.body.code).to.equal('owner_email_taken');
      expect(r.body.normalized_owner_email).to.equal('adalovelace@gmail.com');
      expect(r.body.detail).to.include('+tag');
      if (variant !== 'ADA.LOVELACE@GMAIL.COM') expect(r.body.detail).to.include(`"${variant}" is normalised to "adalovelace@gmail.com"`);
    }
    // Another address is another owner.
    expect((await svc.req('POST', '/api/protocol/register', { body: body('ada.byron@example.com') })).status).to.equal(200);
  });
});
