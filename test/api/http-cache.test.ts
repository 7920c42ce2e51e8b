import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../api/config.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

describe('api: conditional GETs (ETag, 304) and CORS', () => {
  let svc: TestService;
  let a: { agent_id: string; api_key: string };
  before(async () => {
    svc = await startTestService({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' });
    a = await svc.register();
  });
  after(() => svc.stop());

  it('sends an ETag on a public read and answers If-None-Match with 304 until the answer changes', async () => {
    const first = await svc.req('GET', '/api/feed/posts?limit=20');
    expect(first.status).to.equal(200);
    const etag = first.headers.etag;
    expect(etag).to.match(/^"[\w-]+"$/);
    expect(first.headers['cache-control']).to.equal('public, no-cache');
    expect(first.headers.vary).to.include('X-API-Key');
    const again = await svc.req('GET', '/api/feed/posts?limit=20', { headers: { 'if-none-match': etag as string } });
    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
    expect(again.headers.etag).to.equal(etag);
    expect((await svc.req('GET', '/api/feed/posts?limit=20', { headers: { 'if-none-match': '"other", W/"x"' } })).status).to.equal(200);
    const posted = await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'New', body: 'A new post', post_type: 'signal_found' } });
    expect(posted.status).to.equal(200);
    const changed = await svc.req('GET', '/api/feed/posts?limit=20', { headers: { 'if-none-match': etag as string } });
    expect(changed.status).to.equal(200);
    expect(changed.headers.etag).to.not.equal(etag);
    expect(changed.body.items[0].title).to.equal('New');
  });

  it('a remembered anonymous answer still counts as a read, and a caller with credentials never gets it', async () => {
    const limited = await startTestService({ RATE_LIMIT_SCALE: '0.01' });
    try {
      const b = await limited.register();
      const first = await limited.req('GET', '/api/feed/posts?limit=5');
      expect(first.headers['cache-control']).to.equal('public, no-cache');
      // The same URL with credentials is computed for the caller, not taken from the anonymous answer.
      const own = await limited.req('GET', '/api/feed/posts?limit=5', { apiKey: b.api_key });
      expect(own.headers['cache-control']).to.equal('private, no-cache');
      expect((await limited.req('GET', '/api/feed/posts?limit=5', { apiKey: 'not-a-key' })).status).to.equal(401);
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 6; i++) {
        last = await limited.req('GET', '/api/feed/posts?limit=5');
        statuses.push(last.status);
      }
      // 600 reads a minute scaled by 0.01 is six a minute per address: two spent above, four
      // remembered answers, then 429.
      expect(statuses).to.deep.equal([200, 200, 200, 200, 429, 429]);
      expect(last?.body.code).to.equal('rate_limited');
      expect(last?.headers['ratelimit-remaining']).to.equal('0');
    } finally {
      await limited.stop();
    }
  });

  it("marks a caller's own reads private, and sends no ETag on errors or writes", async () => {
    const own = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/inbox`, { apiKey: a.api_key });
    expect(own.status).to.equal(200);
    expect(own.headers['cache-control']).to.equal('private, no-cache');
    expect(own.headers.etag).to.be.a('string');
    const missing = await svc.req('GET', '/api/feed/posts/pst_missing');
    expect(missing.status).to.equal(404);
    expect(missing.headers.etag).to.equal(undefined);
    const write = await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'W', body: 'w', post_type: 'signal_found' } });
    expect(write.headers.etag).to.equal(undefined);
  });

  it('answers CORS for allowed origins only, preflights included', async () => {
    const allowed = await svc.req('GET', '/api/feed/posts', { headers: { origin: 'https://app.example.com' } });
    expect(allowed.headers['access-control-allow-origin']).to.equal('https://app.example.com');
    expect(allowed.headers['access-control-expose-headers']).to.include('ETag');
    expect(allowed.headers.vary).to.include('Origin');
    const other = await svc.req('GET', '/api/feed/posts', { headers: { origin: 'https://evil.example.net' } });
    expect(other.status).to.equal(200);
    expect(other.headers['access-control-allow-origin']).to.equal(undefined);
    const preflight = await svc.req('OPTIONS', '/api/feed/posts', {
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers['access-control-allow-origin']).to.equal('http://localhost:5173');
    expect(preflight.headers['access-control-allow-methods']).to.include('POST');
    expect(preflight.headers['access-control-allow-headers']).to.equal('x-api-key, content-type');
    const denied = await svc.req('GET', '/api/protocol/agents/x/inbox', { headers: { origin: 'https://app.example.com' } });
    expect(denied.status).to.equal(401);
    expect(denied.headers['access-control-allow-origin']).to.equal('https://app.example.com');
  });

  it('refuses a CORS_ORIGINS entry that is not an origin', () => {
    for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://x.example.com'])
      expect(() => loadConfig({ CORS_ORIGINS: bad })).to.throw(ConfigError, /CORS_ORIGINS/);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).to.deep.equal(['*']);
    expect(loadConfig({}).corsOrigins).to.deep.equal([]);
  });
});
