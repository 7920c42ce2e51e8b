import type {
  CircleCreated,
  CircleDeleted,
  CircleJoinRequestDecided,
  CircleJoinRequested,
  CircleMemberJoined,
  CircleVisibilityChanged,
  CodeStatus,
  CommunityAdminNamed,
  CommunityCreated,
  CommunityEvent,
  CommunityMemberJoined,
  CommunityMemberRemoved,
  InviteCodeCreated,
  InviteCodeStatusChanged,
  Visibility,
} from '../../events/communities.ts';
import { DomainError, forbidden, notFound } from '../../events/kernel/errors.ts';
import type { Aggregate, Command } from '../handler.ts';

export interface CircleInfo {
  name: string;
  visibility: Visibility;
  deleted: boolean;
  /** Members by user id. */
  members: Readonly<Record<string, true>>;
}
export interface CodeInfo {
  code: string;
  status: CodeStatus;
  uses: number;
  max_uses: number | null;
  expires_at: string | null;
}
export interface RequestInfo {
  circle_id: string;
  user_id: string;
  status: 'pending' | 'approved' | 'rejected';
}

/** `community-<id>`: the community, its admins, members, circles, invite codes and circle join requests. */
export interface CommunityState {
  exists: boolean;
  community_id: string;
  name: string;
  /** The circle made with the community; members joining with a code join it at once. */
  first_circle_id: string | null;
  admins: Readonly<Record<string, true>>;
  members: Readonly<Record<string, true>>;
  circles: Readonly<Record<string, CircleInfo>>;
  codes: Readonly<Record<string, CodeInfo>>;
  requests: Readonly<Record<string, RequestInfo>>;
}

const without = <T>(rec: Readonly<Record<string, T>>, key: string): Record<string, T> => {
  const next = { ...rec };
  delete next[key];
  return next;
};

export const communityAggregate: Aggregate<CommunityState, CommunityEvent> = {
  initialState: () => ({ exists: false, community_id: '', name: '', first_circle_id: null, admins: {}, members: {}, circles: {}, codes: {}, requests: {} }),
  evolve(state, event) {
    switch (event.type) {
      case 'CommunityCreated':
        return { ...state, exists: true, community_id: event.data.community_id, name: event.data.name };
      case 'CommunityAdminNamed':
        return { ...state, admins: { ...state.admins, [event.data.user_id]: true } };
      case 'CircleCreated': {
        const d = event.data;
        return {
          ...state,
          first_circle_id: state.first_circle_id ?? d.circle_id,
          circles: { ...state.circles, [d.circle_id]: { name: d.name, visibility: d.visibility, deleted: false, members: {} } },
        };
      }
      case 'CircleVisibilityChanged': {
        const c = state.circles[event.data.circle_id];
        return c ? { ...state, circles: { ...state.circles, [event.data.circle_id]: { ...c, visibility: event.data.visibility } } } : state;
      }
      case 'CircleDeleted': {
        const c = state.circles[event.data.circle_id];
        return c ? { ...state, circles: { ...state.circles, [event.data.circle_id]: { ...c, deleted: true } } } : state;
      }
      case 'InviteCodeCreated': {
        const d = event.data;
        return {
          ...state,
          codes: { ...state.codes, [d.code_id]: { code: d.code, status: 'active', uses: 0, max_uses: d.max_uses, expires_at: d.expires_at } },
        };
      }
      case 'InviteCodeStatusChanged': {
        const c = state.codes[event.data.code_id];
        return c ? { ...state, codes: { ...state.codes, [event.data.code_id]: { ...c, status: event.data.status } } } : state;
      }
      case 'CommunityMemberJoined': {
        const d = event.data;
        const code = d.code_id ? state.codes[d.code_id] : undefined;
        const codes = code && d.code_id ? { ...state.codes, [d.code_id]: { ...code, uses: code.uses + 1 } } : state.codes;
        return { ...state, members: { ...state.members, [d.user_id]: true }, codes };
      }
      case 'CommunityMemberRemoved': {
        const user = event.data.user_id;
        const circles: Record<string, CircleInfo> = {};
        for (const [id, c] of Object.entries(state.circles)) circles[id] = c.members[user] ? { ...c, members: without(c.members, user) } : c;
        return { ...state, members: without(state.members, user), admins: without(state.admins, user), circles };
      }
      case 'CircleMemberJoined': {
        const c = state.circles[event.data.circle_id];
        if (!c) return state;
        return { ...state, circles: { ...state.circles, [event.data.circle_id]: { ...c, members: { ...c.members, [event.data.user_id]: true } } } };
      }
      case 'CircleJoinRequested': {
        const d = event.data;
        return { ...state, requests: { ...state.requests, [d.request_id]: { circle_id: d.circle_id, user_id: d.user_id, status: 'pending' } } };
      }
      case 'CircleJoinRequestDecided': {
        const r = state.requests[event.data.request_id];
        return r ? { ...state, requests: { ...state.requests, [event.data.request_id]: { ...r, status: event.data.status } } } : state;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

/** Who acts: a user id, and whether they are a super admin (who may act on any community). */
export interface Actor {
  user_id: string;
  super_admin: boolean;
}

function liveCommunity(state: CommunityState): void {
  if (!state.exists) throw notFound('Community', 'community_not_found');
}
/** Super admins act on any community, community admins on their own; anyone else 403. */
export function assertCommunityAdmin(state: CommunityState, actor: Actor): void {
  liveCommunity(state);
  if (!actor.super_admin && !state.admins[actor.user_id]) throw forbidden('This needs a community admin of this community', 'community_admin_required');
}
function liveCircle(state: CommunityState, circleId: string): CircleInfo {
  const c = state.circles[circleId];
  if (!c || c.deleted) throw notFound('Circle', 'circle_not_found');
  return c;
}

const iso = (d: Date) => d.toISOString();

export type CreateCommunity = Command<
  'CreateCommunity',
  { name: string; description: string; open: boolean; created_by: string },
  { now: Date; community_id: string; circle_id: string }
>;
/** A new community and its first circle (visible to the community's members, named after it). */
export function decideCreateCommunity(command: CreateCommunity, state: CommunityState): Array<CommunityCreated | CircleCreated> {
  if (state.exists) return [];
  const { community_id, circle_id, now } = command.metadata;
  const d = command.data;
  return [
    {
      type: 'CommunityCreated',
      data: { community_id, name: d.name, description: d.description, open: d.open, created_by: d.created_by, created_at: iso(now) },
    },
    {
      type: 'CircleCreated',
      data: { circle_id, community_id, name: d.name, description: d.description, visibility: 'community', created_by: d.created_by, created_at: iso(now) },
    },
  ];
}

export type NameCommunityAdmin = Command<'NameCommunityAdmin', { user_id: string; full_name: string | null; named_by: string }>;
/** A super admin names an existing user community admin; they become a member too. Naming twice changes nothing. */
export function decideNameCommunityAdmin(command: NameCommunityAdmin, state: CommunityState): Array<CommunityAdminNamed | CommunityMemberJoined> {
  liveCommunity(state);
  const { user_id, full_name, named_by } = command.data;
  if (full_name === null) throw notFound('User', 'user_not_found');
  if (state.admins[user_id]) return [];
  const at = iso(command.metadata.now);
  const named: CommunityAdminNamed = { type: 'CommunityAdminNamed', data: { community_id: state.community_id, user_id, full_name, named_by, named_at: at } };
  if (state.members[user_id]) return [named];
  return [named, { type: 'CommunityMemberJoined', data: { community_id: state.community_id, user_id, full_name, code_id: null, joined_at: at } }];
}

export type CreateCircle = Command<
  'CreateCircle',
  { actor: Actor; name: string; description: string; visibility: Visibility },
  { now: Date; circle_id: string }
>;
export function decideCreateCircle(command: CreateCircle, state: CommunityState): CircleCreated[] {
  assertCommunityAdmin(state, command.data.actor);
  if (state.circles[command.metadata.circle_id]) return [];
  const d = command.data;
  return [
    {
      type: 'CircleCreated',
      data: {
        circle_id: command.metadata.circle_id,
        community_id: state.community_id,
        name: d.name,
        description: d.description,
        visibility: d.visibility,
        created_by: d.actor.user_id,
        created_at: iso(command.metadata.now),
      },
    },
  ];
}

export type SetCircleVisibility = Command<'SetCircleVisibility', { actor: Actor; circle_id: string; visibility: Visibility }>;
export function decideSetCircleVisibility(command: SetCircleVisibility, state: CommunityState): CircleVisibilityChanged[] {
  assertCommunityAdmin(state, command.data.actor);
  const c = liveCircle(state, command.data.circle_id);
  if (c.visibility === command.data.visibility) return [];
  return [
    {
      type: 'CircleVisibilityChanged',
      data: {
        circle_id: command.data.circle_id,
        community_id: state.community_id,
        visibility: command.data.visibility,
        changed_by: command.data.actor.user_id,
        changed_at: iso(command.metadata.now),
      },
    },
  ];
}

export type DeleteCircle = Command<'DeleteCircle', { actor: Actor; circle_id: string }>;
/** Admin only; a community keeps at least one circle (409 `last_circle`). */
export function decideDeleteCircle(command: DeleteCircle, state: CommunityState): CircleDeleted[] {
  assertCommunityAdmin(state, command.data.actor);
  liveCircle(state, command.data.circle_id);
  const live = Object.values(state.circles).filter((c) => !c.deleted).length;
  if (live <= 1) throw new DomainError(409, 'last_circle', 'This is the last circle of the community; a community keeps at least one');
  return [
    {
      type: 'CircleDeleted',
      data: {
        circle_id: command.data.circle_id,
        community_id: state.community_id,
        deleted_by: command.data.actor.user_id,
        deleted_at: iso(command.metadata.now),
      },
    },
  ];
}

export type CreateInviteCode = Command<
  'CreateInviteCode',
  { actor: Actor; label: string | null; max_uses: number | null; expires_at: string | null },
  { now: Date; code_id: string; code: string }
>;
export function decideCreateInviteCode(command: CreateInviteCode, state: CommunityState): InviteCodeCreated[] {
  assertCommunityAdmin(state, command.data.actor);
  if (state.codes[command.metadata.code_id]) return [];
  const d = command.data;
  return [
    {
      type: 'InviteCodeCreated',
      data: {
        code_id: command.metadata.code_id,
        community_id: state.community_id,
        code: command.metadata.code,
        label: d.label,
        max_uses: d.max_uses,
        expires_at: d.expires_at,
        created_by: d.actor.user_id,
        created_at: iso(command.metadata.now),
      },
    },
  ];
}

export type UpdateInviteCodeStatus = Command<'UpdateInviteCodeStatus', { actor: Actor; code_id: string; status: CodeStatus }>;
export function decideUpdateInviteCodeStatus(command: UpdateInviteCodeStatus, state: CommunityState): InviteCodeStatusChanged[] {
  assertCommunityAdmin(state, command.data.actor);
  const code = state.codes[command.data.code_id];
  if (!code) throw notFound('Invite code', 'invite_code_not_found');
  if (code.status === command.data.status) return [];
  return [
    {
      type: 'InviteCodeStatusChanged',
      data: {
        code_id: command.data.code_id,
        community_id: state.community_id,
        status: command.data.status,
        changed_by: command.data.actor.user_id,
        changed_at: iso(command.metadata.now),
      },
    },
  ];
}

export type JoinWithCode = Command<'JoinWithCode', { code_id: string; user_id: string; full_name: string }>;
/**
 * A member joins with an active, unexpired, unexhausted code, and with it the community's first
 * circle. A member already in the community changes nothing (and uses no code).
 */
export function decideJoinWithCode(command: JoinWithCode, state: CommunityState): Array<CommunityMemberJoined | CircleMemberJoined> {
  liveCommunity(state);
  const { code_id, user_id, full_name } = command.data;
  const code = state.codes[code_id];
  if (!code) throw notFound('Invite code', 'invite_code_not_found');
  if (state.members[user_id]) return [];
  const now = iso(command.metadata.now);
  if (code.status !== 'active') throw new DomainError(409, 'invite_code_inactive', `The invite code is ${code.status}`);
  if (code.expires_at !== null && code.expires_at <= now) throw new DomainError(409, 'invite_code_expired', 'The invite code has expired');
  if (code.max_uses !== null && code.uses >= code.max_uses) throw new DomainError(409, 'invite_code_exhausted', 'The invite code has no uses left');
  const events: Array<CommunityMemberJoined | CircleMemberJoined> = [
    { type: 'CommunityMemberJoined', data: { community_id: state.community_id, user_id, full_name, code_id, joined_at: now } },
  ];
  const first = state.first_circle_id;
  if (first && state.circles[first] && !state.circles[first].deleted)
    events.push({
      type: 'CircleMemberJoined',
      data: { circle_id: first, community_id: state.community_id, user_id, full_name, via: 'direct', joined_at: now },
    });
  return events;
}

export type RemoveCommunityMember = Command<'RemoveCommunityMember', { actor: Actor; user_id: string }>;
export function decideRemoveCommunityMember(command: RemoveCommunityMember, state: CommunityState): CommunityMemberRemoved[] {
  assertCommunityAdmin(state, command.data.actor);
  if (!state.members[command.data.user_id]) throw notFound('Member', 'not_community_member');
  return [
    {
      type: 'CommunityMemberRemoved',
      data: { community_id: state.community_id, user_id: command.data.user_id, removed_by: command.data.actor.user_id, removed_at: iso(command.metadata.now) },
    },
  ];
}

export type JoinCircle = Command<'JoinCircle', { circle_id: string; user_id: string; full_name: string }, { now: Date; request_id: string }>;
/**
 * Joining per visibility (shared DECISIONS): a community member joins a `community` or `public`
 * circle at once; anyone else asks to join a `public` circle (one pending request at a time); a
 * `community` circle to a non-member and a `private` circle to anyone not in it are 404. Already
 * in the circle: nothing.
 */
export function decideJoinCircle(command: JoinCircle, state: CommunityState): Array<CircleMemberJoined | CircleJoinRequested> {
  liveCommunity(state);
  const { circle_id, user_id, full_name } = command.data;
  const c = liveCircle(state, circle_id);
  if (c.members[user_id]) return [];
  const now = iso(command.metadata.now);
  const inCommunity = state.members[user_id] === true;
  const join: CircleMemberJoined = {
    type: 'CircleMemberJoined',
    data: { circle_id, community_id: state.community_id, user_id, full_name, via: 'direct', joined_at: now },
  };
  switch (c.visibility) {
    case 'private':
      throw notFound('Circle', 'circle_not_found');
    case 'community':
      if (!inCommunity) throw notFound('Circle', 'circle_not_found');
      return [join];
    case 'public': {
      if (inCommunity) return [join];
      const pending = Object.values(state.requests).some((r) => r.circle_id === circle_id && r.user_id === user_id && r.status === 'pending');
      if (pending) return [];
      return [
        {
          type: 'CircleJoinRequested',
          data: { request_id: command.metadata.request_id, circle_id, community_id: state.community_id, user_id, full_name, requested_at: now },
        },
      ];
    }
    default: {
      const _exhaustive: never = c.visibility;
      return _exhaustive;
    }
  }
}

export type AddCircleMember = Command<'AddCircleMember', { actor: Actor; circle_id: string; user_id: string; full_name: string }>;
/** A community admin adds a member of the community to a circle (the way into a private circle). */
export function decideAddCircleMember(command: AddCircleMember, state: CommunityState): CircleMemberJoined[] {
  assertCommunityAdmin(state, command.data.actor);
  const c = liveCircle(state, command.data.circle_id);
  const { user_id, full_name, circle_id } = command.data;
  if (!state.members[user_id]) throw notFound('Member', 'not_community_member');
  if (c.members[user_id]) return [];
  return [
    {
      type: 'CircleMemberJoined',
      data: { circle_id, community_id: state.community_id, user_id, full_name, via: 'admin', joined_at: iso(command.metadata.now) },
    },
  ];
}

export type DecideJoinRequest = Command<'DecideJoinRequest', { actor: Actor; request_id: string; approve: boolean; admin_note: string; full_name: string }>;
/** Approve (the member joins the circle, and the community if not in it yet) or reject, with a note; once. */
export function decideJoinRequest(
  command: DecideJoinRequest,
  state: CommunityState,
): Array<CircleJoinRequestDecided | CommunityMemberJoined | CircleMemberJoined> {
  assertCommunityAdmin(state, command.data.actor);
  const r = state.requests[command.data.request_id];
  if (!r) throw notFound('Join request', 'join_request_not_found');
  if (r.status !== 'pending') throw new DomainError(409, 'join_request_decided', `The request was already ${r.status}`);
  const c = state.circles[r.circle_id];
  const now = iso(command.metadata.now);
  const decided: CircleJoinRequestDecided = {
    type: 'CircleJoinRequestDecided',
    data: {
      request_id: command.data.request_id,
      circle_id: r.circle_id,
      community_id: state.community_id,
      user_id: r.user_id,
      circle_name: c?.name ?? 'circle',
      status: command.data.approve && c && !c.deleted ? 'approved' : 'rejected',
      admin_note: command.data.admin_note,
      decided_by: command.data.actor.user_id,
      decided_at: now,
    },
  };
  if (decided.data.status === 'rejected') return [decided];
  const events: Array<CircleJoinRequestDecided | CommunityMemberJoined | CircleMemberJoined> = [decided];
  const base = { community_id: state.community_id, user_id: r.user_id, full_name: command.data.full_name };
  if (!state.members[r.user_id]) events.push({ type: 'CommunityMemberJoined', data: { ...base, code_id: null, joined_at: now } });
  if (!c?.members[r.user_id]) events.push({ type: 'CircleMemberJoined', data: { ...base, circle_id: r.circle_id, via: 'request', joined_at: now } });
  return events;
}
