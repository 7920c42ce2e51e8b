import { expect } from 'chai';
import fc from 'fast-check';
import type { CodeStatus, Visibility } from '../../events/communities.ts';

/**
 * The community-roles property (test/queries/communities/authorisation.property.test.ts in
 * process, test/api/community-roles.property.test.ts over HTTP): sequences of role grants and
 * revocations, and a model of the roles written from the rules in docs/COMMUNITIES.md, not from
 * the code.
 */

export const VISIBILITIES: Visibility[] = ['public', 'community', 'private'];

/** One grant or revocation: `by` acts (the super admin or a user), `u` is the user it concerns, `c` picks a circle. */
export type Op =
  | { k: 'name'; u: string }
  | { k: 'join'; u: string }
  | { k: 'remove'; by: string; u: string }
  | { k: 'add'; by: string; u: string; c: number }
  | { k: 'joinCircle'; u: string; c: number }
  | { k: 'decide'; by: string; r: number; approve: boolean }
  | { k: 'visibility'; by: string; c: number; v: Visibility }
  | { k: 'deleteCircle'; by: string; c: number }
  | { k: 'createCircle'; by: string; v: Visibility }
  | { k: 'code'; by: string; status: CodeStatus }
  | { k: 'post'; u: string; c: number };

export const visibility = fc.constantFrom(...VISIBILITIES);

export function opArbitrary(root: string, users: readonly string[]): fc.Arbitrary<Op> {
  const user = fc.constantFrom(...users);
  const anyone = fc.constantFrom(root, ...users);
  const circle = fc.nat(5);
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ k: fc.constant('name' as const), u: user }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('join' as const), u: user }) },
    { weight: 4, arbitrary: fc.record({ k: fc.constant('remove' as const), by: anyone, u: user }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant('add' as const), by: anyone, u: user, c: circle }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('joinCircle' as const), u: user, c: circle }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('decide' as const), by: anyone, r: fc.nat(3), approve: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('visibility' as const), by: anyone, c: circle, v: visibility }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('deleteCircle' as const), by: anyone, c: circle }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('createCircle' as const), by: anyone, v: visibility }) },
    {
      weight: 1,
      arbitrary: fc.record({ k: fc.constant('code' as const), by: anyone, status: fc.constantFrom<CodeStatus>('active', 'paused', 'revoked') }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('post' as const), u: user, c: circle }) },
  );
}

export interface ModelCircle {
  id: string;
  vis: Visibility;
  deleted: boolean;
  members: Set<string>;
}
export interface Model {
  /** The super admin. */
  root: string;
  admins: Set<string>;
  members: Set<string>;
  /** In creation order; the first is the community's first circle. */
  circles: ModelCircle[];
  codeStatus: CodeStatus;
  requests: Array<{ id: string; circle: string; user: string; status: 'pending' | 'approved' | 'rejected' }>;
  posts: Array<{ id: string; circle: string; author: string }>;
}

export const newModel = (root: string): Model => ({ root, admins: new Set(), members: new Set(), circles: [], codeStatus: 'active', requests: [], posts: [] });

export const isAdmin = (m: Model, u: string) => u === m.root || m.admins.has(u);
export const circleOf = (m: Model, id: string) => m.circles.find((c) => c.id === id);
/** Public to anyone, community to its members, private to its members; admins see every circle. */
export const visible = (m: Model, u: string, c: ModelCircle) =>
  !c.deleted && (isAdmin(m, u) || c.members.has(u) || c.vis === 'public' || (c.vis === 'community' && m.members.has(u)));
export const liveCircles = (m: Model) => m.circles.filter((c) => !c.deleted);
const pendingOf = (m: Model, u: string, c: ModelCircle) => m.requests.some((r) => r.user === u && r.circle === c.id && r.status === 'pending');

/** What joining a circle answers: 404 unseen or closed to joining, else joined or pending (`already`: nothing changes). */
export function joinExpectation(m: Model, u: string, c: ModelCircle): { status: number; outcome: 'none' | 'joined' | 'pending' | 'already' } {
  if (!visible(m, u, c)) return { status: 404, outcome: 'none' };
  if (c.members.has(u)) return { status: 200, outcome: 'already' };
  if (c.vis === 'private') return { status: 404, outcome: 'none' };
  if (c.vis === 'community') return m.members.has(u) ? { status: 200, outcome: 'joined' } : { status: 404, outcome: 'none' };
  if (m.members.has(u)) return { status: 200, outcome: 'joined' };
  return { status: 200, outcome: pendingOf(m, u, c) ? 'already' : 'pending' };
}
/** Deleting a circle: 404 unseen, 403 to a non-admin, 409 for the last circle. */
export function deleteExpectation(m: Model, u: string, c: ModelCircle): number {
  if (!visible(m, u, c)) return 404;
  if (!isAdmin(m, u)) return 403;
  return liveCircles(m).length <= 1 ? 409 : 200;
}
/** An admin route on a circle by its id: 403 to a non-admin, 404 for a deleted circle to an admin. */
export const adminCircleExpectation = (m: Model, u: string, c: ModelCircle) => (!isAdmin(m, u) ? 403 : c.deleted ? 404 : 200);

/** The routes a sequence goes through, each answering its status (and the id a create made). */
export interface RoleRoutes {
  name(u: string): Promise<number>;
  join(u: string): Promise<number>;
  remove(by: string, u: string): Promise<number>;
  add(by: string, u: string, circleId: string): Promise<number>;
  joinCircle(u: string, circleId: string): Promise<{ status: number; requestId?: string }>;
  decide(by: string, requestId: string, approve: boolean): Promise<number>;
  visibility(by: string, circleId: string, v: Visibility): Promise<number>;
  deleteCircle(by: string, circleId: string): Promise<number>;
  createCircle(by: string, v: Visibility): Promise<{ status: number; circleId?: string }>;
  code(by: string, status: CodeStatus): Promise<number>;
  post(u: string, circleId: string): Promise<{ status: number; postId?: string }>;
}

/** Runs one operation through its route, checks its answer against the model, and moves the model on. */
export async function step(routes: RoleRoutes, m: Model, o: Op, log: string[]): Promise<void> {
  const circle = 'c' in o ? m.circles[o.c % m.circles.length] : undefined;
  const say = (expected: number, actual: number) => {
    log.push(`${JSON.stringify(o)} -> ${actual}`);
    expect(actual, `${JSON.stringify(o)} after\n${log.join('\n')}`).to.equal(expected);
  };
  switch (o.k) {
    case 'name': {
      say(200, await routes.name(o.u));
      m.admins.add(o.u);
      m.members.add(o.u);
      return;
    }
    case 'join': {
      const expected = m.members.has(o.u) || m.codeStatus === 'active' ? 200 : 409;
      say(expected, await routes.join(o.u));
      if (expected === 200 && !m.members.has(o.u)) {
        m.members.add(o.u);
        const first = m.circles[0];
        if (!first.deleted) first.members.add(o.u);
      }
      return;
    }
    case 'remove': {
      const expected = !isAdmin(m, o.by) ? 403 : !m.members.has(o.u) ? 404 : 200;
      say(expected, await routes.remove(o.by, o.u));
      if (expected === 200) {
        m.members.delete(o.u);
        m.admins.delete(o.u);
        for (const c of m.circles) c.members.delete(o.u);
      }
      return;
    }
    case 'add': {
      if (!circle) return;
      const base = adminCircleExpectation(m, o.by, circle);
      const expected = base !== 200 ? base : m.members.has(o.u) ? 200 : 404;
      say(expected, await routes.add(o.by, o.u, circle.id));
      if (expected === 200) circle.members.add(o.u);
      return;
    }
    case 'joinCircle': {
      if (!circle) return;
      const { status, outcome } = joinExpectation(m, o.u, circle);
      const r = await routes.joinCircle(o.u, circle.id);
      say(status, r.status);
      if (outcome === 'joined') circle.members.add(o.u);
      if (outcome === 'pending') {
        expect(r.requestId, `${JSON.stringify(o)}: the pending request`).to.be.a('string');
        m.requests.push({ id: String(r.requestId), circle: circle.id, user: o.u, status: 'pending' });
      }
      return;
    }
    case 'decide': {
      const r = m.requests[o.r % Math.max(1, m.requests.length)];
      if (!r) {
        say(isAdmin(m, o.by) ? 404 : 403, await routes.decide(o.by, 'cjr_none', o.approve));
        return;
      }
      const expected = !isAdmin(m, o.by) ? 403 : r.status !== 'pending' ? 409 : 200;
      say(expected, await routes.decide(o.by, r.id, o.approve));
      if (expected !== 200) return;
      const c = circleOf(m, r.circle);
      if (o.approve && c && !c.deleted) {
        r.status = 'approved';
        m.members.add(r.user);
        c.members.add(r.user);
      } else r.status = 'rejected';
      return;
    }
    case 'visibility': {
      if (!circle) return;
      const expected = adminCircleExpectation(m, o.by, circle);
      say(expected, await routes.visibility(o.by, circle.id, o.v));
      if (expected === 200) circle.vis = o.v;
      return;
    }
    case 'deleteCircle': {
      if (!circle) return;
      const expected = deleteExpectation(m, o.by, circle);
      say(expected, await routes.deleteCircle(o.by, circle.id));
      if (expected === 200) {
        circle.deleted = true;
        circle.members.clear();
      }
      return;
    }
    case 'createCircle': {
      const expected = isAdmin(m, o.by) ? 201 : 403;
      const r = await routes.createCircle(o.by, o.v);
      say(expected, r.status);
      if (expected === 201) m.circles.push({ id: String(r.circleId), vis: o.v, deleted: false, members: new Set() });
      return;
    }
    case 'code': {
      const expected = isAdmin(m, o.by) ? 200 : 403;
      say(expected, await routes.code(o.by, o.status));
      if (expected === 200) m.codeStatus = o.status;
      return;
    }
    case 'post': {
      if (!circle) return;
      const expected = !visible(m, o.u, circle) ? 404 : circle.members.has(o.u) ? 201 : 403;
      const r = await routes.post(o.u, circle.id);
      say(expected, r.status);
      if (expected === 201) m.posts.push({ id: String(r.postId), circle: circle.id, author: o.u });
      return;
    }
    default: {
      const _exhaustive: never = o;
      return _exhaustive;
    }
  }
}
