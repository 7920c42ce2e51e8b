import { agentFlagsStream, postStream } from '../../events/feed.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import type { ModerationAppealed, ModerationDecided, ModerationDecision, ModerationKind } from '../../events/moderation.ts';
import { banAgent } from '../agents/ban.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import type { DecideAppeal, FlagLedger } from './flag-rule.ts';
import { decideAppeal, decideModeration } from './flag-rule.ts';
import type { AgentFlagsEvent, AgentFlagsState } from './flag-agent.ts';
import { agentFlagsAggregate } from './flag-agent.ts';
import type { PostState, PostStreamEvent } from './post.ts';
import { postAggregate } from './post.ts';

/** The item a decision or an appeal is about, as the read model knows it. */
export interface ModerationTarget {
  item_kind: ModerationKind;
  item_id: string;
  author_agent_id: string;
}

/** Runs `decide` on the item's own stream (`post-<id>` or `agent-flags-<id>`). */
async function onItem<E extends ModerationDecided | ModerationAppealed>(
  bus: CommandBus,
  target: ModerationTarget,
  decide: (ledger: FlagLedger) => E,
  ctx: CommandContext,
): Promise<{ event: E; position: number }> {
  let decided: E | null = null;
  const run = (ledger: FlagLedger): E[] => {
    decided = decide(ledger);
    return [decided];
  };
  const r =
    target.item_kind === 'post'
      ? await bus.handle<PostState, PostStreamEvent, E[]>(postStream(target.item_id), postAggregate, (s) => run(s.ledger), ctx)
      : await bus.handle<AgentFlagsState, AgentFlagsEvent, E[]>(agentFlagsStream(target.item_id), agentFlagsAggregate, (s) => run(s.ledger), ctx);
  if (decided === null) throw new Error('moderation: the decider did not run');
  return { event: decided, position: r.position };
}

/**
 * A super admin's decision (flag-rule.ts `decideModeration`), one `ModerationDecided` on the
 * item's stream. `ban_author` bans the author first (the same `AgentBanned` as the ban route, with
 * the note as its reason; an author already banned or gone stays so).
 */
export async function decideModerationItem(
  bus: CommandBus,
  target: ModerationTarget,
  decision: ModerationDecision,
  adminUserId: string,
  note: string,
  ctx: CommandContext,
) {
  if (decision === 'ban_author') {
    try {
      await banAgent(bus, { agent_id: target.author_agent_id, admin_user_id: adminUserId, reason: note }, ctx);
    } catch (err) {
      if (!(err instanceof DomainError && err.status === 410)) throw err;
    }
  }
  return onItem(bus, target, (ledger) => decideModeration(ledger, { ...target, decision, admin_user_id: adminUserId, note, now: ctx.now }), ctx);
}

/** The owner's one appeal against a hide (flag-rule.ts `decideAppeal`). */
export function appealModerationItem(
  bus: CommandBus,
  target: ModerationTarget,
  input: Omit<DecideAppeal, keyof ModerationTarget | 'now'>,
  ctx: CommandContext,
) {
  return onItem(bus, target, (ledger) => decideAppeal(ledger, { ...target, ...input, now: ctx.now }), ctx);
}
