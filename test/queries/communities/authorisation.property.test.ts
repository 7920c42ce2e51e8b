import { expect } from 'chai';
import fc from 'fast-check';
import type { CirclePostState } from '../../../commands/communities/circle-post.ts';
import { circlePostAggregate, decidePublishCirclePost, decideAddCircleReply, decideEditCirclePost } from '../../../commands/communities/circle-post.ts';
import type { Actor, CommunityState } from '../../../commands/communities/community.ts';
import {
  communityAggregate,
  decideAddCircleMember,
  decideCreateCircle,
  decideCreateCommunity,
  decideCreateInviteCode,
  decideDeleteCircle,
  decideJoinCircle,
  decideJoinRequest,
  decideJoinWithCode,
  decideNameCommunityAdmin,
  decideRemoveCommunityMember,
  decideSetCircleVisibility,
  decideUpdateInviteCodeStatus,
} from '../../../commands/communities/community.ts';
import type { CodeStatus, Visibility } from '../../../events/communities.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import type { RecordedEvent } from '../../../events/store/port.ts';
import { circlePostsProjection } from '../../../projections/communities/circle-posts.ts';
import { communitiesProjection } from '../../../projections/communities/communities.ts';
import { joinRequestsProjection } from '../../../projections/communities/join-requests.ts';
import { communityMembersProjection } from '../../../projections/communities/members.ts';
import { MemoryReadStore } from '../../../projections/store/memory.ts';
import type { Projection, ProjectionContext } from '../../../projections/types.ts';
import type { Caller } from '../../../queries/communities/communities.ts';
import {
  adminScope,
  circlesOf,
  codeByValue,
  communityMembers,
  getCircle,
  getCode,
  getJoinRequest,
  joinRequests,
} from '../../../queries/communities/communities.ts';
import { circleMembers, getCirclePost, userCircles, visibleCircle } from '../../../queries/communities/circles.ts';
import type { Model, RoleRoutes } from '../../helpers/community-roles.ts';
import {
  adminCircleExpectation,
  circleOf,
  deleteExpectation,
  isAdmin,
  joinExpectation,
  liveCircles,
  newModel,
  opArbitrary,
  step,
  visibility,
  visible,
} from '../../helpers/community-roles.ts';

/**
 * For any sequence of role grants and revocations in a community and its circles (admins named,
 * members joining with a code or removed, circles created, deleted, made public / community /
 * private, members added, join requests asked and decided, invite codes paused), every community
 * admin and circle route answers exactly as the final roles allow.
 *
 * In process, for speed: each route is what its handler runs (api/routes/communities/*.ts), the
 * read-model queries that authorise it and the decider of its command, over the real projections
 * in an in-memory read store. The sequences and the model (test/helpers/community-roles.ts) are
 * shared with test/api/community-roles.property.test.ts, which runs fewer of them over real HTTP.
 * Writes in the final checks are decided but not appended, so every route is asked on the same
 * final state.
 */

const RUNS = 1000;
const ROOT = 'usr_root';
const USERS = ['usr_ann', 'usr_bob', 'usr_cyd'] as const;
const EVERYONE = [ROOT, ...USERS];
const COMMUNITY = 'cmy_prop';
const NOW = new Date('2026-03-10T09:30:00.000Z');

// ---------------------------------------------------------------------------------------------
// The system: deciders over the command-side state, events projected into a read store.

const PROJECTIONS: Projection[] = [communitiesProjection, communityMembersProjection, joinRequestsProjection, circlePostsProjection];

class World {
  readonly store = new MemoryReadStore();
  community: CommunityState = communityAggregate.initialState();
  readonly posts = new Map<string, CirclePostState>();
  private position = 0;
  private seq = 0;
  private readonly ctx: ProjectionContext = { collection: (name) => this.store.collection(name) };
  code = '';
  codeId = '';

  async init(): Promise<void> {
    for (const p of PROJECTIONS) for (const spec of p.collections) await this.store.ensureCollection(spec);
  }
  nextId(prefix: string): string {
    return `${prefix}_${++this.seq}`;
  }
  private async project(stream: string, events: Array<{ type: string; data: unknown }>): Promise<void> {
    for (const e of events) {
      this.position++;
      const recorded: RecordedEvent = {
        id: `evt-${this.position}`,
        type: e.type,
        data: e.data,
        metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: NOW.toISOString(), schema_version: 1 },
        stream,
        revision: this.position,
        position: this.position,
      };
      for (const p of PROJECTIONS) if (p.handles.has(e.type)) await p.apply(recorded, this.ctx);
    }
  }
  async onCommunity(decide: (s: CommunityState) => Parameters<typeof communityAggregate.evolve>[1][], apply: boolean): Promise<void> {
    const events = decide(this.community);
    if (!apply) return;
    for (const e of events) this.community = communityAggregate.evolve(this.community, e);
    await this.project(`community-${COMMUNITY}`, events);
  }
  async onPost(postId: string, decide: (s: CirclePostState) => Parameters<typeof circlePostAggregate.evolve>[1][], apply: boolean): Promise<void> {
    let state = this.posts.get(postId) ?? circlePostAggregate.initialState();
    const events = decide(state);
    if (!apply) return;
    for (const e of events) state = circlePostAggregate.evolve(state, e);
    this.posts.set(postId, state);
    await this.project(`cpost-${postId}`, events);
  }
}

const callerOf = (u: string): Caller => ({ userId: u, roles: u === ROOT ? ['member', 'super_admin'] : ['member'] });
const actorOf = (u: string): Actor => ({ user_id: u, super_admin: u === ROOT });
const meta = { now: NOW };

/** The status a route answers: `ok` when its handler runs through, else the DomainError's. */
async function statusOf(ok: number, run: () => Promise<unknown>): Promise<number> {
  try {
    await run();
    return ok;
  } catch (err) {
    if (err instanceof DomainError) return err.status;
    throw err;
  }
}

/** The circle of an admin route by its id (community-admin.ts `adminCircle`). */
async function adminCircle(w: World, caller: Caller, circleId: string) {
  const circle = await getCircle(w.store, circleId);
  if (!circle) {
    await adminScope(w.store, caller);
    throw new DomainError(404, 'circle_not_found', 'Circle not found');
  }
  await adminScope(w.store, caller, String(circle.community_id));
  return circle;
}

/** The write routes, as their handlers authorise and decide them; `apply` appends the events. */
const routes = {
  /** POST /api/admin/communities/{id}/admins (super admin). */
  name: (w: World, by: string, u: string, apply: boolean) =>
    statusOf(200, async () => {
      if (by !== ROOT) throw new DomainError(403, 'admin_required', 'super admin');
      await w.onCommunity(
        (s) => decideNameCommunityAdmin({ type: 'NameCommunityAdmin', data: { user_id: u, full_name: u, named_by: by }, metadata: meta }, s),
        apply,
      );
    }),
  /** POST /api/communities/join {code}. */
  join: (w: World, u: string, apply: boolean) =>
    statusOf(200, async () => {
      const code = await codeByValue(w.store, w.code);
      if (!code) throw new DomainError(404, 'invite_code_not_found', 'no code');
      await w.onCommunity((s) => decideJoinWithCode({ type: 'JoinWithCode', data: { code_id: code._id, user_id: u, full_name: u }, metadata: meta }, s), apply);
    }),
  /** DELETE /api/admin/community-admin/members/{u}?community_id= */
  remove: (w: World, by: string, u: string, apply: boolean) =>
    statusOf(200, async () => {
      await adminScope(w.store, callerOf(by), COMMUNITY);
      await w.onCommunity(
        (s) => decideRemoveCommunityMember({ type: 'RemoveCommunityMember', data: { actor: actorOf(by), user_id: u }, metadata: meta }, s),
        apply,
      );
    }),
  /** POST /api/admin/community-admin/circles/{c}/members {user_id} */
  add: (w: World, by: string, u: string, circleId: string, apply: boolean) =>
    statusOf(200, async () => {
      const circle = await adminCircle(w, callerOf(by), circleId);
      await w.onCommunity(
        (s) =>
          decideAddCircleMember({ type: 'AddCircleMember', data: { actor: actorOf(by), circle_id: circle._id, user_id: u, full_name: u }, metadata: meta }, s),
        apply,
      );
    }),
  /** POST /api/brew-circles/{c}/join */
  joinCircle: (w: World, u: string, circleId: string, apply: boolean) =>
    statusOf(200, async () => {
      const access = await visibleCircle(w.store, circleId, callerOf(u));
      const request_id = w.nextId('cjr');
      await w.onCommunity(
        (s) =>
          decideJoinCircle({ type: 'JoinCircle', data: { circle_id: access.circle._id, user_id: u, full_name: u }, metadata: { now: NOW, request_id } }, s),
        apply,
      );
    }),
  /** POST /api/admin/community-admin/circle-requests/{id}/approve | reject */
  decide: (w: World, by: string, requestId: string, approve: boolean, apply: boolean) =>
    statusOf(200, async () => {
      const caller = callerOf(by);
      const request = await getJoinRequest(w.store, requestId);
      if (!request) {
        await adminScope(w.store, caller);
        throw new DomainError(404, 'join_request_not_found', 'no request');
      }
      await adminScope(w.store, caller, String(request.community_id));
      await w.onCommunity(
        (s) =>
          decideJoinRequest(
            {
              type: 'DecideJoinRequest',
              data: { actor: actorOf(by), request_id: request._id, approve, admin_note: '', full_name: String(request.user_id) },
              metadata: meta,
            },
            s,
          ),
        apply,
      );
    }),
  /** PUT /api/admin/community-admin/circles/{c}/visibility?visibility= */
  visibility: (w: World, by: string, circleId: string, v: Visibility, apply: boolean) =>
    statusOf(200, async () => {
      const circle = await adminCircle(w, callerOf(by), circleId);
      await w.onCommunity(
        (s) =>
          decideSetCircleVisibility({ type: 'SetCircleVisibility', data: { actor: actorOf(by), circle_id: circle._id, visibility: v }, metadata: meta }, s),
        apply,
      );
    }),
  /** DELETE /api/brew-circles/{c} */
  deleteCircle: (w: World, by: string, circleId: string, apply: boolean) =>
    statusOf(200, async () => {
      const access = await visibleCircle(w.store, circleId, callerOf(by));
      await w.onCommunity(
        (s) => decideDeleteCircle({ type: 'DeleteCircle', data: { actor: actorOf(by), circle_id: access.circle._id }, metadata: meta }, s),
        apply,
      );
    }),
  /** POST /api/admin/community-admin/circles */
  createCircle: (w: World, by: string, v: Visibility, circleId: string, apply: boolean) =>
    statusOf(201, async () => {
      await adminScope(w.store, callerOf(by), COMMUNITY);
      await w.onCommunity(
        (s) =>
          decideCreateCircle(
            { type: 'CreateCircle', data: { actor: actorOf(by), name: 'Circle', description: '', visibility: v }, metadata: { now: NOW, circle_id: circleId } },
            s,
          ),
        apply,
      );
    }),
  /** PUT /api/admin/community-admin/codes/{code_id} {status} */
  code: (w: World, by: string, status: CodeStatus, apply: boolean) =>
    statusOf(200, async () => {
      const code = await getCode(w.store, w.codeId);
      if (!code) throw new DomainError(404, 'invite_code_not_found', 'no code');
      await adminScope(w.store, callerOf(by), String(code.community_id));
      await w.onCommunity(
        (s) => decideUpdateInviteCodeStatus({ type: 'UpdateInviteCodeStatus', data: { actor: actorOf(by), code_id: code._id, status }, metadata: meta }, s),
        apply,
      );
    }),
  /** POST /api/admin/community-admin/codes {community_id} */
  createCode: (w: World, by: string) =>
    statusOf(201, async () => {
      await adminScope(w.store, callerOf(by), COMMUNITY);
      await w.onCommunity(
        (s) =>
          decideCreateInviteCode(
            {
              type: 'CreateInviteCode',
              data: { actor: actorOf(by), label: null, max_uses: null, expires_at: null },
              metadata: { now: NOW, code_id: 'icd_x', code: 'X' },
            },
            s,
          ),
        false,
      );
    }),
  /** POST /api/brew-circles/posts {circle_id} */
  post: (w: World, u: string, circleId: string, postId: string, apply: boolean) =>
    statusOf(201, async () => {
      const access = await visibleCircle(w.store, circleId, callerOf(u));
      const data = {
        circle_id: access.circle._id,
        community_id: COMMUNITY,
        author_id: u,
        author_name: u,
        is_member: access.member,
        content: 'Hello #circle',
        intent: 'update' as const,
        link_url: null,
        mentions: [],
      };
      await w.onPost(postId, (s) => decidePublishCirclePost({ type: 'PublishCirclePost', data, metadata: { now: NOW, post_id: postId } }, s), apply);
    }),
};

/** A route on a post reached by its id (circles.ts `visiblePost`): a hidden circle answers as a missing post. */
async function visiblePost(w: World, postId: string, u: string) {
  const post = await getCirclePost(w.store, postId);
  if (!post) throw new DomainError(404, 'circle_post_not_found', 'no post');
  try {
    return { post, access: await visibleCircle(w.store, String(post.circle_id), callerOf(u)) };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'circle_not_found') throw new DomainError(404, 'circle_post_not_found', 'no post');
    throw err;
  }
}

/** The sequence's routes on the in-process system, appending what they decide. */
function applied(w: World): RoleRoutes {
  return {
    name: (u) => routes.name(w, ROOT, u, true),
    join: (u) => routes.join(w, u, true),
    remove: (by, u) => routes.remove(w, by, u, true),
    add: (by, u, c) => routes.add(w, by, u, c, true),
    joinCircle: async (u, c) => {
      const before = new Set((await joinRequests(w.store, [COMMUNITY], 'pending', 100)).map((r) => r._id));
      const status = await routes.joinCircle(w, u, c, true);
      const made = (await joinRequests(w.store, [COMMUNITY], 'pending', 100)).find((r) => !before.has(r._id));
      return { status, requestId: made?._id };
    },
    decide: (by, r, approve) => routes.decide(w, by, r, approve, true),
    visibility: (by, c, v) => routes.visibility(w, by, c, v, true),
    deleteCircle: (by, c) => routes.deleteCircle(w, by, c, true),
    createCircle: async (by, v) => {
      const circleId = w.nextId('crc');
      return { status: await routes.createCircle(w, by, v, circleId, true), circleId };
    },
    code: (by, status) => routes.code(w, by, status, true),
    post: async (u, c) => {
      const postId = w.nextId('cpo');
      return { status: await routes.post(w, u, c, postId, true), postId };
    },
  };
}

async function setUp(w: World, m: Model, second: Visibility): Promise<void> {
  await w.init();
  const first = 'crc_first';
  await w.onCommunity(
    (s) =>
      decideCreateCommunity(
        {
          type: 'CreateCommunity',
          data: { name: 'Prop', description: '', open: false, created_by: ROOT },
          metadata: { now: NOW, community_id: COMMUNITY, circle_id: first },
        },
        s,
      ),
    true,
  );
  m.circles.push({ id: first, vis: 'community', deleted: false, members: new Set() });
  const secondId = w.nextId('crc');
  expect(await routes.createCircle(w, ROOT, second, secondId, true)).to.equal(201);
  m.circles.push({ id: secondId, vis: second, deleted: false, members: new Set() });
  w.codeId = 'icd_prop';
  w.code = 'PROPCODE23';
  await w.onCommunity(
    (s) =>
      decideCreateInviteCode(
        {
          type: 'CreateInviteCode',
          data: { actor: actorOf(ROOT), label: null, max_uses: null, expires_at: null },
          metadata: { now: NOW, code_id: w.codeId, code: w.code },
        },
        s,
      ),
    true,
  );
}

/** Every route, for everyone, on the final state: the answers the final roles allow, and the lists they show. */
async function checkEveryRoute(w: World, m: Model, log: string[]): Promise<void> {
  const ids = (docs: Array<Record<string, unknown>>, key: string) => docs.map((d) => String(d[key])).sort();
  const sorted = (s: Iterable<string>) => [...s].sort();
  for (const u of EVERYONE) {
    const caller = callerOf(u);
    const admin = isAdmin(m, u);
    const at = (route: string) => `${route} as ${u} after\n${log.join('\n')}`;
    const gate = (expected: number, actual: number, route: string) => expect(actual, at(route)).to.equal(expected);
    const scoped = (id?: string) => statusOf(200, () => adminScope(w.store, caller, id));

    // Community admin reads.
    gate(admin ? 200 : 403, await scoped(COMMUNITY), 'GET dashboard | members | invite-analytics | circle-requests ?community_id');
    if (u !== ROOT) gate(admin ? 200 : 403, await scoped(), 'GET dashboard | members | circle-requests (own communities)');
    if (u !== ROOT && admin) expect(ids(await adminScope(w.store, caller), '_id'), at('GET dashboard')).to.deep.equal([COMMUNITY]);
    const code = await codeByValue(w.store, w.code);
    gate(admin ? 200 : 403, await statusOf(200, () => adminScope(w.store, caller, String(code?.community_id))), 'GET code-qr/{code}');
    if (admin) {
      const list = await communityMembers(w.store, { communityIds: [COMMUNITY], skip: 0, limit: 100 });
      expect(ids(list.docs, 'user_id'), at('GET members')).to.deep.equal(sorted(m.members));
      expect(list.total, at('GET members total')).to.equal(m.members.size);
      for (const c of liveCircles(m)) {
        const inCircle = await communityMembers(w.store, { communityIds: [COMMUNITY], circleId: c.id, skip: 0, limit: 100 });
        expect(ids(inCircle.docs, 'user_id'), at(`GET members?circle_filter=${c.id}`)).to.deep.equal(sorted(c.members));
      }
      const pending = await joinRequests(w.store, [COMMUNITY], 'pending', 100);
      expect(ids(pending, '_id'), at('GET circle-requests?status=pending')).to.deep.equal(
        sorted(m.requests.filter((r) => r.status === 'pending').map((r) => r.id)),
      );
    }

    // Community admin writes, decided and not appended.
    gate(admin ? 201 : 403, await routes.createCode(w, u), 'POST codes');
    gate(admin ? 200 : 403, await routes.code(w, u, m.codeStatus, false), 'PUT codes/{id}');
    gate(admin ? 201 : 403, await routes.createCircle(w, u, 'community', 'crc_dry', false), 'POST circles');
    gate(admin ? 404 : 403, await routes.remove(w, u, 'usr_nobody', false), 'DELETE members/{not a member}');
    for (const v of USERS) gate(!admin ? 403 : m.members.has(v) ? 200 : 404, await routes.remove(w, u, v, false), `DELETE members/${v}`);
    for (const r of m.requests)
      for (const approve of [true, false])
        gate(
          !admin ? 403 : r.status === 'pending' ? 200 : 409,
          await routes.decide(w, u, r.id, approve, false),
          `POST circle-requests/${r.id}/${approve ? 'approve' : 'reject'}`,
        );
    gate(admin ? 404 : 403, await routes.decide(w, u, 'cjr_none', true, false), 'POST circle-requests/{unknown}/approve');

    // Every circle, live or deleted: admin routes by its id, and the member routes.
    for (const c of m.circles) {
      const base = adminCircleExpectation(m, u, c);
      gate(base, await routes.visibility(w, u, c.id, c.vis, false), `PUT circles/${c.id}/visibility`);
      for (const v of USERS)
        gate(base !== 200 ? base : m.members.has(v) ? 200 : 404, await routes.add(w, u, v, c.id, false), `POST circles/${c.id}/members ${v}`);

      const seen = visible(m, u, c);
      const access = await statusOf(200, async () => {
        const a = await visibleCircle(w.store, c.id, caller);
        expect(a.admin, at(`GET /api/brew-circles/${c.id} is_admin`)).to.equal(admin);
        expect(a.member, at(`GET /api/brew-circles/${c.id} is_member`)).to.equal(c.members.has(u));
      });
      gate(seen ? 200 : 404, access, `GET /api/brew-circles/${c.id} (and its posts, members, search, trending tags, check-new)`);
      if (seen) expect(ids(await circleMembers(w.store, c.id, { skip: 0, limit: 100 }), 'user_id'), at(`GET ${c.id}/members`)).to.deep.equal(sorted(c.members));
      gate(!seen ? 404 : c.members.has(u) ? 201 : 403, await routes.post(w, u, c.id, 'cpo_dry', false), `POST posts in ${c.id}`);
      gate(joinExpectation(m, u, c).status, await routes.joinCircle(w, u, c.id, false), `POST ${c.id}/join`);
      gate(deleteExpectation(m, u, c), await routes.deleteCircle(w, u, c.id, false), `DELETE /api/brew-circles/${c.id}`);
    }

    // The community's circles the caller sees, and their own circles.
    const listed: string[] = [];
    for (const c of await circlesOf(w.store, COMMUNITY)) if ((await statusOf(200, () => visibleCircle(w.store, c._id, caller))) === 200) listed.push(c._id);
    expect(listed, at(`GET /api/brew-circles/community/${COMMUNITY}`)).to.deep.equal(m.circles.filter((c) => visible(m, u, c)).map((c) => c.id));
    const mine: string[] = [];
    for (const mm of await userCircles(w.store, u)) if (await getCircle(w.store, String(mm.circle_id))) mine.push(String(mm.circle_id));
    expect(mine.sort(), at('GET /api/brew-circles/user/circles')).to.deep.equal(
      sorted(m.circles.filter((c) => !c.deleted && c.members.has(u)).map((c) => c.id)),
    );

    // Posts by their id: read, replies, reply, react, edit.
    for (const p of m.posts) {
      const c = circleOf(m, p.circle);
      const seen = c !== undefined && visible(m, u, c);
      const member = c?.members.has(u) === true;
      gate(seen ? 200 : 404, await statusOf(200, () => visiblePost(w, p.id, u)), `GET posts/${p.id} (and its replies)`);
      const reply = await statusOf(201, async () => {
        const { access } = await visiblePost(w, p.id, u);
        const data = { author_id: u, author_name: u, is_member: access.member, content: 'Re', parent_reply_id: null, mentions: [] };
        await w.onPost(p.id, (s) => decideAddCircleReply({ type: 'AddCircleReply', data, metadata: { now: NOW, reply_id: 'crp_dry' } }, s), false);
      });
      gate(!seen ? 404 : member ? 201 : 403, reply, `POST replies to ${p.id} (and reactions)`);
      const edit = await statusOf(200, async () => {
        await visiblePost(w, p.id, u);
        await w.onPost(p.id, (s) => decideEditCirclePost({ type: 'EditCirclePost', data: { user_id: u, content: 'Edited' }, metadata: meta }, s), false);
      });
      gate(!seen ? 404 : p.author === u ? 200 : 403, edit, `PUT posts/${p.id} (and DELETE)`);
    }
  }
}

describe('queries: community and circle authorisation follows every grant and revocation (property)', function () {
  this.timeout(120_000);

  it(`for ${RUNS} random sequences of grants and revocations, every route answers as the final roles allow`, async () => {
    await fc.assert(
      fc.asyncProperty(visibility, fc.array(opArbitrary(ROOT, USERS), { minLength: 1, maxLength: 14 }), async (second, ops) => {
        const w = new World();
        const m = newModel(ROOT);
        const log: string[] = [];
        await setUp(w, m, second);
        const sequence = applied(w);
        for (const o of ops) await step(sequence, m, o, log);
        await checkEveryRoute(w, m, log);
      }),
      { numRuns: RUNS },
    );
  });
});
