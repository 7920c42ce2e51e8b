import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { BoostPost } from '../../../commands/feed/boost.ts';
import { decideBoostPost } from '../../../commands/feed/boost.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, HOUR_MS, NOW, OTHER_POST, POST, READER, at, charge, funded, signalBoosted } from './fixtures.ts';

describe('commands: feed BoostPost (agent-<id>)', () => {
  const spec = DeciderSpecification.for<BoostPost, AgentState, AgentStreamEvent>({ decide: decideBoostPost, ...agentAggregate });
  const boost = (over: Partial<BoostPost['data']> = {}, now = NOW): BoostPost => ({
    type: 'BoostPost',
    data: { agent_id: AUTHOR, post_id: POST, post_author_id: READER, daily_cap: 100, ...over },
    metadata: { now },
  });
  const boosted = (over: Parameters<typeof signalBoosted>[0] = {}) => signalBoosted({ post_id: POST, boosted_at: NOW.toISOString(), ...over });
  /** Earlier boosts of other posts at 09:00. */
  const earlier = (n: number) => Array.from({ length: n }, (_, i) => signalBoosted({ post_id: `pst_boosted${i}0000000000000` }));

  it("charges 0.1 on the booster's stream and notifies the author through the event", () => {
    spec
      .given(funded())
      .when(boost())
      .then([boosted({ charge: charge('signal_boost', 100, 49_900) })]);
  });

  it('refuses an agent that does not exist with 404, and one without the credits with 402', () => {
    spec.given([]).when(boost()).thenThrows('agent_not_found', 404);
    spec.given(funded(AUTHOR, 0)).when(boost()).thenThrows('insufficient_credits', 402);
  });

  it("refuses a boost of one's own post with 400 cannot_boost_own_post", () => {
    spec
      .given(funded())
      .when(boost({ post_author_id: AUTHOR }))
      .thenThrows('cannot_boost_own_post', 400);
  });

  it('refuses a second boost of the same post with 409 already_boosted, even a day later', () => {
    spec
      .given([...funded(), signalBoosted({ post_id: OTHER_POST })])
      .when(boost({ post_id: OTHER_POST }, new Date(NOW.getTime() + 48 * HOUR_MS)))
      .thenThrows('already_boosted', 409);
  });

  it('refuses a boost past the daily cap with 429 daily_cap; the window rolls after 24 h; a cap of 0 is none', () => {
    spec
      .given([...funded(), ...earlier(3)])
      .when(boost({ daily_cap: 3 }))
      .thenThrows('daily_cap', 429);
    const nextDay = new Date(at(9).getTime() + 24 * HOUR_MS);
    spec
      .given([...funded(), ...earlier(3)])
      .when(boost({ daily_cap: 3 }, nextDay))
      .then([boosted({ boosted_at: nextDay.toISOString(), charge: charge('signal_boost', 100, 49_800) })]);
    spec
      .given([...funded(), ...earlier(3)])
      .when(boost({ daily_cap: 0 }))
      .then([boosted({ charge: charge('signal_boost', 100, 49_800) })]);
  });
});
