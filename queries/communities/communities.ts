import { forbidden, notFound } from '../../events/kernel/errors.ts';
import type { Filter, ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { listPage } from '../cursor.ts';

/** The caller as the admin routes see them. */
export interface Caller {
  userId: string;
  roles: string[];
}
export const isSuper = (c: Caller) => c.roles.includes('super_admin');

export const getCommunity = (store: ReadStore, id: string) => store.collection('communities').findOne({ _id: id });
export const getCircle = async (store: ReadStore, id: string) => {
  const c = await store.collection('circles').findOne({ _id: id });
  return c && c.deleted !== true ? c : null;
};
export const getCode = (store: ReadStore, id: string) => store.collection('invite_codes').findOne({ _id: id });
export const codeByValue = (store: ReadStore, code: string) => store.collection('invite_codes').findOne({ code: code.toUpperCase() }, { hint: 'by_code' });
export const getJoinRequest = (store: ReadStore, id: string) => store.collection('circle_join_requests').findOne({ _id: id });

/** Communities the user administers (index `by_admin`). */
export async function administered(store: ReadStore, userId: string) {
  return store.collection('communities').find({ admins: userId }, { hint: 'by_admin' });
}

export async function allCommunities(store: ReadStore) {
  return store.collection('communities').find({ all: true }, { sort: { all: 1, created_at: 1 }, hint: 'all' });
}

/**
 * The communities an admin route acts on: the one asked for (404 if none; 403 unless the caller
 * administers it or is a super admin), or without one every community the caller administers
 * (all for a super admin; 403 when there is none).
 */
export async function adminScope(store: ReadStore, caller: Caller, communityId?: string) {
  if (communityId) {
    const c = await getCommunity(store, communityId);
    if (!c) {
      if (!isSuper(caller) && (await administered(store, caller.userId)).length === 0)
        throw forbidden('This needs a community admin (or a super admin)', 'community_admin_required');
      throw notFound('Community', 'community_not_found');
    }
    if (!isSuper(caller) && !(c.admins ?? []).includes(caller.userId))
      throw forbidden('This needs a community admin of this community', 'community_admin_required');
    return [c];
  }
  if (isSuper(caller)) return allCommunities(store);
  const mine = await administered(store, caller.userId);
  if (mine.length === 0) throw forbidden('This needs a community admin (or a super admin)', 'community_admin_required');
  return mine;
}

export function communityView(c: ReadModel<'communities'>) {
  return {
    community_id: c._id,
    name: c.name,
    description: c.description,
    open: c.open === true,
    admins: c.admins ?? [],
    created_at: c.created_at,
  };
}

export function circleView(c: ReadModel<'circles'>, extra: Record<string, unknown> = {}) {
  return {
    circle_id: c._id,
    community_id: c.community_id,
    name: c.name,
    description: c.description,
    visibility: c.visibility,
    created_at: c.created_at,
    ...extra,
  };
}

export function codeView(c: ReadModel<'invite_codes'>, publicBaseUrl: string) {
  return {
    code_id: c._id,
    community_id: c.community_id,
    code: c.code,
    label: c.label ?? null,
    status: c.status,
    uses: c.uses ?? 0,
    max_uses: c.max_uses ?? null,
    expires_at: c.expires_at ?? null,
    active_members: c.active_members ?? 0,
    join_url: joinUrl(publicBaseUrl, String(c.code)),
    created_at: c.created_at,
  };
}

export const joinUrl = (publicBaseUrl: string, code: string) => `${publicBaseUrl}/join/${encodeURIComponent(code)}`;

export function requestView(r: ReadModel<'circle_join_requests'>) {
  return {
    request_id: r._id,
    circle_id: r.circle_id,
    community_id: r.community_id,
    user_id: r.user_id,
    full_name: r.full_name,
    status: r.status,
    admin_note: r.admin_note ?? '',
    requested_at: r.requested_at,
    decided_at: r.decided_at ?? null,
  };
}

const LIVE_COMMUNITY = { live_community: 1 } as const;
const LIVE_CIRCLE = { live_circle: 1 } as const;
const ADMINS = { admins: 1 } as const;

/** A community's admins (user ids), or null when there is no such community. */
export async function communityAdmins(store: ReadStore, communityId: string): Promise<string[] | null> {
  const c = await store.collection('communities').findOne({ _id: communityId }, { projection: ADMINS });
  return c === null ? null : (c.admins ?? []);
}

/** Whether the user is (still) a member of the community / circle. */
export async function isCommunityMember(store: ReadStore, communityId: string, userId: string): Promise<boolean> {
  const m = await store.collection('community_members').findOne({ _id: `${communityId}:${userId}` }, { projection: LIVE_COMMUNITY });
  return m?.live_community === communityId;
}
export async function isCircleMember(store: ReadStore, circleId: string, userId: string): Promise<boolean> {
  const m = await store.collection('circle_members').findOne({ _id: `${circleId}:${userId}` }, { projection: LIVE_CIRCLE });
  return m?.live_circle === circleId;
}

/**
 * The public circles of open communities, newest first (index `public_circles`): what a homepage
 * lists (spec: "public is visible on the homepage if the community is open").
 */
export function publicCircles(store: ReadStore, skip: number, limit: number) {
  return store.collection('circles').find({ public_listed: true }, { sort: { public_listed: 1, seq: -1 }, skip, limit, hint: 'public_circles' });
}

/** Circles of a community, oldest first (index `by_community`). */
export function circlesOf(store: ReadStore, communityId: string) {
  return store.collection('circles').find({ live_community: communityId }, { sort: { live_community: 1, seq: 1 }, hint: 'by_community' });
}

/** Counts for the dashboard, each an index range count. */
export async function communityStats(store: ReadStore, communityId: string) {
  const [members, circles, pending, codes] = await Promise.all([
    store.collection('community_members').count({ live_community: communityId }, { hint: 'by_community' }),
    circlesOf(store, communityId),
    store.collection('circle_join_requests').count({ community_id: communityId, status: 'pending' }, { hint: 'by_community_status' }),
    store.collection('invite_codes').find({ community_id: communityId }, { sort: { community_id: 1, seq: -1 }, hint: 'by_community' }),
  ]);
  return {
    members,
    circles: circles.length,
    pending_requests: pending,
    invite_codes: codes.length,
    active_codes: codes.filter((c) => c.status === 'active').length,
    code_uses: codes.reduce((n, c) => n + Number(c.uses ?? 0), 0),
  };
}

/**
 * Members of the given communities, newest first, paged by page/limit: by circle (index
 * `by_circle`), else by community (`by_community`); `search` filters the names in that range.
 */
/** Members of the communities (of a circle, matching a name), newest first, paged by the one cursor (queries/cursor.ts listPage). */
export async function communityMembers(
  store: ReadStore,
  opts: { communityIds: string[]; circleId?: string; search?: string; skip: number; limit: number; after?: Cursor },
) {
  const filter: Filter = opts.circleId ? { circles: opts.circleId } : { live_community: { $in: opts.communityIds } };
  if (opts.circleId) filter.live_community = { $in: opts.communityIds };
  if (opts.search) filter.name_lower = { $regex: escapeRegex(opts.search.toLowerCase()) };
  const hint = opts.circleId ? 'by_circle' : 'by_community';
  const col = store.collection('community_members');
  const [page, total] = await Promise.all([listPage(col, filter, opts), col.count(filter, { hint })]);
  return { docs: page.docs, total, next_cursor: page.next_cursor, has_more: page.has_more };
}

export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function memberView(m: ReadModel<'community_members'>) {
  return {
    user_id: m.user_id,
    community_id: m.community_id,
    full_name: m.full_name,
    circles: m.circles ?? [],
    code_id: m.code_id ?? null,
    joined_at: m.joined_at,
  };
}

/** Invite analytics of one community: uses and active members per code, joins per day. */
export async function inviteAnalytics(store: ReadStore, communityId: string) {
  const [codes, days] = await Promise.all([
    store.collection('invite_codes').find({ community_id: communityId }, { sort: { community_id: 1, seq: -1 }, hint: 'by_community' }),
    store.collection('invite_days').find({ community_id: communityId }, { sort: { community_id: 1, day: 1 }, hint: 'by_community_day' }),
  ]);
  return {
    community_id: communityId,
    total_uses: codes.reduce((n, c) => n + Number(c.uses ?? 0), 0),
    codes: codes.map((c) => ({
      code_id: c._id,
      code: c.code,
      label: c.label ?? null,
      status: c.status,
      uses: c.uses ?? 0,
      max_uses: c.max_uses ?? null,
      active_members: c.active_members ?? 0,
    })),
    joins_per_day: days.map((d) => ({ date: d.day, joins: d.joins })),
  };
}

/** Join requests of the given communities, newest first, optionally of one status. */
export async function joinRequests(store: ReadStore, communityIds: string[], status: string | undefined, limit: number) {
  const col = store.collection('circle_join_requests');
  const out: Array<ReadModel<'circle_join_requests'>> = [];
  for (const id of communityIds) {
    const filter: Filter = status ? { community_id: id, status } : { community_id: id };
    out.push(...(await col.find(filter, { sort: { seq: -1 }, limit, hint: status ? 'by_community_status' : 'by_community' })));
  }
  return out.sort((a, b) => Number(b.seq) - Number(a.seq)).slice(0, limit);
}

/** The communities the user is a member of, newest membership first (index `by_user`, bounded). */
export async function memberCommunities(store: ReadStore, userId: string, limit = 200) {
  const memberships = await store.collection('community_members').find({ live_user: userId }, { sort: { live_user: 1, seq: -1 }, limit, hint: 'by_user' });
  const out: Array<NonNullable<Awaited<ReturnType<typeof getCommunity>>>> = [];
  for (const m of memberships) {
    const c = await getCommunity(store, String(m.community_id));
    if (c) out.push(c);
  }
  return out;
}

/** The user's own requests to join circles of one community, newest first (the community's range of index `by_community`). */
export function memberJoinRequests(store: ReadStore, communityId: string, userId: string, limit = 100) {
  return store
    .collection('circle_join_requests')
    .find({ community_id: communityId, user_id: userId }, { sort: { community_id: 1, seq: -1 }, limit, hint: 'by_community' });
}
