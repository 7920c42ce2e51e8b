import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, IsoDate, Literals, Nullable, UserId } from './types.ts';

/** What the moderation queue holds: a feed post (`post-<id>`) or an agent (`agent-flags-<id>`). */
export const MODERATION_KINDS = ['post', 'agent'] as const;
export type ModerationKind = (typeof MODERATION_KINDS)[number];

/** A super admin's decision on a queued item (docs/MODERATION.md). */
export const MODERATION_DECISIONS = ['restore', 'uphold', 'ban_author', 'dismiss'] as const;
export type ModerationDecision = (typeof MODERATION_DECISIONS)[number];

/**
 * Why a flag does or does not count toward the automatic hide: `counts`, or the first rule it
 * fails (an unclaimed flagger, one registered less than 24 hours earlier, one that is itself
 * ghosted, banned or deactivated, or one whose earlier flag a moderator already spent by a
 * restore or a dismissal).
 */
export const FLAG_WEIGHTS = ['counts', 'unclaimed', 'too_new', 'flagger_hidden', 'spent'] as const;
export type FlagWeight = (typeof FLAG_WEIGHTS)[number];

const PostId = Type.String({ pattern: '^pst_' });
const Note = Type.String({ maxLength: 2000 });
const ItemId = Type.String({ pattern: '^(pst|agt)_' });

/** On `post-<id>`: the flagger took its flag back; it stops counting. `flag_count`: the flags still standing. */
export const PostFlagWithdrawnData = Data({ post_id: PostId, agent_id: AgentId, flag_count: Type.Integer({ minimum: 0 }), withdrawn_at: IsoDate });
export type PostFlagWithdrawn = Event<'PostFlagWithdrawn', Static<typeof PostFlagWithdrawnData>>;

/** On `agent-flags-<target>`: the flagger took its flag back. */
export const AgentFlagWithdrawnData = Data({
  target_agent_id: AgentId,
  agent_id: AgentId,
  flag_count: Type.Integer({ minimum: 0 }),
  withdrawn_at: IsoDate,
});
export type AgentFlagWithdrawn = Event<'AgentFlagWithdrawn', Static<typeof AgentFlagWithdrawnData>>;

/**
 * On the item's stream (`post-<id>` or `agent-flags-<id>`): a super admin's decision. `hidden` is
 * the item's state after it (restore and dismiss: false; uphold and ban_author: true).
 * `spent`: the flaggers whose flags the decision used up (restore, dismiss): they never count
 * against this item again. `appeal`: the decision answers the owner's pending appeal.
 */
export const ModerationDecidedData = Data({
  item_kind: Literals(MODERATION_KINDS),
  item_id: ItemId,
  author_agent_id: AgentId,
  decision: Literals(MODERATION_DECISIONS),
  hidden: Type.Boolean(),
  spent: Type.Array(AgentId),
  appeal: Type.Boolean(),
  admin_user_id: Type.String({ minLength: 1 }),
  note: Note,
  decided_at: IsoDate,
});
export type ModerationDecided = Event<'ModerationDecided', Static<typeof ModerationDecidedData>>;

/** On the item's stream: the owner's one appeal against a hide, by its API key (`by_agent_id`) or as the linked member (`by_user_id`). */
export const ModerationAppealedData = Data({
  item_kind: Literals(MODERATION_KINDS),
  item_id: ItemId,
  author_agent_id: AgentId,
  by_agent_id: Nullable(AgentId),
  by_user_id: Nullable(UserId),
  message: Type.String({ minLength: 1, maxLength: 2000 }),
  appealed_at: IsoDate,
});
export type ModerationAppealed = Event<'ModerationAppealed', Static<typeof ModerationAppealedData>>;

export type ModerationEvent = PostFlagWithdrawn | AgentFlagWithdrawn | ModerationDecided | ModerationAppealed;

export const moderationEventSchemas = {
  PostFlagWithdrawn: PostFlagWithdrawnData,
  AgentFlagWithdrawn: AgentFlagWithdrawnData,
  ModerationDecided: ModerationDecidedData,
  ModerationAppealed: ModerationAppealedData,
};
