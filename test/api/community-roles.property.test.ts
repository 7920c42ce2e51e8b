import { expect } from 'chai';
import fc from 'fast-check';
import { bearer, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import type { Model, RoleRoutes } from '../helpers/community-roles.ts';
import {
  adminCircleExpectation,
  deleteExpectation,
  isAdmin,
  joinExpectation,
  liveCircles,
  newModel,
  opArbitrary,
  step,
  visibility,
  visible,
} from '../helpers/community-roles.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

/**
 * The community-roles property over real HTTP, on one service reused across runs: the sequences
 * and the model of test/queries/communities/authorisation.property.test.ts (which runs 1,000 of
 * them in process), fewer of them here, each through the routes themselves. After each sequence
 * every community admin and circle route is asked, for everyone, with requests that change
 * nothing the model tracks; then the super admin removes every member, so that no role carries
 * over to the next run.
 */
const RUNS = Number(process.env.COMMUNITY_ROLES_HTTP_RUNS ?? 15);

describe('api: community and circle routes answer as the final roles allow (property, over HTTP)', function () {
  this.timeout(600_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  const users: User[] = [];
  const tokens = new Map<string, string>();

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    for (let i = 0; i < 3; i++) users.push(await signUp(svc, outbox));
    for (const u of [root, ...users]) tokens.set(u.user_id, u.access_token);
  });
  after(() => stopWithOutbox(svc, outbox));

  const call = (by: string, method: string, path: string, body?: unknown): Promise<TestResponse> =>
    svc.req(method, path, { headers: bearer(String(tokens.get(by))), body });

  it(`for ${RUNS} random sequences of grants and revocations, every route answers as the final roles allow`, async () => {
    const ROOT = root.user_id;
    const USERS = users.map((u) => u.user_id);
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(visibility, fc.array(opArbitrary(ROOT, USERS), { minLength: 1, maxLength: 14 }), async (second, ops) => {
        const m = newModel(ROOT);
        const log: string[] = [];
        const created = await call(ROOT, 'POST', '/api/admin/communities', { name: `Run ${++runs}`, open: false });
        expect(created.status, created.text).to.equal(201);
        const cid = created.body.community_id as string;
        m.circles.push({ id: created.body.circles[0].circle_id, vis: 'community', deleted: false, members: new Set() });
        const made = await call(ROOT, 'POST', '/api/admin/community-admin/circles', { community_id: cid, name: 'Second', visibility: second });
        m.circles.push({ id: made.body.circle_id, vis: second, deleted: false, members: new Set() });
        const code = await call(ROOT, 'POST', '/api/admin/community-admin/codes', { community_id: cid });
        expect(code.status, code.text).to.equal(201);
        const admin = '/api/admin/community-admin';
        const routes: RoleRoutes = {
          name: async (u) => (await call(ROOT, 'POST', `/api/admin/communities/${cid}/admins`, { user_id: u })).status,
          join: async (u) => (await call(u, 'POST', '/api/communities/join', { code: code.body.code })).status,
          remove: async (by, u) => (await call(by, 'DELETE', `${admin}/members/${u}?community_id=${cid}`)).status,
          add: async (by, u, c) => (await call(by, 'POST', `${admin}/circles/${c}/members`, { user_id: u })).status,
          joinCircle: async (u, c) => {
            const r = await call(u, 'POST', `/api/brew-circles/${c}/join`);
            return { status: r.status, requestId: r.body.request_id };
          },
          decide: async (by, r, approve) => (await call(by, 'POST', `${admin}/circle-requests/${r}/${approve ? 'approve' : 'reject'}`)).status,
          visibility: async (by, c, v) => (await call(by, 'PUT', `${admin}/circles/${c}/visibility?visibility=${v}`)).status,
          deleteCircle: async (by, c) => (await call(by, 'DELETE', `/api/brew-circles/${c}`)).status,
          createCircle: async (by, v) => {
            const r = await call(by, 'POST', `${admin}/circles`, { community_id: cid, name: 'Made', visibility: v });
            return { status: r.status, circleId: r.body.circle_id };
          },
          code: async (by, status) => (await call(by, 'PUT', `${admin}/codes/${code.body.code_id}`, { status })).status,
          post: async (u, c) => {
            const r = await call(u, 'POST', '/api/brew-circles/posts', { circle_id: c, content: 'Hello #circle', intent: 'update' });
            return { status: r.status, postId: r.body.post_id };
          },
        };
        try {
          for (const o of ops) await step(routes, m, o, log);
          await checkEveryRoute(m, cid, code.body, log);
        } finally {
          // No role carries over: the next run's users administer nothing and are in no circle.
          for (const u of [...m.members]) expect((await call(ROOT, 'DELETE', `${admin}/members/${u}?community_id=${cid}`)).status).to.equal(200);
        }
      }),
      { numRuns: RUNS },
    );
  });

  async function checkEveryRoute(m: Model, cid: string, code: { code: string; code_id: string }, log: string[]): Promise<void> {
    const admin = '/api/admin/community-admin';
    const sorted = (xs: Iterable<string>) => [...xs].sort();
    const ids = (docs: Array<Record<string, unknown>>, key: string) => sorted(docs.map((d) => String(d[key])));
    for (const u of [m.root, ...users.map((x) => x.user_id)]) {
      const isAdm = isAdmin(m, u);
      const at = (route: string, r?: TestResponse) => `${route} as ${u}: ${r?.text.slice(0, 300) ?? ''} after\n${log.join('\n')}`;
      const ask = async (method: string, path: string, expected: number, body?: unknown) => {
        const r = await call(u, method, path, body);
        expect(r.status, at(`${method} ${path}`, r)).to.equal(expected);
        return r;
      };
      const gate = isAdm ? 200 : 403;

      // Community admin reads.
      await ask('GET', `${admin}/dashboard?community_id=${cid}`, gate);
      if (u !== m.root) {
        const own = await ask('GET', `${admin}/dashboard`, gate);
        if (isAdm)
          expect(
            own.body.communities.map((c: { community_id: string }) => c.community_id),
            at('GET dashboard'),
          ).to.deep.equal([cid]);
      }
      const members = await ask('GET', `${admin}/members?community_id=${cid}&limit=100`, gate);
      if (isAdm) expect(ids(members.body.members, 'user_id'), at('GET members', members)).to.deep.equal(sorted(m.members));
      if (isAdm)
        for (const c of liveCircles(m)) {
          const inCircle = await ask('GET', `${admin}/members?community_id=${cid}&circle_filter=${c.id}&limit=100`, 200);
          expect(ids(inCircle.body.members, 'user_id'), at(`GET members?circle_filter=${c.id}`, inCircle)).to.deep.equal(sorted(c.members));
        }
      await ask('GET', `${admin}/invite-analytics/${cid}`, gate);
      await ask('GET', `${admin}/code-qr/${code.code}`, gate);
      const pending = await ask('GET', `${admin}/circle-requests?community_id=${cid}&status=pending`, gate);
      if (isAdm)
        expect(ids(pending.body.requests, 'request_id'), at('GET circle-requests')).to.deep.equal(
          sorted(m.requests.filter((r) => r.status === 'pending').map((r) => r.id)),
        );

      // Community admin writes that change nothing the model tracks.
      await ask('PUT', `${admin}/codes/${code.code_id}`, gate, { status: m.codeStatus });
      await ask('POST', `${admin}/codes`, isAdm ? 201 : 403, { community_id: cid });
      if (!isAdm) await ask('POST', `${admin}/circles`, 403, { community_id: cid, name: 'Not mine' });
      await ask('DELETE', `${admin}/members/usr_nobody?community_id=${cid}`, isAdm ? 404 : 403);
      await ask('POST', `${admin}/circle-requests/cjr_none/approve`, isAdm ? 404 : 403);
      for (const r of m.requests)
        if (!isAdm || r.status !== 'pending')
          for (const verb of ['approve', 'reject']) await ask('POST', `${admin}/circle-requests/${r.id}/${verb}`, !isAdm ? 403 : 409);

      // Every circle, live or deleted.
      for (const c of m.circles) {
        const base = adminCircleExpectation(m, u, c);
        await ask('PUT', `${admin}/circles/${c.id}/visibility?visibility=${c.vis}`, base);
        await ask('POST', `${admin}/circles/${c.id}/members`, base !== 200 ? base : 404, { user_id: 'usr_nobody' });
        const seen = visible(m, u, c);
        const shown = await ask('GET', `/api/brew-circles/${c.id}`, seen ? 200 : 404);
        if (seen) expect(shown.body, at(`GET /api/brew-circles/${c.id}`, shown)).to.include({ is_admin: isAdm, is_member: c.members.has(u) });
        const list = await ask('GET', `/api/brew-circles/${c.id}/members?limit=100`, seen ? 200 : 404);
        if (seen) expect(ids(list.body.members, 'user_id'), at(`GET ${c.id}/members`, list)).to.deep.equal(sorted(c.members));
        for (const path of [
          `/api/brew-circles/${c.id}/posts`,
          `/api/brew-circles/circles/${c.id}/members/search?q=a`,
          `/api/brew-circles/${c.id}/trending-tags`,
          `/api/brew-circles/${c.id}/posts/check-new?since=2026-01-01T00:00:00Z`,
        ])
          await ask('GET', path, seen ? 200 : 404);
        const posting = !seen ? 404 : c.members.has(u) ? 201 : 403;
        if (posting !== 201) await ask('POST', '/api/brew-circles/posts', posting, { circle_id: c.id, content: 'Let me in', intent: 'ask' });
        const joining = joinExpectation(m, u, c);
        if (joining.outcome === 'none' || joining.outcome === 'already') await ask('POST', `/api/brew-circles/${c.id}/join`, joining.status);
        const deleting = deleteExpectation(m, u, c);
        if (deleting !== 200) await ask('DELETE', `/api/brew-circles/${c.id}`, deleting);
      }
      const listed = await ask('GET', `/api/brew-circles/community/${cid}`, 200);
      expect(
        listed.body.circles.map((c: { circle_id: string }) => c.circle_id),
        at('GET community circles', listed),
      ).to.deep.equal(m.circles.filter((c) => visible(m, u, c)).map((c) => c.id));
      const mine = await ask('GET', '/api/brew-circles/user/circles', 200);
      expect(ids(mine.body.circles, 'circle_id'), at('GET user/circles', mine)).to.deep.equal(
        sorted(m.circles.filter((c) => !c.deleted && c.members.has(u)).map((c) => c.id)),
      );

      // Posts by their id.
      for (const p of m.posts) {
        const c = m.circles.find((x) => x.id === p.circle);
        const seen = c !== undefined && visible(m, u, c);
        const member = c?.members.has(u) === true;
        await ask('GET', `/api/brew-circles/posts/${p.id}`, seen ? 200 : 404);
        await ask('GET', `/api/brew-circles/posts/${p.id}/replies`, seen ? 200 : 404);
        await ask('POST', '/api/brew-circles/replies', !seen ? 404 : member ? 201 : 403, { post_id: p.id, content: 'Re' });
        await ask('POST', '/api/brew-circles/reactions', !seen ? 404 : member ? 200 : 403, { target_type: 'post', target_id: p.id, reaction: 'like' });
        await ask('PUT', `/api/brew-circles/posts/${p.id}`, !seen ? 404 : p.author === u ? 200 : 403, { content: 'Edited' });
      }
    }
  }
});
