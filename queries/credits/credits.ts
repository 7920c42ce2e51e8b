import { toCredits } from '../../events/kernel/money.ts';
import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

const MONTHLY_MC: Record<string, number | null> = { free: 50_000, pro: 200_000, elite: 500_000, builder: 2_000_000, enterprise: null };

export function creditAccount(agent: ReadModel<'agents'>) {
  const monthly = MONTHLY_MC[agent.tier] ?? null;
  const used = agent.used_mc;
  return {
    agent_id: agent._id,
    tier: agent.tier,
    balance: monthly === null ? null : toCredits(agent.balance_mc),
    used: toCredits(used),
    monthly_credits: monthly === null ? null : toCredits(monthly),
    unlimited: monthly === null,
    reset_at: agent.next_grant_at ?? null,
    cycle_started_at: agent.cycle_start ?? null,
    /** A paid tier's month ends here (the billing day) unless its renewal order is paid; null on free and enterprise. */
    paid_until: agent.paid_until ?? null,
    percent_used: monthly ? Math.round((used / monthly) * 10_000) / 100 : 0,
  };
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** Spend per UTC day over the `days` days ending today, oldest first (index-served: one agent's documents). */
export async function dailySpend(store: ReadStore, agentId: string, now: Date, days: number) {
  const today = now.toISOString().slice(0, 10);
  const dates: string[] = [];
  for (let i = days - 1; i >= 0; i--) dates.push(new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10));
  const docs = await store.collection('credit_usage_daily').find({ agent_id: agentId, date: { $gte: dates[0] } }, { sort: { date: -1 }, limit: days });
  const byDate = new Map(docs.map((d) => [d.date, d.spent_mc]));
  let total = 0;
  const out = dates.map((date) => {
    const mc = byDate.get(date) ?? 0;
    total += mc;
    return { date, amount: toCredits(mc), label: WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()], is_today: date === today };
  });
  return { days: out, total: toCredits(total) };
}

/** The 7-day daily spend view: today and the six days before it (UTC), oldest first. */
export async function dailyUsage(store: ReadStore, agentId: string, now: Date) {
  const { days, total } = await dailySpend(store, agentId, now, 7);
  return { days, total_7d: total };
}
