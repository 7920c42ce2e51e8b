import { agentStream } from '../../events/agents.ts';
import type { PaidTier, TierRenewalOrdered } from '../../events/credits.ts';
import type { MailQueued } from '../../events/humans.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Command, CommandContext } from '../handler.ts';
import { sealMail } from '../humans/mail.ts';
import { isPaidTier, RENEWAL_NOTICE_MS } from './billing.ts';
import type { BillingDeps, OrderItem } from './orders.ts';
import { createPaymentOrder } from './orders.ts';

/**
 * The renewal due for an agent at `now`: a paid tier whose month ends (`paid_until`, its billing
 * day) within RENEWAL_NOTICE_MS and has not ended yet, with no renewal order for that day. Null
 * otherwise (free, enterprise, deactivated, ordered already, or too late: the lapse comes instead).
 */
export function renewalDue(state: AgentState, now: Date): { due_at: string; tier: PaidTier } | null {
  if (!state.exists || state.deactivated_at !== null || !isPaidTier(state.tier) || state.paid_until === null) return null;
  if (state.renewal_due_at === state.paid_until) return null;
  const end = Date.parse(state.paid_until);
  if (now.getTime() < end - RENEWAL_NOTICE_MS || now.getTime() >= end) return null;
  return { due_at: state.paid_until, tier: state.tier };
}

/** OrderRenewal: the renewal order made with the provider for the month from `due_at`, and its mail to the owner (sealed before deciding). */
export type OrderRenewal = Command<
  'OrderRenewal',
  { agent_id: string; order_id: string; kind: 'renewal' | 'plan'; tier: PaidTier; amount_minor: number; due_at: string; mail: MailQueued | null },
  { now: Date }
>;

/** Once per billing day: the order and the mail in one append, only while that renewal is still due. */
export function decideOrderRenewal(command: OrderRenewal, state: AgentState): Array<TierRenewalOrdered | MailQueued> {
  const { agent_id, order_id, kind, tier, amount_minor, due_at, mail } = command.data;
  const due = renewalDue(state, command.metadata.now);
  if (!due || due.due_at !== due_at || due.tier !== tier) return [];
  const ordered: TierRenewalOrdered = {
    type: 'TierRenewalOrdered',
    data: { agent_id, order_id, kind, tier, amount_minor, currency: 'INR', due_at, ordered_at: command.metadata.now.toISOString() },
  };
  return mail ? [ordered, mail] : [ordered];
}

export interface RenewalDeps {
  billing: BillingDeps;
  secrets: SecretBox;
  /** The owner's address the mail goes to (null: no mail). */
  ownerEmail(agentId: string): Promise<string | null>;
}

/**
 * Orders the renewal of an agent's paid tier when it is due (the renewals worker): the order with
 * the payment provider (kind `plan` for a member's in-app agent, so paying renews the plan too;
 * otherwise `renewal`), then `TierRenewalOrdered` and the owner's mail on the agent's stream.
 * Idempotent per billing day: the command id derives from the agent and the day, so a retry
 * names the same order and appends nothing more. Without a payment provider nothing is ordered.
 */
export async function orderRenewal(
  d: RenewalDeps,
  agentId: string,
  base: Omit<CommandContext, 'commandId'>,
): Promise<{ order_id: string | null; position: number }> {
  if (!d.billing.provider) return { order_id: null, position: 0 };
  const { state } = await d.billing.bus.load(agentStream(agentId), agentAggregate);
  const due = renewalDue(state, base.now);
  if (!due) return { order_id: null, position: 0 };
  const ctx: CommandContext = { ...base, commandId: `renewal:${agentId}:${due.due_at}` };
  // A member's in-app agent on the plan's tier renews the plan (and the agent with it).
  const planTier = due.tier === 'pro' || due.tier === 'elite' ? due.tier : null;
  const item: OrderItem =
    planTier && state.owner_user_id !== null && /^(pro|elite)_auto$/.test(state.registration_source)
      ? { kind: 'plan', user_id: state.owner_user_id, plan: planTier }
      : { kind: 'renewal', agent_id: agentId, tier: due.tier };
  const order = await createPaymentOrder(d.billing, item, ctx);
  const to = await d.ownerEmail(agentId);
  const mail = to
    ? sealMail(d.secrets, ctx, 'tier-renewal', 'tier_renewal', to, {
        agent_name: state.name,
        agent_id: agentId,
        tier: due.tier,
        amount: order.amount.toFixed(2),
        currency: order.currency,
        due_at: due.due_at,
        payment_url: order.payment_url,
      })
    : null;
  const command: OrderRenewal = {
    type: 'OrderRenewal',
    data: {
      agent_id: agentId,
      order_id: order.order_id,
      kind: item.kind === 'plan' ? 'plan' : 'renewal',
      tier: due.tier,
      amount_minor: order.amount_minor,
      due_at: due.due_at,
      mail,
    },
    metadata: { now: base.now },
  };
  const result = await d.billing.bus.handle(agentStream(agentId), agentAggregate, (s) => decideOrderRenewal(command, s), ctx);
  return { order_id: order.order_id, position: Math.max(order.position, result.position) };
}
