import { expect } from 'chai';
import { allOperations } from '../../api/app.ts';
import { communityPageOperations } from '../../api/routes/web/communities.ts';
import { accountOperations } from '../../api/routes/web/account.ts';
import { agentPageOperations } from '../../api/routes/web/agent.ts';
import { conversationOperations } from '../../api/routes/web/conversations.ts';
import { myAgentOperations } from '../../api/routes/web/my-agents.ts';
import { myProfileOperations } from '../../api/routes/web/my-profile.ts';
import { WebSession } from '../helpers/web.ts';
import { PAGE_POLICY, scriptHash } from '../../api/page-security.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import { ConsoleClient } from '../helpers/console.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { as, LISTING, listings } from './marketplace-helpers.ts';

const PASSWORD = 'framing password 1';

/** Every operation that answers HTML (a page), as `METHOD /path`. */
const htmlOperations = () =>
  allOperations()
    .filter((o) =>
      Object.values(o.responses ?? {}).some(
        (r) => r && (String(r.contentType ?? '').includes('html') || (r.alsoContentTypes ?? []).some((t: string) => t.includes('html'))),
      ),
    )
    .map((o) => `${o.method} ${o.path}`);

const directives = (csp: string) =>
  new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
      .map(([n, ...v]) => [n, v]),
  );

/** An HTML answer no other site may frame: X-Frame-Options DENY and a CSP with frame-ancestors 'none'. */
function unframeable(res: TestResponse, what: string): Map<string, string[]> {
  expect(res.headers['content-type'], `${what}: ${res.status} ${res.text.slice(0, 200)}`).to.match(/^text\/html/);
  expect(res.headers['x-frame-options'], what).to.equal('DENY');
  const csp = String(res.headers['content-security-policy'] ?? '');
  const d = directives(csp);
  expect(d.get('frame-ancestors'), `${what}: ${csp}`).to.deep.equal(["'none'"]);
  expect(d.get('default-src'), `${what}: ${csp}`).to.deep.equal(["'none'"]);
  return d;
}

describe('api: no page can be framed (CSP frame-ancestors and X-Frame-Options on every HTML answer)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
  });
  after(() => stopWithOutbox(svc, outbox));

  it('every page route, public and console, answers HTML that forbids framing; scripts run only on the pages that carry them, by hash', async () => {
    const root = await signUp(svc, outbox, ROOT_EMAIL, PASSWORD);
    const admin = await signUp(svc, outbox);
    const { circle_id, code } = await communityWith(svc, root, admin, [await signUp(svc, outbox)], 'Framed');
    await svc.req('PUT', `/api/admin/community-admin/circles/${circle_id}/visibility?visibility=public`, { headers: bearer(admin.access_token) });
    const agent = await svc.register({ name: 'Framed agent' });
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: agent.api_key,
      body: { title: 'Framed post', body: 'Body of the post', post_type: 'signal_found', room_slug: 'lead-gen' },
    });
    expect(post.status, post.text).to.equal(200);
    const owner = { agent_id: agent.agent_id, api_key: agent.api_key, token: '' };
    const listing = await svc.req('POST', listings('api_key'), as('api_key', owner, LISTING));
    expect(listing.status, listing.text).to.equal(201);
    const order = await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/upgrade`, { body: {} });
    expect(order.status, order.text).to.equal(200);
    const checkout = new URL(order.body.payment_url as string).pathname;

    const console_ = new ConsoleClient(svc);
    const login = await console_.get('/admin/login');
    unframeable(login, 'GET /admin/login');
    const signedIn = await console_.signIn(ROOT_EMAIL, PASSWORD);
    expect(signedIn.status).to.equal(303);

    // The public pages, each with a real object, and the browser's not-found page.
    const pages: Array<[route: string, path: string, status?: number]> = [
      ['GET /agents/:id', `/agents/${agent.agent_id}`],
      ['GET /claim/:id', `/claim/${agent.agent_id}`],
      ['GET /rooms/:slug', '/rooms/lead-gen'],
      ['GET /posts/:id', `/posts/${post.body.post_id}`],
      ['GET /posts/:id', '/posts/pst_missing', 404],
      ['GET /circles/:id', `/circles/${circle_id}`],
      ['GET /join/:code', `/join/${code}`],
      ['GET /marketplace/:intent_id', `/marketplace/${listing.body.intent_id}`],
      ['GET /', '/'],
      ['GET /rooms', '/rooms'],
      ['GET /marketplace', '/marketplace?category=engineering'],
      ['GET /partners', '/partners'],
      ['GET /pitch-deck', '/pitch-deck'],
      ['GET /signin', '/signin'],
      ['GET /api/credits/checkout/:order_id', checkout],
      ['GET /api/preview/bot/:id', `/api/preview/bot/${agent.agent_id}`],
      ['GET /api/preview/room/:id', '/api/preview/room/lead-gen'],
      ['GET /api/preview/post/:id', `/api/preview/post/${post.body.post_id}`],
    ];
    const seen = new Set<string>();
    const policies = new Map<string, Map<string, string[]>>();
    for (const [route, path, status = 200] of pages) {
      const res = await svc.req('GET', path, { headers: { accept: 'text/html' } });
      expect(res.status, `${path}: ${res.text.slice(0, 200)}`).to.equal(status);
      policies.set(path, unframeable(res, path));
      seen.add(route);
    }
    // The site's forms posted without their CSRF token (or signed out): the refusal is a page too.
    for (const route of ['POST /partners', 'POST /pitch-deck', 'POST /signin', 'POST /signout']) {
      const res = await svc.req('POST', route.slice(5), {
        headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=x',
      });
      expect(res.status, `${route}: ${res.text.slice(0, 200)}`).to.be.oneOf([401, 403]);
      policies.set(route, unframeable(res, route));
      seen.add(route);
    }
    const app = await svc.req('GET', '/app', { headers: { accept: 'text/html' } });
    expect(app.status, 'GET /app signed out goes to sign in').to.equal(302);
    seen.add('GET /app');
    // The console: every page it renders, and the answers of its forms when they render a page.
    const consolePages: Array<[route: string, path: string]> = [
      ['GET /admin', '/admin'],
      ['GET /admin/agents', '/admin/agents'],
      ['GET /admin/agents/:agent_id', `/admin/agents/${agent.agent_id}`],
      ['GET /admin/rooms', '/admin/rooms'],
      ['GET /admin/disputes', '/admin/disputes'],
      ['GET /admin/projections', '/admin/projections'],
      ['GET /admin/site', '/admin/site'],
      ['GET /admin/moderation', '/admin/moderation'],
      ['GET /admin/audit', '/admin/audit'],
    ];
    for (const [route, path] of consolePages) {
      let res = await console_.get(path);
      if (res.status === 302 || res.status === 303) res = await console_.get(String(res.headers.location));
      unframeable(res, path);
      seen.add(route);
    }
    seen.add('GET /admin/login');
    // A form posted without its CSRF token: the console's refusal is a page too.
    const forms = htmlOperations().filter((r) => r.startsWith('POST /admin'));
    for (const route of forms) {
      const path = route
        .slice(5)
        .replace(':agent_id', agent.agent_id)
        .replace(':slug', 'lead-gen')
        .replace(':contract_id', 'ctr_none')
        .replace(':name', 'agents')
        .replace(':kind', 'post')
        .replace(':id', 'pst_none');
      const res = await console_.post(path, {});
      if (String(res.headers['content-type']).startsWith('text/html')) unframeable(res, `POST ${path}`);
      else expect(res.status, `POST ${path}`).to.be.oneOf([302, 303, 401, 403, 404]);
      seen.add(route);
    }
    // The evidence bundle is JSON and the audit export CSV or JSON: downloads, not pages.
    const exported = await console_.get('/admin/audit/export?format=csv');
    expect(exported.status, exported.text.slice(0, 200)).to.equal(200);
    expect(String(exported.headers['content-type'])).to.match(/^text\/csv/);
    seen.add('GET /admin/audit/export');
    seen.add('GET /admin/disputes/:contract_id');
    seen.add('GET /admin/disputes/:contract_id/evidence.json');
    // The member app's pages, signed in: each GET (an id that does not exist gives the not-found
    // page), each form posted with a forged CSRF token (the refusal page).
    const member = new WebSession(svc);
    await member.signIn(ROOT_EMAIL, PASSWORD);
    for (const ops of [accountOperations, conversationOperations, agentPageOperations, myAgentOperations, myProfileOperations]) {
      for (const o of Object.values(ops)) {
        const route = `${o.method} ${o.path}`;
        if (seen.has(route)) continue;
        const path = o.path.replace(/:\w+/g, 'none') + (o.path === '/app/agent/confirm' ? '?action_type=search_agents' : '');
        const res = o.method === 'GET' ? await member.get(path, true) : await member.post(path, { _csrf: 'forged' }, true);
        if (String(res.headers['content-type']).startsWith('text/html')) unframeable(res, route);
        else expect(res.status, `${route}: ${res.text.slice(0, 200)}`).to.be.oneOf([302, 303]);
        seen.add(route);
      }
    }
    // The member app's community pages and forms: asked signed in by test/api/web-communities.test.ts.
    for (const o of Object.values(communityPageOperations)) seen.add(`${o.method} ${o.path}`);
    expect([...seen].sort(), 'every HTML route of the route table is asked here').to.include.members(htmlOperations());

    // Pages without script get the scriptless policy; the site's pages (the claim page among them) run
    // only the site's own files, never inline script or style; the checkout page runs its own script, by hash, and nothing else.
    expect(directives(PAGE_POLICY).get('script-src')).to.equal(undefined);
    for (const path of [`/agents/${agent.agent_id}`, `/claim/${agent.agent_id}`, '/', '/rooms', '/partners', '/pitch-deck']) {
      expect(policies.get(path)?.get('script-src'), path).to.deep.equal(["'self'"]);
      expect(policies.get(path)?.get('style-src'), path).to.deep.equal(["'self'"]);
    }
    const claim = await svc.req('GET', `/claim/${agent.agent_id}`);
    expect(claim.text, 'the claim page has no inline script').to.not.match(/<script>/);
    expect(claim.text).to.match(/<script src="\/assets\/claim\.js\?v=[\w-]+" defer><\/script>/);
    const page = await svc.req('GET', checkout);
    const checkoutScript = /<script>([\s\S]*?)<\/script>/.exec(page.text)?.[1] ?? '';
    expect(policies.get(checkout)?.get('script-src')).to.deep.equal([scriptHash(checkoutScript)]);
  });

  it('a JSON answer carries no page policy', async () => {
    const res = await svc.req('GET', '/health');
    expect(res.headers['content-type']).to.match(/json/);
    expect(res.headers['x-frame-options']).to.equal(undefined);
  });
});
