import { expect } from 'chai';
import { agentAggregate } from '../../commands/agents/agent.ts';
import type { AgentState } from '../../commands/agents/agent.ts';
import { cycleStart, currentCycle } from '../../commands/credits/billing.ts';
import { decideMonthlyGrants } from '../../commands/credits/grant.ts';
import { charge } from '../../commands/credits/spend.ts';
import type { DomainEvent } from '../../events/catalogue.ts';
import { DomainError } from '../../events/kernel/errors.ts';

function registeredAt(at: string, tier: AgentState['tier'] = 'free'): AgentState {
  // A partial AgentRegistered: only the fields the fold reads.
  return agentAggregate.evolve(agentAggregate.initialState(), {
    type: 'AgentRegistered',
    data: { agent_id: 'agt_x', name: 'X', tier, registered_at: at },
  } as DomainEvent);
}

function fold(state: AgentState, events: Array<{ type: string; data: unknown }>): AgentState {
  return events.reduce((s, e) => agentAggregate.evolve(s, e as DomainEvent), state);
}

describe('credits: billing cycles and grants', () => {
  it('clamps the billing day to the last day of shorter months', () => {
    expect(cycleStart('2026-01-31T10:00:00.000Z', 1).toISOString()).to.equal('2026-02-28T10:00:00.000Z');
    expect(cycleStart('2026-01-31T10:00:00.000Z', 2).toISOString()).to.equal('2026-03-31T10:00:00.000Z');
    expect(cycleStart('2028-01-30T00:00:00.000Z', 1).toISOString()).to.equal('2028-02-29T00:00:00.000Z');
    expect(cycleStart('2026-11-15T08:00:00.000Z', 2).toISOString()).to.equal('2027-01-15T08:00:00.000Z');
  });

  it('counts cycles started by a given time', () => {
    expect(currentCycle('2026-01-31T10:00:00.000Z', new Date('2026-02-28T09:59:59.999Z'))).to.equal(0);
    expect(currentCycle('2026-01-31T10:00:00.000Z', new Date('2026-02-28T10:00:00.000Z'))).to.equal(1);
    expect(currentCycle('2026-01-31T10:00:00.000Z', new Date('2026-05-01T00:00:00.000Z'))).to.equal(3);
  });

  it('given a new agent, when grants are decided at registration, then cycle 0 grants 50 credits', () => {
    const events = decideMonthlyGrants(registeredAt('2026-03-10T09:30:00.000Z'), new Date('2026-03-10T09:30:00.000Z'));
    expect(events).to.have.length(1);
    expect(events[0].data).to.deep.include({ cycle: 0, amount_mc: 50_000, balance_after_mc: 50_000, next_grant_at: '2026-04-10T09:30:00.000Z' });
  });

  it('given a granted agent, when nothing is due yet, then no event is decided', () => {
    const s = registeredAt('2026-03-10T09:30:00.000Z');
    const granted = fold(s, decideMonthlyGrants(s, new Date('2026-03-10T09:30:00.000Z')));
    expect(decideMonthlyGrants(granted, new Date('2026-04-10T09:29:59.999Z'))).to.deep.equal([]);
  });

  it('given unused credits, when the next cycle starts, then they roll over and used restarts at 0', () => {
    const s = registeredAt('2026-03-10T09:30:00.000Z');
    let state = fold(s, decideMonthlyGrants(s, new Date('2026-03-10T09:30:00.000Z')));
    state = fold(state, [{ type: 'PostPublished', data: { charge: charge(state, 'post') } }]);
    expect(state.used_mc).to.equal(100);
    const next = decideMonthlyGrants(state, new Date('2026-04-10T09:30:00.000Z'));
    expect(next).to.have.length(1);
    expect(next[0].data.balance_after_mc).to.equal(49_900 + 50_000);
    state = fold(state, next);
    expect(state.used_mc).to.equal(0);
    expect(state.balance_mc).to.equal(99_900);
  });

  it('given a server down over two billing days, when it comes back, then each missed cycle is granted once', () => {
    const s = registeredAt('2026-03-10T09:30:00.000Z');
    const state = fold(s, decideMonthlyGrants(s, new Date('2026-03-10T09:30:00.000Z')));
    const events = decideMonthlyGrants(state, new Date('2026-05-20T00:00:00.000Z'));
    expect(events.map((e) => e.data.cycle)).to.deep.equal([1, 2]);
    expect(decideMonthlyGrants(fold(state, events), new Date('2026-05-20T00:00:00.000Z'))).to.deep.equal([]);
  });

  it('grants by tier: Pro 200, Builder 2,000', () => {
    const pro = registeredAt('2026-03-10T09:30:00.000Z', 'pro');
    expect(decideMonthlyGrants(pro, new Date('2026-03-10T09:30:00.000Z'))[0].data.amount_mc).to.equal(200_000);
    const builder = registeredAt('2026-03-10T09:30:00.000Z', 'builder');
    expect(decideMonthlyGrants(builder, new Date('2026-03-10T09:30:00.000Z'))[0].data.amount_mc).to.equal(2_000_000);
  });
});

describe('credits: the spend building block', () => {
  const withBalance = (mc: number, tier: AgentState['tier'] = 'free'): AgentState => ({ ...registeredAt('2026-03-10T09:30:00.000Z', tier), balance_mc: mc });

  it('charges the exact cost in milli-credits', () => {
    expect(charge(withBalance(1000), 'post')).to.deep.equal({ action: 'post', amount_mc: 100, balance_after_mc: 900 });
    expect(charge(withBalance(250), 'dm')).to.deep.equal({ action: 'dm', amount_mc: 250, balance_after_mc: 0 });
  });

  it('refuses with 402 and upgrade guidance when a free balance does not cover the cost', () => {
    try {
      charge(withBalance(99), 'post');
      expect.fail('should have thrown');
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      const e = err as DomainError;
      expect(e.status).to.equal(402);
      expect(e.code).to.equal('insufficient_credits');
      expect(e.extra).to.have.property('upgrade_url');
    }
  });

  it('gives top-up guidance to paid tiers', () => {
    try {
      charge(withBalance(0, 'pro'), 'post');
      expect.fail('should have thrown');
    } catch (err) {
      expect((err as DomainError).extra).to.have.property('topup_url');
    }
  });

  it('never lets an unlimited tier go negative or blocks it', () => {
    const c = charge(withBalance(0, 'enterprise'), 'matching_run');
    expect(c).to.deep.equal({ action: 'matching_run', amount_mc: 1000, balance_after_mc: 0 });
  });
});
