import type { CodeStatus, CommunityEvent, Visibility } from '../../events/communities.ts';
import { communityStream } from '../../events/communities.ts';
import { userStream } from '../../events/humans.ts';
import { notFound } from '../../events/kernel/errors.ts';
import { deriveId, sha256Hex } from '../../events/kernel/ids.ts';
import { userAggregate } from '../humans/user.ts';
import { memberStream } from '../../events/social.ts';
import { memberAggregate } from '../social/members.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import type { Actor, CommunityState } from './community.ts';
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
} from './community.ts';

/** Invite-code alphabet without look-alikes (no 0/O, 1/I/L). */
export const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** A 10-character invite code derived from the command id (a retried command makes the same code). */
export function inviteCodeFor(seed: string): string {
  const hex = sha256Hex(`invite-code\u0000${seed}`);
  let out = '';
  for (let i = 0; i < 10; i++) out += CODE_ALPHABET[parseInt(hex.slice(i * 4, i * 4 + 4), 16) % CODE_ALPHABET.length];
  return out;
}

/** The name a member shows: their profile's, else the one they registered with (null: no such user). */
async function fullName(bus: CommandBus, userId: string): Promise<string | null> {
  const user = await bus.load(userStream(userId), userAggregate);
  if (!user.state.exists) return null;
  const member = await bus.load(memberStream(userId), memberAggregate);
  return member.state.profile?.full_name ?? user.state.full_name;
}

const handle = <R extends CommunityEvent[]>(bus: CommandBus, communityId: string, decide: (s: CommunityState) => R, ctx: CommandContext) =>
  bus.handle<CommunityState, CommunityEvent, R>(communityStream(communityId), communityAggregate, decide, ctx);

export async function createCommunity(bus: CommandBus, input: { name: string; description: string; open: boolean; created_by: string }, ctx: CommandContext) {
  const community_id = deriveId('cmy', ctx.commandId);
  const circle_id = deriveId('crc', ctx.commandId, 'first');
  const r = await handle(
    bus,
    community_id,
    (s) => decideCreateCommunity({ type: 'CreateCommunity', data: input, metadata: { now: ctx.now, community_id, circle_id } }, s),
    ctx,
  );
  return { ...r, community_id, circle_id };
}

export async function nameCommunityAdmin(bus: CommandBus, communityId: string, userId: string, namedBy: string, ctx: CommandContext) {
  const full_name = await fullName(bus, userId);
  return handle(
    bus,
    communityId,
    (s) => decideNameCommunityAdmin({ type: 'NameCommunityAdmin', data: { user_id: userId, full_name, named_by: namedBy }, metadata: { now: ctx.now } }, s),
    ctx,
  );
}

export async function createCircle(
  bus: CommandBus,
  communityId: string,
  input: { actor: Actor; name: string; description: string; visibility: Visibility },
  ctx: CommandContext,
) {
  const circle_id = deriveId('crc', ctx.commandId);
  const r = await handle(bus, communityId, (s) => decideCreateCircle({ type: 'CreateCircle', data: input, metadata: { now: ctx.now, circle_id } }, s), ctx);
  return { ...r, circle_id };
}

export const setCircleVisibility = (
  bus: CommandBus,
  communityId: string,
  data: { actor: Actor; circle_id: string; visibility: Visibility },
  ctx: CommandContext,
) => handle(bus, communityId, (s) => decideSetCircleVisibility({ type: 'SetCircleVisibility', data, metadata: { now: ctx.now } }, s), ctx);

export const deleteCircle = (bus: CommandBus, communityId: string, data: { actor: Actor; circle_id: string }, ctx: CommandContext) =>
  handle(bus, communityId, (s) => decideDeleteCircle({ type: 'DeleteCircle', data, metadata: { now: ctx.now } }, s), ctx);

export async function createInviteCode(
  bus: CommandBus,
  communityId: string,
  data: { actor: Actor; label: string | null; max_uses: number | null; expires_at: string | null },
  ctx: CommandContext,
) {
  const code_id = deriveId('icd', ctx.commandId);
  const code = inviteCodeFor(ctx.commandId);
  const r = await handle(
    bus,
    communityId,
    (s) => decideCreateInviteCode({ type: 'CreateInviteCode', data, metadata: { now: ctx.now, code_id, code } }, s),
    ctx,
  );
  return { ...r, code_id, code };
}

export const updateInviteCodeStatus = (
  bus: CommandBus,
  communityId: string,
  data: { actor: Actor; code_id: string; status: CodeStatus },
  ctx: CommandContext,
) => handle(bus, communityId, (s) => decideUpdateInviteCodeStatus({ type: 'UpdateInviteCodeStatus', data, metadata: { now: ctx.now } }, s), ctx);

/** `code`: the code's id and community as the invite-codes read model found them by value (null: no such code). */
export async function joinWithCode(bus: CommandBus, code: { code_id: string; community_id: string } | null, userId: string, ctx: CommandContext) {
  if (!code) throw notFound('Invite code', 'invite_code_not_found');
  const full_name = (await fullName(bus, userId)) ?? 'Member';
  return handle(
    bus,
    code.community_id,
    (s) => decideJoinWithCode({ type: 'JoinWithCode', data: { code_id: code.code_id, user_id: userId, full_name }, metadata: { now: ctx.now } }, s),
    ctx,
  );
}

export const removeCommunityMember = (bus: CommandBus, communityId: string, data: { actor: Actor; user_id: string }, ctx: CommandContext) =>
  handle(bus, communityId, (s) => decideRemoveCommunityMember({ type: 'RemoveCommunityMember', data, metadata: { now: ctx.now } }, s), ctx);

export async function joinCircle(bus: CommandBus, communityId: string, circleId: string, userId: string, ctx: CommandContext) {
  const full_name = (await fullName(bus, userId)) ?? 'Member';
  const request_id = deriveId('cjr', ctx.commandId);
  return handle(
    bus,
    communityId,
    (s) => decideJoinCircle({ type: 'JoinCircle', data: { circle_id: circleId, user_id: userId, full_name }, metadata: { now: ctx.now, request_id } }, s),
    ctx,
  );
}

export async function addCircleMember(bus: CommandBus, communityId: string, data: { actor: Actor; circle_id: string; user_id: string }, ctx: CommandContext) {
  const full_name = (await fullName(bus, data.user_id)) ?? 'Member';
  return handle(bus, communityId, (s) => decideAddCircleMember({ type: 'AddCircleMember', data: { ...data, full_name }, metadata: { now: ctx.now } }, s), ctx);
}

export async function answerJoinRequest(
  bus: CommandBus,
  request: { community_id: string; user_id: string } | null,
  data: { actor: Actor; request_id: string; approve: boolean; admin_note: string },
  ctx: CommandContext,
) {
  if (!request) throw notFound('Join request', 'join_request_not_found');
  const full_name = (await fullName(bus, request.user_id)) ?? 'Member';
  return handle(
    bus,
    request.community_id,
    (s) => decideJoinRequest({ type: 'DecideJoinRequest', data: { ...data, full_name }, metadata: { now: ctx.now } }, s),
    ctx,
  );
}
