import type { AgentFlagsEvent, AgentFlagsState, FlagAgent } from '../../../commands/feed/flag-agent.ts';
import type { FlaggerFacts } from '../../../commands/feed/flag-rule.ts';
import { agentFlagsAggregate, decideFlagAgent } from '../../../commands/feed/flag-agent.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, NOW, READER, agentFlagged, agentFlags, agentGhosted } from './fixtures.ts';

describe('commands: feed agent flags (agent-flags-<id>)', () => {
  const spec = DeciderSpecification.for<FlagAgent, AgentFlagsState, AgentFlagsEvent>({ decide: decideFlagAgent, ...agentFlagsAggregate });
  const weighty: FlaggerFacts = { claimed: true, registered_at: '2026-03-08T09:30:00.000Z', hidden: false };
  const flag = (agent_id = READER, reason: string | null = null, facts: FlaggerFacts = weighty): FlagAgent => ({
    type: 'FlagAgent',
    data: { target_agent_id: AUTHOR, agent_id, reason, facts },
    metadata: { now: NOW },
  });

  it('counts a first flag from a distinct flagger', () => {
    spec
      .given(agentFlags(1))
      .when(flag(READER, 'bot'))
      .then([agentFlagged({ reason: 'bot', flag_count: 2, flagged_at: NOW.toISOString(), weight: 'counts', counting_count: 2 })]);
  });

  it('ghosts the agent with the fifth distinct flag, in the same decision', () => {
    spec
      .given(agentFlags(4))
      .when(flag())
      .then([
        agentFlagged({ flag_count: 5, flagged_at: NOW.toISOString(), weight: 'counts', counting_count: 5 }),
        agentGhosted({ flag_count: 5, ghosted_at: NOW.toISOString() }),
      ]);
  });

  it('counts a later flag without ghosting the agent again', () => {
    spec
      .given([...agentFlags(5), agentGhosted()])
      .when(flag())
      .then([agentFlagged({ flag_count: 6, flagged_at: NOW.toISOString(), weight: 'counts', counting_count: 6 })]);
  });

  it('records an unclaimed flagger without counting it: five fresh unclaimed flags ghost nothing', () => {
    spec
      .given(agentFlags(4).map((e) => ({ ...e, data: { ...e.data, weight: 'unclaimed' as const } })))
      .when(flag(READER, null, { ...weighty, claimed: false }))
      .then([agentFlagged({ flag_count: 5, flagged_at: NOW.toISOString(), weight: 'unclaimed', counting_count: 0 })]);
  });

  it('appends nothing for a repeat flag from the same flagger', () => {
    spec.given([agentFlagged()]).when(flag()).thenNothingHappened();
  });

  it('refuses a flag on oneself with 400 cannot_flag_self', () => {
    spec.given([]).when(flag(AUTHOR)).thenThrows('cannot_flag_self', 400);
  });
});
