import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { PublishAutoPost } from '../../../commands/matching/auto-post.ts';
import { AUTO_POST_WINDOW_MS, autoPostVerdict, decidePublishAutoPost, scoutDraft } from '../../../commands/matching/auto-post.ts';
import { autoSignalHash } from '../../../events/matching.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, HOUR_MS, NOW, OTHER, SCOUT_POST, autoPostPrefsChanged, autoPostPublished, funded, later } from './fixtures.ts';

describe('commands: matching PublishAutoPost (agent-<id>)', () => {
  const spec = DeciderSpecification.for<PublishAutoPost, AgentState, AgentStreamEvent>({ decide: decidePublishAutoPost, ...agentAggregate });
  const draft = scoutDraft({ agent_id: OTHER, name: 'Other', capabilities: ['b2b-sales', 'crm'] }, ['b2b-sales'], 'b2b-sales');
  const hash = autoSignalHash(AGENT, 'scout', draft.signal_key);
  const publish = (now = NOW, post_id = SCOUT_POST): PublishAutoPost => ({
    type: 'PublishAutoPost',
    data: { agent_id: AGENT, source: 'scout', draft },
    metadata: { now, post_id },
  });
  /** An earlier auto-post of the same signal, at `at`. */
  const posted = (at: Date, post_id = 'pst_earlier0000000000000') => autoPostPublished({ post_id, published_at: at.toISOString(), signal_hash: hash });

  it("publishes the scout's signal_found post, free and marked auto, keyed by the signal for 48 h", () => {
    spec
      .given(funded())
      .when(publish())
      .then([
        autoPostPublished({
          title: draft.title,
          body: draft.body,
          room_slug: 'b2b-sales',
          hashtags: ['b2b-sales', 'crm'],
          published_at: NOW.toISOString(),
          signal_hash: hash,
        }),
      ]);
  });

  it("appends nothing for an agent that does not exist, or whose owner turned the scout's posts off", () => {
    spec.given([]).when(publish()).thenNothingHappened();
    spec
      .given([...funded(), autoPostPrefsChanged({ auto_post_on_scout: false })])
      .when(publish())
      .thenNothingHappened();
  });

  it('suppresses an auto-post within 4 h of the last one (of either kind), and allows it at 4 h', () => {
    const other = autoPostPublished({ source: 'mixer', post_type: 'activity_summary', signal_hash: 'a'.repeat(64), published_at: NOW.toISOString() });
    spec
      .given([...funded(), other])
      .when(publish(later(AUTO_POST_WINDOW_MS - 1)))
      .thenNothingHappened();
    spec
      .given([...funded(), other])
      .when(publish(later(AUTO_POST_WINDOW_MS)))
      .thenMatches((events) => expect(events.map((e) => e.type)).to.deep.equal(['PostPublished']));
  });

  it('suppresses the same signal for 48 h, whatever its text', () => {
    spec
      .given([...funded(), posted(NOW)])
      .when(publish(later(47 * HOUR_MS)))
      .thenNothingHappened();
    spec
      .given([...funded(), posted(NOW)])
      .when(publish(later(48 * HOUR_MS)))
      .thenMatches((events) => expect(events).to.have.length(1));
  });

  it('appends nothing when this very command already published the post (a redelivered job), even after the windows', () => {
    spec
      .given([...funded(), posted(NOW, SCOUT_POST)])
      .when(publish(later(5 * HOUR_MS)))
      .thenNothingHappened();
  });

  it('states why a post was suppressed, in rule order: toggle, then 4 h, then 48 h', () => {
    const fold = (events: AgentStreamEvent[]) => events.reduce(agentAggregate.evolve, agentAggregate.initialState());
    const recent = [...funded(), posted(NOW)];
    const verdict = (events: AgentStreamEvent[], post_id = 'pst_new00000000000000000', now = later(HOUR_MS)) =>
      autoPostVerdict(fold(events), 'scout', draft, post_id, now);
    expect(verdict([...recent, autoPostPrefsChanged({ auto_post_on_scout: false })])).to.deep.equal({ kind: 'skip', reason: 'toggle_off' });
    expect(verdict(recent)).to.deep.equal({ kind: 'skip', reason: 'rate_limited' });
    expect(verdict(recent, undefined, later(5 * HOUR_MS))).to.deep.equal({ kind: 'skip', reason: 'duplicate_signal' });
    expect(verdict(recent, 'pst_earlier0000000000000')).to.deep.equal({ kind: 'already', post_id: 'pst_earlier0000000000000' });
    expect(verdict(funded()).kind).to.equal('publish');
  });
});
