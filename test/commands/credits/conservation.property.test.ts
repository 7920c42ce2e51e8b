import { expect } from 'chai';
import fc from 'fast-check';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import { decideGrantMonthlyCredits } from '../../../commands/credits/grant.ts';
import { decideApplyUpgrade, decideGrantTopUp } from '../../../commands/credits/orders.ts';
import { charge } from '../../../commands/credits/spend.ts';
import type { ChargedAction } from '../../../commands/credits/tiers.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import { chargeOf } from '../../../events/types.ts';
import * as ev from '../../fixtures/events.ts';
import { AGENT, NOW, agentRegistered } from './fixtures.ts';

type Cmd =
  | { kind: 'spend'; action: ChargedAction }
  | { kind: 'topup'; order: string; credits_mc: number }
  | { kind: 'grant'; days: number }
  | { kind: 'upgrade'; order: string; tier: 'pro' | 'elite' | 'builder' };

const DAY = 24 * 3600_000;
const ACTIONS: ChargedAction[] = ['post', 'comment', 'dm', 'matching_run', 'mesh_thread_create', 'intro_request'];

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ACTIONS).map((action) => ({ kind: 'spend' as const, action })) },
  {
    weight: 2,
    arbitrary: fc
      .record({ order: fc.constantFrom('o1', 'o2', 'o3'), credits_mc: fc.constantFrom(50_000, 200_000, 500_000) })
      .map((r) => ({ kind: 'topup' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((days) => ({ kind: 'grant' as const, days })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ order: fc.constantFrom('u1', 'u2'), tier: fc.constantFrom('pro' as const, 'elite' as const, 'builder' as const) })
      .map((r) => ({ kind: 'upgrade' as const, ...r })),
  },
);

/** The credit delta an event of the agent's stream records (grants, top-ups and upgrades add; charges subtract). */
function delta(e: AgentStreamEvent): number {
  if (e.type === 'MonthlyCreditsGranted' || e.type === 'CreditsToppedUp' || e.type === 'AgentTierUpgraded') return e.data.amount_mc;
  return -(chargeOf(e.data)?.amount_mc ?? 0);
}

const balanceAfter = (e: AgentStreamEvent): number | null =>
  e.type === 'TierLapsed' || e.type === 'AgentTierRenewed'
    ? e.data.balance_mc
    : 'balance_after_mc' in e.data && typeof e.data.balance_after_mc === 'number'
      ? e.data.balance_after_mc
      : (chargeOf(e.data)?.balance_after_mc ?? null);

/**
 * The stream as the generic handler keeps it, in memory: batches of commands decided at once on
 * the same state (concurrent requests); the first append wins, the others fail their revision
 * check and are decided again on the new state, as CommandBus.handle retries them.
 */
function runConcurrently(batches: Cmd[][]) {
  const registered = agentRegistered({ agent_id: AGENT, tier: 'free', registered_at: NOW.toISOString() });
  let stream: AgentStreamEvent[] = [registered];
  let state: AgentState = agentAggregate.evolve(agentAggregate.initialState(), registered);
  let now = NOW;
  let refused = 0;
  let n = 0;
  const decide = (c: Cmd, s: AgentState): AgentStreamEvent[] => {
    switch (c.kind) {
      case 'spend':
        return [ev.commentAdded({ agent_id: AGENT, comment_id: `cmt_${++n}`, charge: charge(s, c.action) })];
      case 'topup':
        return decideGrantTopUp(
          { type: 'GrantTopUp', data: { agent_id: AGENT, order_id: c.order, payment_id: `pay_${c.order}`, credits_mc: c.credits_mc }, metadata: { now } },
          s,
        );
      case 'grant':
        return decideGrantMonthlyCredits({ type: 'GrantMonthlyCredits', data: { agent_id: AGENT }, metadata: { now } }, s);
      case 'upgrade':
        return decideApplyUpgrade(
          { type: 'ApplyUpgrade', data: { agent_id: AGENT, order_id: c.order, payment_id: `pay_${c.order}`, tier: c.tier }, metadata: { now } },
          s,
        );
    }
  };
  stream = [...stream, ...decideGrantMonthlyCredits({ type: 'GrantMonthlyCredits', data: { agent_id: AGENT }, metadata: { now } }, state)];
  state = stream.slice(1).reduce(agentAggregate.evolve, state);
  for (const batch of batches) {
    const grantDays = batch.reduce((d, c) => (c.kind === 'grant' ? d + c.days : d), 0);
    now = new Date(now.getTime() + grantDays * DAY);
    let pending = batch.map((c) => ({ c, revision: stream.length }));
    while (pending.length) {
      const retry: typeof pending = [];
      const snapshot = state;
      for (const p of pending) {
        // Every request of the round decided on the state it read; only one whose revision is still current appends.
        let decided: AgentStreamEvent[];
        try {
          decided = decide(p.c, p.revision === stream.length ? state : snapshot);
        } catch (err) {
          if (!(err instanceof DomainError) || err.code !== 'insufficient_credits') throw err;
          if (p.revision !== stream.length) retry.push({ c: p.c, revision: stream.length });
          else refused++;
          continue;
        }
        if (p.revision !== stream.length) {
          retry.push({ c: p.c, revision: stream.length });
          continue;
        }
        stream = [...stream, ...decided];
        state = decided.reduce(agentAggregate.evolve, state);
      }
      pending = retry;
    }
  }
  return { stream, state, refused };
}

describe('commands: credits are conserved under concurrent spends, grants, top-ups and upgrades (fast-check)', () => {
  it('the balance is always the sum of every grant, top-up and upgrade less every charge (lapses keep it); never negative; each order applied once', () => {
    fc.assert(
      fc.property(fc.array(fc.array(cmd, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 }), (batches) => {
        const { stream, state } = runConcurrently(batches);
        let balance = 0;
        const orders = new Set<string>();
        for (const e of stream) {
          balance += delta(e);
          const after = balanceAfter(e);
          if (after !== null) {
            expect(after, `${e.type} balance_after_mc`).to.equal(balance);
            expect(after).to.be.at.least(0);
          }
          // A tier order applies once: as an upgrade, a renewal, or (stale, for a lower tier) as credits.
          if (e.type === 'CreditsToppedUp' || e.type === 'AgentTierUpgraded' || e.type === 'AgentTierRenewed') {
            expect(orders.has(e.data.order_id), `order ${e.data.order_id} applied twice`).to.equal(false);
            orders.add(e.data.order_id);
          }
        }
        expect(state.balance_mc).to.equal(balance);
        const topups = batches.flat().filter((c) => c.kind === 'topup');
        const distinct = new Set(topups.map((c) => c.order));
        expect(stream.filter((e) => e.type === 'CreditsToppedUp' && e.data.order_id.startsWith('o'))).to.have.length(distinct.size);
      }),
      { numRuns: 1000 },
    );
  });
});
