import { defineProjection } from '../types.ts';
import { CHARGED_EVENTS } from './charged.ts';

/** An agent's credit spending on one UTC day; `_id` is `<agent>:<date>`. */
export type CreditUsageDailyDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  date: string;
  spent_mc: number;
  count: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    credit_usage_daily: CreditUsageDailyDoc;
  }
}

/** Daily spend per agent (the 7-day usage view). Counts every event that carries a charge. */
export const creditUsageProjection = defineProjection({
  name: 'credit_usage',
  collections: [{ name: 'credit_usage_daily', indexes: [{ name: 'by_agent_date', keys: { agent_id: 1, date: -1 } }] }],
  handles: CHARGED_EVENTS,
  async apply(event, ctx) {
    // Every charged event names its payer `agent_id`; only a scheduled post's publication has no charge.
    const c = event.data.charge;
    if (!c || c.amount_mc === 0) return;
    const agentId = event.data.agent_id;
    const date = event.metadata.occurred_at.slice(0, 10);
    // agent_id and date are those of the _id: written when the document is created, never again.
    await ctx.collection('credit_usage_daily').applyAt(`${agentId}:${date}`, event.position, {
      $setOnInsert: { agent_id: agentId, date },
      $inc: { spent_mc: c.amount_mc, count: 1 },
    });
  },
});
