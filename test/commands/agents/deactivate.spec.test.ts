import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { DeactivateAgent, Deactivator } from '../../../commands/agents/deactivate.ts';
import { decideDeactivateAgent } from '../../../commands/agents/deactivate.ts';
import type { UpdateProfile } from '../../../commands/agents/update-profile.ts';
import { decideUpdateProfile } from '../../../commands/agents/update-profile.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, NOW, agentDeactivated, agentOwnerLinked, funded, hex } from './fixtures.ts';

const OWNER = 'usr_owner000000000000000';

describe('commands: agents DeactivateAgent (agent-<id>)', () => {
  const spec = DeciderSpecification.for<DeactivateAgent, AgentState, AgentStreamEvent>({ decide: decideDeactivateAgent, ...agentAggregate });
  const deactivate = (by: Deactivator = { kind: 'agent' }): DeactivateAgent => ({
    type: 'DeactivateAgent',
    data: { agent_id: AGENT, by },
    metadata: { now: NOW },
  });
  /** What deactivating at NOW records (the key of `funded()`: hex('a')). */
  const deactivated = (over: Parameters<typeof agentDeactivated>[0] = {}) =>
    agentDeactivated({ api_key_hash: hex('a'), deactivated_at: NOW.toISOString(), owner_email_released_at: '2026-04-09T09:30:00.000Z', ...over });

  it('the agent itself: revokes the key it holds, and frees the owner e-mail 30 days later', () => {
    spec.given(funded()).when(deactivate()).then([deactivated()]);
  });

  it('its owner by bearer: records who asked and the account it leaves', () => {
    spec
      .given([...funded(), agentOwnerLinked({ user_id: OWNER })])
      .when(deactivate({ kind: 'owner', user_id: OWNER }))
      .then([deactivated({ by: 'owner', by_user_id: OWNER, owner_user_id: OWNER })]);
  });

  it('refuses a user who does not own the agent with 403 not_owner, and an unknown agent with 404', () => {
    spec
      .given([...funded(), agentOwnerLinked({ user_id: OWNER })])
      .when(deactivate({ kind: 'owner', user_id: 'usr_stranger0000000000000' }))
      .thenThrows('not_owner', 403);
    spec
      .given(funded())
      .when(deactivate({ kind: 'owner', user_id: OWNER }))
      .thenThrows('not_owner', 403);
    spec.given([]).when(deactivate()).thenThrows('agent_not_found', 404);
  });

  it('a deactivated agent accepts no command, a second deactivation included (410 agent_deactivated)', () => {
    spec
      .given([...funded(), agentDeactivated()])
      .when(deactivate())
      .thenThrows('agent_deactivated', 410);
    const update: UpdateProfile = { type: 'UpdateProfile', data: { agent_id: AGENT, name: 'Back' }, metadata: { now: NOW } };
    DeciderSpecification.for<UpdateProfile, AgentState, AgentStreamEvent>({ decide: decideUpdateProfile, ...agentAggregate })
      .given([...funded(), agentDeactivated()])
      .when(update)
      .thenThrows('agent_deactivated', 410);
  });
});
