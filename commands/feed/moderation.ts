import { agentFlagsStream, postStream } from '../../events/feed.ts';
import type { MailQueued } from '../../events/humans.ts';
import { mailStream } from '../../events/humans.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { entityId } from '../handler.ts';
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

/** Where the decision on an appeal is mailed: the owner address of the author agent. */
export interface AppealMail {
  secrets: SecretBox;
  owner_email: string | null;
}

/**
 * A super admin's decision (flag-rule.ts `decideModeration`), one `ModerationDecided` on the
 * item's stream. `ban_author` bans the author first (the same `AgentBanned` as the ban route, with
 * the note as its reason; an author already banned or gone stays so). A decision that answers the
 * owner's appeal also queues the `moderation_decision` mail to the owner address (its own
 * `mail-<id>` stream; the notification and the webhook follow from the event itself).
 */
export async function decideModerationItem(
  bus: CommandBus,
  target: ModerationTarget,
  decision: ModerationDecision,
  adminUserId: string,
  note: string,
  ctx: CommandContext,
  mail: AppealMail | null = null,
) {
  if (decision === 'ban_author') {
    try {
      await banAgent(bus, { agent_id: target.author_agent_id, admin_user_id: adminUserId, reason: note }, ctx);
    } catch (err) {
      if (!(err instanceof DomainError && err.status === 410)) throw err;
    }
  }
  const r = await onItem(bus, target, (ledger) => decideModeration(ledger, { ...target, decision, admin_user_id: adminUserId, note, now: ctx.now }), ctx);
  const d = r.event.data;
  if (!d.appeal || !mail?.owner_email) return r;
  const params = { item_kind: d.item_kind, item_id: d.item_id, decision: d.decision, hidden: d.hidden, note: d.note };
  const mailId = entityId('mail', ctx, 'moderation-decision');
  const queued: MailQueued = {
    type: 'MailQueued',
    data: {
      mail_id: mailId,
      template: 'moderation_decision',
      to: mail.owner_email,
      params_enc: mail.secrets.encrypt(JSON.stringify(params)),
      queued_at: d.decided_at,
    },
  };
  const m = await bus.appendRaw(mailStream(mailId), [queued], 'no_stream', Object.assign({}, ctx, { commandId: `${ctx.commandId}:appeal-mail` }));
  return { event: r.event, position: Math.max(r.position, m.position) };
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
