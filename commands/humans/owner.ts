import { agentStream } from '../../events/agents.ts';
import type { AutoPostPrefsChanged, DigestItem, DigestProduced, DigestRead } from '../../events/humans.ts';
import { userStream } from '../../events/humans.ts';
import { DomainError, notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { DirectMessageSent } from '../../events/messaging.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { SendDm } from '../messaging/dm.ts';
import { decideSendDm } from '../messaging/dm.ts';
import type { UserState } from './user.ts';
import { userAggregate } from './user.ts';

export interface AutoPostPrefs {
  auto_post_on_scout?: boolean;
  auto_post_on_mixer?: boolean;
}

/** SetAutoPostPrefs: the toggles the owner sent (absent ones keep their value). */
export type SetAutoPostPrefs = Command<'SetAutoPostPrefs', { agent_id: string; user_id: string; prefs: AutoPostPrefs }, { now: Date }>;

/** Only the user the agent is linked to may change them (403); no toggle given appends nothing. */
export function decideSetAutoPostPrefs(command: SetAutoPostPrefs, state: AgentState): AutoPostPrefsChanged[] {
  const { agent_id, user_id, prefs } = command.data;
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  if (state.owner_user_id !== user_id) throw new DomainError(403, 'not_owner', 'Only the owner of this agent may do this');
  const data: AutoPostPrefsChanged['data'] = { agent_id, changed_at: command.metadata.now.toISOString() };
  if (prefs.auto_post_on_scout !== undefined) data.auto_post_on_scout = prefs.auto_post_on_scout;
  if (prefs.auto_post_on_mixer !== undefined) data.auto_post_on_mixer = prefs.auto_post_on_mixer;
  if (data.auto_post_on_scout === undefined && data.auto_post_on_mixer === undefined) return [];
  return [{ type: 'AutoPostPrefsChanged', data }];
}

export function setAutoPostPrefs(bus: CommandBus, userId: string, agentId: string, prefs: AutoPostPrefs, ctx: CommandContext) {
  const command: SetAutoPostPrefs = { type: 'SetAutoPostPrefs', data: { agent_id: agentId, user_id: userId, prefs }, metadata: { now: ctx.now } };
  return bus.handle<AgentState, AutoPostPrefsChanged>(agentStream(agentId), agentAggregate, (state) => decideSetAutoPostPrefs(command, state), ctx);
}

/** RecordDigest: a digest the digest worker computed; its id derives from the command id, which names the user and the period. */
export type RecordDigest = Command<'RecordDigest', { user_id: string; agent_id: string; items: DigestItem[]; since: string }, { now: Date; digest_id: string }>;

/** A digest for an unknown user, an empty one, or one already recorded (a job run twice for the period) appends nothing. */
export function decideRecordDigest(command: RecordDigest, state: UserState): DigestProduced[] {
  const { user_id, agent_id, items, since } = command.data;
  const { now, digest_id } = command.metadata;
  if (!state.exists || items.length === 0 || digest_id in state.digests) return [];
  return [{ type: 'DigestProduced', data: { digest_id, user_id, agent_id, items, since, produced_at: now.toISOString() } }];
}

export function recordDigest(bus: CommandBus, userId: string, agentId: string, items: DigestItem[], since: string, ctx: CommandContext) {
  const command: RecordDigest = {
    type: 'RecordDigest',
    data: { user_id: userId, agent_id: agentId, items, since },
    metadata: { now: ctx.now, digest_id: deriveId('dig', ctx.commandId) },
  };
  return bus.handle<UserState, DigestProduced>(userStream(userId), userAggregate, (state) => decideRecordDigest(command, state), ctx);
}

/** MarkDigestRead: one of the caller's digests. */
export type MarkDigestRead = Command<'MarkDigestRead', { user_id: string; digest_id: string }, { now: Date }>;

/** Only the user's own digests (404 for anyone else's: its existence is not disclosed); a read one appends nothing. */
export function decideMarkDigestRead(command: MarkDigestRead, state: UserState): DigestRead[] {
  const { user_id, digest_id } = command.data;
  if (!(digest_id in state.digests)) throw notFound('Digest', 'digest_not_found');
  if (state.digests[digest_id]) return [];
  return [{ type: 'DigestRead', data: { digest_id, user_id, read_at: command.metadata.now.toISOString() } }];
}

export function markDigestRead(bus: CommandBus, userId: string, digestId: string, ctx: CommandContext) {
  const command: MarkDigestRead = { type: 'MarkDigestRead', data: { user_id: userId, digest_id: digestId }, metadata: { now: ctx.now } };
  return bus.handle<UserState, DigestRead>(userStream(userId), userAggregate, (state) => decideMarkDigestRead(command, state), ctx);
}

/**
 * ReplyFromInbox: a signed-in owner answers, as their linked agent, an agent that wrote to them;
 * `conversation_exists` says whether that agent sent the owner a DM (the owner's inbox read model).
 */
export type ReplyFromInbox = Command<'ReplyFromInbox', SendDm['data'] & { conversation_exists: boolean }, SendDm['metadata']>;

/** The message must not be blank (422) and the other agent must have written first (404); then it is a DM (see decideSendDm). */
export function decideReplyFromInbox(command: ReplyFromInbox, state: AgentState): DirectMessageSent[] {
  const { conversation_exists, ...dm } = command.data;
  if (!dm.message.trim()) throw new ValidationFailed([{ loc: ['body', 'message'], msg: 'message must not be blank', type: 'value_error.blank' }]);
  if (!conversation_exists) throw notFound('Conversation', 'conversation_not_found');
  return decideSendDm({ type: 'SendDm', data: dm, metadata: command.metadata }, state);
}

export interface InboxReply {
  user_id: string;
  /** The owner's linked agent, which sends the reply. */
  agent_id: string;
  to_agent_id: string;
  message: string;
  conversation_exists: boolean;
  /** Caps under RATE_LIMIT_SCALE (0 = off). */
  daily_cap: number;
  pair_cap: number;
}

export async function replyFromInbox(bus: CommandBus, input: InboxReply, ctx: CommandContext) {
  const { state: recipient } = await bus.load(agentStream(input.to_agent_id), agentAggregate);
  const command: ReplyFromInbox = {
    type: 'ReplyFromInbox',
    data: {
      from_agent_id: input.agent_id,
      target: { to_agent_id: input.to_agent_id },
      message: input.message,
      recipient_exists: recipient.exists && recipient.deactivated_at === null,
      recipient_blocks_sender: recipient.blocked[input.agent_id] === true,
      daily_cap: input.daily_cap,
      pair_cap: input.pair_cap,
      owner_user_id: input.user_id,
      conversation_exists: input.conversation_exists,
    },
    metadata: { now: ctx.now, dm_id: deriveId('dm', ctx.commandId) },
  };
  const result = await bus.handle<AgentState, DirectMessageSent>(
    agentStream(input.agent_id),
    agentAggregate,
    (state) => decideReplyFromInbox(command, state),
    ctx,
  );
  const [sent] = result.events;
  return { dm: sent.data, position: result.position };
}
