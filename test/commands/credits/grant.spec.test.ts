import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import { cycleStart, currentCycle } from '../../../commands/credits/billing.ts';
import type { GrantMonthlyCredits } from '../../../commands/credits/grant.ts';
import { decideGrantMonthlyCredits } from '../../../commands/credits/grant.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, agentRegistered, at, charge, funded, monthlyCreditsGranted, postPublished } from './fixtures.ts';

describe('commands: credits billing cycles', () => {
  it('clamps the billing day to the last day of shorter months', () => {
    expect(cycleStart('2026-01-31T10:00:00.000Z', 1).toISOString()).to.equal('2026-02-28T10:00:00.000Z');
    expect(cycleStart('2026-01-31T10:00:00.000Z', 2).toISOString()).to.equal('2026-03-31T10:00:00.000Z');
    expect(cycleStart('2028-01-30T00:00:00.000Z', 1).toISOString()).to.equal('2028-02-29T00:00:00.000Z');
    expect(cycleStart('2026-11-15T08:00:00.000Z', 2).toISOString()).to.equal('2027-01-15T08:00:00.000Z');
  });

  it('counts the cycles started by a given time', () => {
    expect(currentCycle('2026-01-31T10:00:00.000Z', new Date('2026-02-28T09:59:59.999Z'))).to.equal(0);
    expect(currentCycle('2026-01-31T10:00:00.000Z', new Date('2026-02-28T10:00:00.000Z'))).to.equal(1);
    expect(currentCycle('2026-01-31T10:00:00.000Z', new Date('2026-05-01T00:00:00.000Z'))).to.equal(3);
  });
});

describe('commands: credits GrantMonthlyCredits (agent-<id>)', () => {
  const spec = DeciderSpecification.for<GrantMonthlyCredits, AgentState, AgentStreamEvent>({ decide: decideGrantMonthlyCredits, ...agentAggregate });
  const grant = (now: Date | string): GrantMonthlyCredits => ({ type: 'GrantMonthlyCredits', data: { agent_id: AGENT }, metadata: { now: new Date(now) } });
  const cycle = (n: number, balance_after_mc: number, amount_mc = 50_000) =>
    monthlyCreditsGranted({
      cycle: n,
      amount_mc,
      balance_after_mc,
      cycle_start: cycleStart(at(9).toISOString(), n).toISOString(),
      next_grant_at: cycleStart(at(9).toISOString(), n + 1).toISOString(),
    });

  it('grants cycle 0 (50 credits on the free tier) to a registered agent', () => {
    spec
      .given([agentRegistered()])
      .when(grant(at(9)))
      .then([cycle(0, 50_000)]);
  });

  it('grants nothing before the next billing day', () => {
    spec.given(funded()).when(grant('2026-04-10T08:59:59.999Z')).thenNothingHappened();
  });

  it('rolls unused credits over into the next cycle', () => {
    spec
      .given([...funded(), postPublished({ charge: charge('post', 100, 49_900) })])
      .when(grant('2026-04-10T09:00:00.000Z'))
      .then([cycle(1, 99_900)]);
  });

  it('grants each cycle missed while the server was down, once', () => {
    spec
      .given(funded())
      .when(grant('2026-05-20T00:00:00.000Z'))
      .then([cycle(1, 100_000), cycle(2, 150_000)]);
    spec
      .given([...funded(), cycle(1, 100_000), cycle(2, 150_000)])
      .when(grant('2026-05-20T00:00:00.000Z'))
      .thenNothingHappened();
  });

  it('grants by tier: Pro 200, Builder 2,000, Enterprise (unlimited) 0', () => {
    spec
      .given([agentRegistered({ tier: 'pro' })])
      .when(grant(at(9)))
      .then([cycle(0, 200_000, 200_000)]);
    spec
      .given([agentRegistered({ tier: 'builder' })])
      .when(grant(at(9)))
      .then([cycle(0, 2_000_000, 2_000_000)]);
    spec
      .given([agentRegistered({ tier: 'enterprise' })])
      .when(grant(at(9)))
      .then([cycle(0, 0, 0)]);
  });

  it('grants nothing to an agent that does not exist', () => {
    spec
      .given([])
      .when(grant(at(9)))
      .thenNothingHappened();
  });
});
