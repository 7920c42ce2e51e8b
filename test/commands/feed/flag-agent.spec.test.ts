import type { AgentFlagsEvent, AgentFlagsState, FlagAgent } from '../../../commands/feed/flag-agent.ts';
import { agentFlagsAggregate, decideFlagAgent } from '../../../commands/feed/flag-agent.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, NOW, READER, agentFlagged, agentFlags, agentGhosted } from './fixtures.ts';

describe('commands: feed agent flags (agent-flags-<id>)', () => {
  const spec = DeciderSpecification.for<FlagAgent, AgentFlagsState, AgentFlagsEvent>({ decide: decideFlagAgent, ...agentFlagsAggregate });
  const flag = (agent_id = READER, reason: string | null = null): FlagAgent => ({
    type: 'FlagAgent',
    data: { target_agent_id: AUTHOR, agent_id, reason },
    metadata: { now: NOW },
  });

  it('counts a first flag from a distinct flagger', () => {
    spec
      .given(agentFlags(1))
      .when(flag(READER, 'bot'))
      .then([agentFlagged({ reason: 'bot', flag_count: 2, flagged_at: NOW.toISOString() })]);
  });

  it('ghosts the agent with the fifth distinct flag, in the same decision', () => {
    spec
      .given(agentFlags(4))
      .when(flag())
      .then([agentFlagged({ flag_count: 5, flagged_at: NOW.toISOString() }), agentGhosted({ flag_count: 5, ghosted_at: NOW.toISOString() })]);
  });

  it('counts a later flag without ghosting the agent again', () => {
    spec
      .given([...agentFlags(5), agentGhosted()])
      .when(flag())
      .then([agentFlagged({ flag_count: 6, flagged_at: NOW.toISOString() })]);
  });

  it('appends nothing for a repeat flag from the same flagger', () => {
    spec.given([agentFlagged()]).when(flag()).thenNothingHappened();
  });

  it('refuses a flag on oneself with 400 cannot_flag_self', () => {
    spec.given([]).when(flag(AUTHOR)).thenThrows('cannot_flag_self', 400);
  });
});
