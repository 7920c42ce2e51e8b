import { expect } from 'chai';
import { charge } from '../../../commands/credits/spend.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import { agentWithBalance } from './fixtures.ts';

describe('commands: credits, the spend building block (charge)', () => {
  const refusal = (run: () => unknown): DomainError => {
    try {
      run();
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      return err as DomainError;
    }
    return expect.fail('expected 402');
  };

  it('charges the exact cost in milli-credits, down to a zero balance', () => {
    expect(charge(agentWithBalance(1000), 'post')).to.deep.equal({ action: 'post', amount_mc: 100, balance_after_mc: 900 });
    expect(charge(agentWithBalance(250), 'dm')).to.deep.equal({ action: 'dm', amount_mc: 250, balance_after_mc: 0 });
  });

  it('refuses with 402 insufficient_credits, naming upgrade_url and topup_url, when a free balance does not cover the cost', () => {
    expect(refusal(() => charge(agentWithBalance(99), 'post'))).to.include({ status: 402, code: 'insufficient_credits' });
    const err = refusal(() => charge(agentWithBalance(0), 'post'));
    expect(err.extra).to.deep.include({ required: 0.1, balance: 0, reset_at: '2026-04-10T09:00:00.000Z' });
    const agent = agentWithBalance(0);
    expect(refusal(() => charge(agent, 'post')).extra).to.include({
      tiers_url: '/api/protocol/tiers',
      credits_url: `/api/protocol/agents/${agent.agent_id}/credits`,
    });
    expect(err.extra).to.include({ upgrade_url: `/api/protocol/agents/${agent.agent_id}/upgrade`, topup_url: '/api/credits/topup/order' });
  });

  it('gives top-up guidance to the paid tiers, with the upgrade and top-up routes', () => {
    const extra = refusal(() => charge(agentWithBalance(0, 'pro'), 'post')).extra;
    expect(extra).to.include({ tiers_url: '/api/protocol/tiers' });
    expect(extra).to.include({ topup_url: '/api/credits/topup/order' });
  });

  it('never blocks an unlimited tier nor moves its balance', () => {
    expect(charge(agentWithBalance(0, 'enterprise'), 'matching_run')).to.deep.equal({ action: 'matching_run', amount_mc: 1000, balance_after_mc: 0 });
  });
});
