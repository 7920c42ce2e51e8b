import { expect } from 'chai';
import type { Collection, DocOf, Filter, FindOptions, ReadStore } from '../../projections/store/port.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

interface Recorded {
  collection: string;
  method: 'find' | 'findOne' | 'count';
  filter: Filter;
  options?: FindOptions;
}

/**
 * Wraps `store.collection` so that every find / findOne / count made while a request is served
 * (a call whose stack runs through `api/routes/`) is recorded with its filter and options. The
 * projections and workers share the store; their reads are left out.
 */
function recordRequestPathQueries(store: ReadStore) {
  const seen: Recorded[] = [];
  const original = store.collection.bind(store);
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 60;
  store.collection = <N extends string>(name: N): Collection<DocOf<N>> => {
    const c = original(name);
    return new Proxy(c, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop !== 'find' && prop !== 'findOne' && prop !== 'count') return value.bind(target);
        return (filter: Filter = {}, options?: FindOptions) => {
          if (/[/\\]api[/\\]routes[/\\]/.test(new Error().stack ?? '')) seen.push({ collection: name, method: prop, filter, options });
          return value.call(target, filter, options);
        };
      },
    });
  };
  return {
    seen,
    restore() {
      store.collection = original;
      Error.stackTraceLimit = limit;
    },
  };
}

// "No request-path query scans a collection" (issue 18): every read the communities, circles,
// community-admin and public-site routes and the agent, claim, circle and invite pages make,
// recorded while they answer real HTTP requests, is explained against the live store and must be
// served by an index.
describe('api: community, circle and public-site request paths read through indexes (explain)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let admin: User;
  let ada: User;
  let bob: User;
  let outsider: User;
  let recorder: ReturnType<typeof recordRequestPathQueries>;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [admin, ada, bob, outsider] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(bob.access_token), body: { full_name: 'Bob Kahn', region: 'IN', industry: 'finance' } });
    recorder = recordRequestPathQueries(svc.running.services.store);
  });
  after(async () => {
    recorder?.restore();
    await stopWithOutbox(svc, outbox);
  });

  it('every find, findOne and count of those routes is index-served', async () => {
    const as = (u: User) => ({ headers: bearer(u.access_token) });
    const ok = async (method: string, path: string, u: User | null, body?: unknown, status = 200) => {
      const r = await svc.req(method, path, { ...(u ? as(u) : {}), body });
      expect(r.status, `${method} ${path}: ${r.text}`).to.equal(status);
      return r.body;
    };
    const { community_id, circle_id, code } = await communityWith(svc, root, admin, [ada, bob], 'Indexed');
    const pub = await ok('POST', '/api/admin/community-admin/circles', admin, { community_id, name: 'Open', visibility: 'public' }, 201);
    const priv = await ok('POST', '/api/admin/community-admin/circles', admin, { community_id, name: 'Board', visibility: 'private' }, 201);
    await ok('POST', `/api/admin/community-admin/circles/${priv.circle_id}/members`, admin, { user_id: ada.user_id });
    await ok('POST', `/api/admin/community-admin/circles/${pub.circle_id}/members`, admin, { user_id: bob.user_id });
    const since = svc.clock.now().toISOString();
    svc.clock.advance(1_000);

    // Circles: posts, replies, reactions, mentions, notifications and settings.
    const p = await ok('POST', '/api/brew-circles/posts', ada, { circle_id, content: 'Who knows a #fintech lawyer? @bob', intent: 'ask' }, 201);
    await ok('POST', '/api/brew-circles/posts', bob, { circle_id: pub.circle_id, content: 'Open <b>doors</b> #makers', intent: 'intro' }, 201);
    const r1 = await ok('POST', '/api/brew-circles/replies', bob, { post_id: p.post_id, content: 'Me, @ada' }, 201);
    await ok('POST', '/api/brew-circles/replies', ada, { post_id: p.post_id, content: 'Thanks', parent_reply_id: r1.reply_id }, 201);
    await ok('POST', '/api/brew-circles/reactions', bob, { target_type: 'post', target_id: p.post_id, reaction: 'like' });
    await ok('POST', '/api/brew-circles/reactions', ada, { target_type: 'reply', target_id: r1.reply_id, reaction: 'support' });
    await ok('PUT', `/api/brew-circles/posts/${p.post_id}`, ada, { content: 'Who knows a #payments lawyer?' });
    await ok('GET', `/api/brew-circles/posts/${p.post_id}`, bob);
    await ok('GET', `/api/brew-circles/posts/${p.post_id}/replies?skip=0&limit=10`, bob);
    await ok('GET', `/api/brew-circles/${circle_id}/posts?skip=0&limit=10`, bob);
    await ok('GET', `/api/brew-circles/${circle_id}/posts?tag=payments`, bob);
    await ok('GET', `/api/brew-circles/${circle_id}/posts/check-new?since=${encodeURIComponent(since)}`, bob);
    await ok('GET', `/api/brew-circles/${circle_id}/trending-tags`, bob);
    await ok('GET', `/api/brew-circles/${circle_id}`, bob);
    await ok('GET', `/api/brew-circles/${circle_id}/members?skip=0&limit=10`, bob);
    await ok('GET', `/api/brew-circles/circles/${circle_id}/members/search?q=bo&limit=5`, ada);
    await ok('GET', `/api/brew-circles/circles/${circle_id}/members/search`, ada);
    await ok('GET', `/api/brew-circles/community/${community_id}`, bob);
    await ok('GET', '/api/brew-circles/user/circles', bob);
    await ok('GET', '/api/brew-circles/notifications?skip=0&limit=5', bob);
    await ok('GET', '/api/brew-circles/notifications/count', bob);
    await ok('POST', '/api/brew-circles/notifications/read', bob, {});
    await ok('GET', '/api/brew-circles/settings/notifications', bob);
    await ok('PUT', '/api/brew-circles/settings/notifications', bob, { reactions: false });
    await ok('GET', `/api/brew-circles/${priv.circle_id}`, bob, undefined, 404);
    await ok('POST', `/api/brew-circles/${pub.circle_id}/join`, ada);
    const asked = await ok('POST', `/api/brew-circles/${pub.circle_id}/join`, outsider);
    await ok('DELETE', `/api/brew-circles/posts/${p.post_id}`, ada);

    // Community admin.
    await ok('GET', '/api/admin/community-admin/dashboard', admin);
    await ok('GET', `/api/admin/community-admin/dashboard?community_id=${community_id}`, root);
    await ok('GET', '/api/admin/community-admin/dashboard', root);
    await ok('GET', `/api/admin/community-admin/members?community_id=${community_id}&page=0&limit=5`, admin);
    await ok('GET', `/api/admin/community-admin/members?search=bob`, admin);
    await ok('GET', `/api/admin/community-admin/members?community_id=${community_id}&circle_filter=${pub.circle_id}`, admin);
    const made = await ok('POST', '/api/admin/community-admin/codes', admin, { community_id, label: 'x', max_uses: 5 }, 201);
    await ok('PUT', `/api/admin/community-admin/codes/${made.code_id}`, admin, { status: 'paused' });
    await ok('GET', `/api/admin/community-admin/code-qr/${code}`, admin);
    await ok('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, admin);
    await ok('PUT', `/api/admin/community-admin/circles/${pub.circle_id}/visibility?visibility=public`, admin);
    await ok('GET', '/api/admin/community-admin/circle-requests', admin);
    await ok('GET', '/api/admin/community-admin/circle-requests?status=pending', admin);
    await ok('POST', `/api/admin/community-admin/circle-requests/${asked.request_id}/approve?admin_note=hi`, admin);
    await ok('GET', '/api/admin/community-admin/dashboard', ada, undefined, 403);
    await ok('DELETE', `/api/admin/community-admin/members/${outsider.user_id}`, admin);
    const spare = await ok('POST', '/api/admin/community-admin/circles', admin, { community_id, name: 'Spare' }, 201);
    await ok('DELETE', `/api/brew-circles/${spare.circle_id}`, admin);
    const joiner = await signUp(svc, outbox);
    await ok('POST', '/api/communities/join', joiner, { code });

    // Public site and pages.
    await ok('GET', '/api/public/region-stats', null);
    await ok('GET', '/api/public/industry-stats', null);
    await ok('GET', '/api/public/circles?skip=0&limit=5', null);
    await ok('POST', '/api/partner-leads', null, { name: 'Pat', email: 'pat@example.com' });
    await ok('GET', '/api/admin/partner-leads', root);
    await ok('POST', '/api/analytics/pageview', null, { path: '/', session_id: 's1' }, 202);
    await ok('GET', '/api/analytics/stats', root);
    await ok('PUT', '/api/pitch-deck/settings', root, { url: 'https://decks.example.com/a.pdf' });
    await ok('GET', '/api/pitch-deck/settings', null);
    await ok('POST', '/api/nda/accept', null, { name: 'Ivy', email: 'ivy@example.com' });
    await ok('GET', `/circles/${pub.circle_id}`, null);
    await ok('GET', `/join/${code}`, null);
    const agent = await svc.register({ name: 'Indexed agent' });
    await ok('GET', `/agents/${agent.agent_id}`, null);
    await ok('GET', `/claim/${agent.agent_id}`, null);

    const { seen } = recorder;
    const collections = new Set(seen.map((q) => q.collection));
    for (const name of [
      'communities',
      'circles',
      'invite_codes',
      'invite_days',
      'community_members',
      'circle_members',
      'circle_join_requests',
      'circle_posts',
      'circle_replies',
      'circle_activity',
      'circle_tag_days',
      'circle_notifications',
      'profile_stats',
      'partner_leads',
      'page_view_days',
      'page_view_sessions',
      'site_settings',
    ])
      expect(collections.has(name), `no request read ${name}`).to.equal(true);

    const scans: string[] = [];
    const distinct = new Map<string, Recorded>();
    for (const q of seen) distinct.set(JSON.stringify([q.collection, q.method, Object.keys(q.filter).sort(), q.options ?? null]), q);
    for (const q of distinct.values()) {
      const plan = await svc.running.services.store.collection(q.collection).explain(q.filter, q.options);
      if (plan.index === null)
        scans.push(`${q.collection}.${q.method}(${JSON.stringify(q.filter)}, ${JSON.stringify(q.options ?? {})}) examined ${plan.examined}`);
    }
    expect(distinct.size).to.be.greaterThan(40);
    expect(scans, 'collection scans on the request path').to.deep.equal([]);
  });
});
