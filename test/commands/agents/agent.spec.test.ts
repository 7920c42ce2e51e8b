import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import { webhookConfigured, webhookDisabled, webhookSecretRegenerated, webhookTestFired } from '../webhooks/fixtures.ts';
import { matchingRunCompleted } from '../matching/fixtures.ts';
import {
  AGENT,
  HOUR_MS,
  OTHER,
  agentBlocked,
  agentClaimed,
  agentOwnerLinked,
  agentProfileUpdated,
  agentUnblocked,
  apiKeyReplaced,
  at,
  autoPostPrefsChanged,
  charge,
  directMessageSent,
  funded,
  hex,
  later,
  mailQueued,
  monthlyCreditsGranted,
  postPublished,
  postScheduled,
  scheduledPostCancelled,
} from './fixtures.ts';

const fold = (events: AgentStreamEvent[], from: AgentState = agentAggregate.initialState()) => events.reduce(agentAggregate.evolve, from);

describe('commands: the agent aggregate (agent-<id>)', () => {
  it('folds a registration into the identity the commands decide on', () => {
    expect(fold(funded())).to.include({
      exists: true,
      agent_id: AGENT,
      name: 'Agent',
      tier: 'free',
      registered_at: at(9).toISOString(),
      owner_email: 'owner@example.com',
      api_key_hash: hex('a'),
      balance_mc: 50_000,
      used_mc: 0,
      cycle: 0,
      next_grant_at: '2026-04-10T09:00:00.000Z',
      claimed: false,
      owner_user_id: null,
    });
  });

  it('follows the balance through every charge it carries, and restarts the usage at each grant', () => {
    const spent = fold([...funded(), postPublished(), directMessageSent({ charge: charge('dm', 250, 49_650) })]);
    expect(spent).to.include({ balance_mc: 49_650, used_mc: 350 });
    const granted = fold([monthlyCreditsGranted({ cycle: 1, amount_mc: 50_000, balance_after_mc: 99_650, next_grant_at: '2026-05-10T09:00:00.000Z' })], spent);
    expect(granted).to.include({ balance_mc: 99_650, used_mc: 0, cycle: 1, next_grant_at: '2026-05-10T09:00:00.000Z' });
  });

  it("never makes a cycle's usage negative through a refund of a charge from an earlier cycle", () => {
    const state = fold([
      ...funded(),
      postScheduled(),
      monthlyCreditsGranted({ cycle: 1, balance_after_mc: 99_900 }),
      scheduledPostCancelled({ charge: charge('schedule_post_refund', -100, 100_000) }),
    ]);
    expect(state).to.include({ balance_mc: 100_000, used_mc: 0 });
  });

  it('claims, links an owner, replaces the key and renames; an update without a name keeps it', () => {
    const claimed = fold([...funded(), agentClaimed()]);
    expect(claimed).to.include({ claimed: true, owner_user_id: null });
    const linked = fold([agentOwnerLinked(), apiKeyReplaced(), agentProfileUpdated({ name: 'Renamed' })], claimed);
    expect(linked).to.include({ owner_user_id: 'usr_owner000000000000000', api_key_hash: hex('b'), name: 'Renamed' });
    expect(fold([agentProfileUpdated({ name: undefined, description: 'x' })], linked).name).to.equal('Renamed');
    expect(fold([...funded(), agentClaimed({ user_id: 'usr_owner000000000000000' })]).owner_user_id).to.equal('usr_owner000000000000000');
  });

  it('keeps the auto-post toggle a change leaves out, and the time of the last autonomous post', () => {
    const state = fold([
      ...funded(),
      autoPostPrefsChanged({ auto_post_on_scout: false }),
      autoPostPrefsChanged({ auto_post_on_scout: undefined, auto_post_on_mixer: false }),
    ]);
    expect(state).to.include({ auto_post_on_scout: false, auto_post_on_mixer: false, last_auto_post_at: null });
    const posted = fold([postPublished({ charge: undefined, auto: true, source: 'scout', signal_hash: hex('f') })], state);
    expect(posted.last_auto_post_at).to.equal(at(9, 10).toISOString());
    expect(posted.signals.get(hex('f'))).to.deep.equal({ at: at(9, 10).toISOString(), post_id: 'pst_post00000000000000000' });
  });

  it('keeps each scheduled post and what cancelling it refunds, until it is published or cancelled', () => {
    const scheduled = fold([...funded(), postScheduled()]);
    expect(scheduled.scheduled).to.deep.equal({ pst_later0000000000000000: { publish_at: '2026-03-11T00:00:00.000Z', amount_mc: 100 } });
    expect(scheduled.schedules_at).to.deep.equal([at(9, 10).toISOString()]);
    expect(fold([scheduledPostCancelled()], scheduled).scheduled).to.deep.equal({});
    const published = fold([postPublished({ post_id: 'pst_later0000000000000000', charge: undefined, scheduled_at: at(9, 10).toISOString() })], scheduled);
    expect(published.scheduled).to.deep.equal({});
    expect(published.balance_mc).to.equal(49_900);
  });

  it('keeps 24 h of DMs, overall and per recipient, and the agents it blocks', () => {
    const first = directMessageSent({ sent_at: at(9).toISOString() });
    const toUser = directMessageSent({ to_agent_id: null, to_user_id: 'usr_1', sent_at: at(10).toISOString() });
    const nextDay = directMessageSent({ sent_at: later(24 * HOUR_MS, at(9, 30)).toISOString() });
    const state = fold([...funded(), first, toUser, nextDay]);
    expect(state.dms_at).to.deep.equal([at(10).toISOString(), nextDay.data.sent_at]);
    expect(state.dm_pairs).to.deep.equal({ 'user:usr_1': [at(10).toISOString()], [OTHER]: [nextDay.data.sent_at] });
    const blocked = fold([agentBlocked()], state);
    expect(blocked.blocked).to.deep.equal({ [OTHER]: true });
    expect(fold([agentUnblocked()], blocked).blocked).to.deep.equal({});
  });

  it('remembers the matching runs of the last 24 h, each charged once', () => {
    const first = matchingRunCompleted({ run_id: 'run_first000000000000000', completed_at: at(9).toISOString() });
    const second = matchingRunCompleted({
      run_id: 'run_second00000000000000',
      completed_at: later(24 * HOUR_MS, at(9, 30)).toISOString(),
      charge: charge('matching_run', 1000, 48_000),
    });
    const state = fold([...funded(), first, second]);
    expect(state.recent_runs).to.deep.equal({ run_second00000000000000: second.data.completed_at });
    expect(state).to.include({ balance_mc: 48_000 });
  });

  it('leaves the state as it was for events that change nothing a command decides on', () => {
    const state = fold(funded());
    for (const e of [webhookConfigured(), webhookSecretRegenerated(), webhookTestFired(), webhookDisabled(), mailQueued()]) {
      expect(agentAggregate.evolve(state, e), e.type).to.equal(state);
    }
  });
});
