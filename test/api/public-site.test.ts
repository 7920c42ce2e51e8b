import { expect } from 'chai';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import { checksumsOf } from '../helpers/checksums.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const SITE = ['partner_leads', 'page_view_days', 'page_view_sessions', 'site_settings', 'nda_acceptances', 'profile_facets', 'profile_stats'];

describe('api: public site (landing statistics, partner leads, page views, pitch deck, NDA)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let plain: User;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    plain = await signUp(svc, outbox);
  });
  after(() => stopWithOutbox(svc, outbox));

  it('counts active (discoverable) profiles by region and industry, cached with cache headers', async () => {
    const a = await signUp(svc, outbox);
    const b = await signUp(svc, outbox);
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(a.access_token), body: { region: 'IN', industry: 'finance' } });
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(b.access_token), body: { region: 'IN', industry: 'technology' } });
    const regions = await svc.req('GET', '/api/public/region-stats');
    expect(regions.status).to.equal(200);
    expect(regions.headers['cache-control']).to.equal('public, max-age=60');
    expect(regions.body.regions).to.deep.equal([{ region: 'IN', count: 2 }]);
    const industries = await svc.req('GET', '/api/public/industry-stats');
    expect(industries.body.industries).to.deep.include.members([
      { industry: 'finance', count: 1 },
      { industry: 'technology', count: 1 },
    ]);
    // A member who hides leaves the counts once the cache expires.
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(b.access_token), body: { discoverable: false } });
    expect((await svc.req('GET', '/api/public/region-stats')).body.regions).to.deep.equal([{ region: 'IN', count: 2 }]);
    svc.clock.advance(60_000);
    expect((await svc.req('GET', '/api/public/region-stats')).body.regions).to.deep.equal([{ region: 'IN', count: 1 }]);
    const plan = await svc.running.services.store.collection('profile_stats').explain({ kind: 'region' }, { hint: 'by_kind' });
    expect(plan.index).to.equal('by_kind');
  });

  it('takes partner leads (422 without a name or a valid e-mail); super admins list them', async () => {
    expect((await svc.req('POST', '/api/partner-leads', { body: { email: 'x@example.com' } })).status).to.equal(422);
    expect((await svc.req('POST', '/api/partner-leads', { body: { name: 'Pat', email: 'not-an-email' } })).status).to.equal(422);
    expect((await svc.req('POST', '/api/partner-leads', { body: { name: '  ', email: 'pat@example.com' } })).status).to.equal(422);
    expect((await svc.req('POST', '/api/partner-leads')).status).to.equal(422);
    const ok = await svc.req('POST', '/api/partner-leads', {
      body: { name: 'Pat Partner', email: 'Pat@Example.com', company: 'Acme', message: 'Let us talk' },
    });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.lead_id).to.match(/^lead_/);
    expect((await svc.req('GET', '/api/admin/partner-leads')).status).to.equal(401);
    expect((await svc.req('GET', '/api/admin/partner-leads', { headers: bearer(plain.access_token) })).status).to.equal(403);
    const list = await svc.req('GET', '/api/admin/partner-leads', { headers: bearer(root.access_token) });
    expect(list.body.leads[0]).to.include({ name: 'Pat Partner', email: 'pat@example.com', company: 'Acme', message: 'Let us talk' });
  });

  it('tracks page views (422 without a path); statistics are admin only: views per path and day, unique sessions', async () => {
    expect((await svc.req('POST', '/api/analytics/pageview', { body: {} })).status).to.equal(422);
    expect((await svc.req('POST', '/api/analytics/pageview', { body: { path: '' } })).status).to.equal(422);
    for (const [path, session] of [
      ['/', 's1'],
      ['/', 's2'],
      ['/pricing', 's1'],
    ])
      expect((await svc.req('POST', '/api/analytics/pageview', { body: { path, session_id: session, referrer: 'https://news.example.com' } })).status).to.equal(
        202,
      );
    expect((await svc.req('GET', '/api/analytics/stats')).status).to.equal(401);
    expect((await svc.req('GET', '/api/analytics/stats', { headers: bearer(plain.access_token) })).status).to.equal(403);
    const stats = await svc.req('GET', '/api/analytics/stats', { headers: bearer(root.access_token) });
    expect(stats.status).to.equal(200);
    expect(stats.body).to.include({ total_views: 3, unique_sessions: 2 });
    expect(stats.body.views_per_path).to.deep.equal([
      { path: '/', views: 2 },
      { path: '/pricing', views: 1 },
    ]);
    expect(stats.body.views_per_day).to.deep.equal([{ date: svc.clock.now().toISOString().slice(0, 10), views: 3, unique_sessions: 2 }]);
  });

  it('serves the pitch deck URL publicly, updated by super admins only (https); records NDA acceptances as events', async () => {
    expect((await svc.req('GET', '/api/pitch-deck/settings')).body).to.deep.equal({ url: null, updated_at: null });
    const url = 'https://decks.example.com/seed.pdf';
    expect((await svc.req('PUT', '/api/pitch-deck/settings', { body: { url } })).status).to.equal(401);
    expect((await svc.req('PUT', '/api/pitch-deck/settings', { headers: bearer(plain.access_token), body: { url } })).status).to.equal(403);
    expect(
      (await svc.req('PUT', '/api/pitch-deck/settings', { headers: bearer(root.access_token), body: { url: 'http://decks.example.com/x' } })).status,
    ).to.equal(422);
    const set = await svc.req('PUT', '/api/pitch-deck/settings', { headers: bearer(root.access_token), body: { url } });
    expect(set.status, set.text).to.equal(200);
    expect((await svc.req('GET', '/api/pitch-deck/settings')).body.url).to.equal(url);
    expect((await svc.req('POST', '/api/nda/accept', { body: { name: 'Ivy' } })).status).to.equal(422);
    const nda = await svc.req('POST', '/api/nda/accept', { body: { name: 'Ivy Investor', email: 'ivy@example.com' } });
    expect(nda.status, nda.text).to.equal(200);
    expect(nda.body).to.include({ deck_url: url, accepted_at: svc.clock.now().toISOString() });
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const accepted = events.filter((e) => e.type === 'NdaAccepted');
    expect(accepted.map((e) => (e.data as { email: string }).email)).to.deep.equal(['ivy@example.com']);
  });

  it('lists the public circles of open communities, newest first, for a homepage (no token); other visibilities, closed communities and deleted circles are left out', async () => {
    const admin = await signUp(svc, outbox);
    const as = { headers: bearer(admin.access_token) };
    const { community_id } = await communityWith(svc, root, admin, [], 'Open house');
    const closed = await svc.req('POST', '/api/admin/communities', { headers: bearer(root.access_token), body: { name: 'Back room', open: false } });
    await svc.req('POST', `/api/admin/communities/${closed.body.community_id}/admins`, {
      headers: bearer(root.access_token),
      body: { user_id: admin.user_id },
    });
    const circle = async (cid: string, name: string, visibility: string) => {
      const r = await svc.req('POST', '/api/admin/community-admin/circles', {
        ...as,
        body: { community_id: cid, name, description: `${name} circle`, visibility },
      });
      expect(r.status, r.text).to.equal(201);
      return r.body.circle_id as string;
    };
    const p1 = await circle(community_id, 'Town square', 'public');
    await circle(community_id, 'Members only', 'community');
    await circle(community_id, 'Board', 'private');
    await circle(closed.body.community_id, 'Closed but public', 'public');
    await svc.req('POST', `/api/admin/community-admin/circles/${p1}/members`, { ...as, body: { user_id: admin.user_id } });
    const ids = async (query = '') => {
      const r = await svc.req('GET', `/api/public/circles${query}`);
      expect(r.status, r.text).to.equal(200);
      return r.body.circles.map((c: { circle_id: string }) => c.circle_id) as string[];
    };
    const listed = await svc.req('GET', '/api/public/circles');
    expect(listed.body.circles).to.deep.equal([
      {
        circle_id: p1,
        community_id,
        community_name: 'Open house',
        name: 'Town square',
        description: 'Town square circle',
        member_count: 1,
        post_count: 0,
        last_activity_at: null,
        url: `${svc.running.services.config.publicBaseUrl}/circles/${p1}`,
      },
    ]);
    expect((await svc.req('GET', `/circles/${p1}`)).status).to.equal(200);
    const p3 = await circle(community_id, 'Market', 'public');
    expect(await ids()).to.deep.equal([p3, p1]);
    expect(await ids('?skip=1&limit=1')).to.deep.equal([p1]);
    await svc.req('PUT', `/api/admin/community-admin/circles/${p1}/visibility?visibility=community`, as);
    expect(await ids()).to.deep.equal([p3]);
    await svc.req('PUT', `/api/admin/community-admin/circles/${p1}/visibility?visibility=public`, as);
    await svc.req('DELETE', `/api/brew-circles/${p3}`, as);
    expect(await ids()).to.deep.equal([p1]);
    const bad = await svc.req('GET', '/api/public/circles?limit=0');
    expect(bad.status).to.equal(422);
    expect(bad.body.code).to.equal('validation_failed');
  });

  it('replays the log into the same site read models (checksums), and applying every event twice changes nothing', async () => {
    const live = await checksumsOf(svc.running.services.store, SITE);
    expect(Object.entries(live).filter(([, c]) => c.startsWith('0:'))).to.deep.equal([]);
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
    await runner.start();
    await runner.stop();
    expect(await checksumsOf(store, SITE)).to.deep.equal(live);
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const ctx = { collection: <N extends string>(n: N) => store.collection(n) };
    for (const e of events) for (const p of allProjections) if (p.handles.has(e.type)) await p.apply(e, ctx);
    expect(await checksumsOf(store, SITE)).to.deep.equal(live);
  });
});
