import { expect } from 'chai';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';

const BASE = 'https://net.example.com';
const post = (title: string) => ({ title, body: `About ${title} #links`, post_type: 'signal_found' });

/**
 * Every URL a response hands out that points at this service: absolute URLs on PUBLIC_BASE_URL
 * and service-relative paths ("/api/..."), from JSON values and from XML / HTML / text bodies.
 * Returned as paths (query kept, fragment dropped).
 */
function urlsIn(res: TestResponse): string[] {
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  if (typeof res.body === 'object' && res.body !== null) walk(res.body);
  else strings.push(res.text);
  const found: string[] = [];
  for (const s of strings) {
    for (const m of s.matchAll(/https?:\/\/[^\s"'<>()]+/g)) if (m[0].startsWith(`${BASE}/`)) found.push(m[0].slice(BASE.length));
    if (/^\/[A-Za-z._-]/.test(s) && !/\s/.test(s)) found.push(s);
    for (const m of s.matchAll(/\bhref="(\/[^"]*)"/g)) found.push(m[1]);
  }
  return found.map((u) => u.replace(/&amp;/g, '&').split('#')[0]);
}

describe('api: every URL the service hands out answers (defect 3)', function () {
  this.timeout(600_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox({ PUBLIC_BASE_URL: BASE })));
  after(() => stopWithOutbox(svc, outbox));

  it('a full agent walk-through: each URL in its responses is requested and none answers 404 or 5xx', async () => {
    const seen = new Map<string, string>();
    const responses: TestResponse[] = [];
    const call = async (method: string, path: string, opts: Parameters<TestService['req']>[2] = {}) => {
      const res = await svc.req(method, path, opts);
      responses.push(res);
      for (const url of urlsIn(res)) if (!seen.has(url)) seen.set(url, `${method} ${path}`);
      return res;
    };

    // Discovery and registration.
    await call('GET', '/api/');
    await call('GET', '/api/docs/version');
    await call('GET', '/api/protocol/tiers');
    const ownerEmail = 'links-owner@example.com';
    const regA = await call('POST', '/api/protocol/register', {
      body: { name: 'Link Walker', capabilities: ['lead-gen'], owner_name: 'O', owner_email: ownerEmail },
    });
    expect(regA.status, regA.text).to.equal(200);
    const a = { agent_id: regA.body.agent_id as string, api_key: regA.body.api_key as string };
    const { user, agent: b } = await signUpWithAgent(svc, outbox, { capabilities: ['lead-gen'] });
    const key = { apiKey: a.api_key };
    await call('GET', '/api/protocol/me', key);
    await call('GET', `/api/protocol/agents/${a.agent_id}`);

    // Lite claim of A (lifts the DM lock).
    await call('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/request-otp`);
    const [mail] = await waitForMails(outbox, ownerEmail);
    expect((await call('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/verify`, { body: { otp: codeIn(mail) } })).status).to.equal(200);
    await call('GET', '/api/auth/me', { headers: { authorization: `Bearer ${user.access_token}` } });

    // Content, messaging, webhooks, credits.
    const p = await call('POST', '/api/feed/posts', { ...key, body: post('Walk') });
    expect(p.status, p.text).to.equal(200);
    await call('POST', `/api/feed/posts/${p.body.post_id}/comments`, { apiKey: b.api_key, body: { content: 'Nice walk' } });
    await call('POST', `/api/feed/posts/${p.body.post_id}/react`, { apiKey: b.api_key, body: { reaction: 'like' } });
    await call('GET', `/api/feed/posts/${p.body.post_id}/comments`);
    await call('GET', '/api/feed/posts?limit=5');
    await call('GET', '/api/feed/topics');
    await call('GET', '/api/feed/topics/lead-gen');
    const dm = await call('POST', `/api/protocol/agents/${a.agent_id}/dm`, { ...key, body: { to_agent_id: b.agent_id, message: 'hello' } });
    expect(dm.status, dm.text).to.equal(200);
    await call('GET', `/api/protocol/agents/${b.agent_id}/inbox`, { apiKey: b.api_key });
    await call('GET', '/api/agent/notifications', key);
    await call('GET', `/api/protocol/agents/${a.agent_id}/webhook`, key);
    await call('GET', '/api/agent/webhooks/health', key);
    await call('GET', `/api/protocol/agents/${a.agent_id}/credits`, key);
    await call('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, key);
    await call('GET', `/api/agent/${a.agent_id}/passport`);

    // Crawlers.
    for (const path of ['/api/sitemap-index.xml', '/api/sitemap-agents.xml', '/api/sitemap-rooms.xml', '/api/sitemap-posts.xml'])
      expect((await call('GET', path)).status).to.equal(200);
    await call('GET', `/api/preview/bot/${a.agent_id}`);
    await call('GET', '/api/preview/room/lead-gen');
    await call('GET', `/api/preview/post/${p.body.post_id}`);
    await call('GET', `/claim/${a.agent_id}`);
    await call('GET', '/rooms/lead-gen');
    await call('GET', `/posts/${p.body.post_id}`);

    // 402: drain B's credits, then one write too many.
    let short: TestResponse | undefined;
    for (let i = 0; i < 600 && short?.status !== 402; i++) {
      const r = await svc.req('POST', '/api/feed/posts', { apiKey: b.api_key, body: post(`drain ${i}`) });
      if (r.status === 402) short = await call('POST', '/api/feed/posts', { apiKey: b.api_key, body: post('one too many') });
    }
    expect(short?.status).to.equal(402);

    // The classes of links that used to be dead are among those checked.
    const urls = [...seen.keys()];
    expect(urls.length).to.be.greaterThan(15);
    expect(urls).to.include(`/api/protocol/agents/${b.agent_id}/credits`);
    // The site's pages: profile_url, the posts' and rooms' url, the sitemaps' locations.
    expect(urls).to.include(`/posts/${p.body.post_id}`);
    expect(urls).to.include('/rooms/lead-gen');
    // The registration's claim_url: the claim page, and the agent page it links to.
    expect(urls).to.include(`/claim/${a.agent_id}`);
    expect(urls).to.include(`/agents/${a.agent_id}`);

    const dead: string[] = [];
    for (const [url, from] of seen) {
      const res = await svc.req('GET', url, key);
      if (res.status === 404 || res.status >= 500) dead.push(`${res.status} ${url} (handed out by ${from})`);
    }
    expect(dead).to.deep.equal([]);
  });
});
