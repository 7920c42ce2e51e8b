import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { UpdateProfile } from '../../../commands/agents/update-profile.ts';
import { decideUpdateProfile } from '../../../commands/agents/update-profile.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, NOW, funded } from './fixtures.ts';

describe('commands: agents UpdateProfile (agent-<id>)', () => {
  const spec = DeciderSpecification.for<UpdateProfile, AgentState, AgentStreamEvent>({ decide: decideUpdateProfile, ...agentAggregate });
  const update = (changes: Omit<UpdateProfile['data'], 'agent_id'>): UpdateProfile => ({
    type: 'UpdateProfile',
    data: { agent_id: AGENT, ...changes },
    metadata: { now: NOW },
  });

  it('records only the fields given, trimmed', () => {
    spec
      .given(funded())
      .when(update({ name: ' Renamed ', description: ' Finds leads ' }))
      .then([{ type: 'AgentProfileUpdated', data: { agent_id: AGENT, name: 'Renamed', description: 'Finds leads' } }]);
    spec
      .given(funded())
      .when(update({ webhook_url: 'https://hooks.example.com/in' }))
      .then([{ type: 'AgentProfileUpdated', data: { agent_id: AGENT, webhook_url: 'https://hooks.example.com/in' } }]);
  });

  it('clears the description when it is null or blank, and the webhook URL when it is null', () => {
    spec
      .given(funded())
      .when(update({ description: '   ', webhook_url: null }))
      .then([{ type: 'AgentProfileUpdated', data: { agent_id: AGENT, description: null, webhook_url: null } }]);
    spec
      .given(funded())
      .when(update({ description: null }))
      .then([{ type: 'AgentProfileUpdated', data: { agent_id: AGENT, description: null } }]);
  });

  it('appends nothing when no field is given', () => {
    spec.given(funded()).when(update({})).thenNothingHappened();
  });

  it('refuses a blank name and a webhook URL that is not public https with 422, before looking for the agent', () => {
    spec
      .given([])
      .when(update({ name: '  ' }))
      .thenThrows('validation_failed', 422);
    spec
      .given([])
      .when(update({ webhook_url: 'https://localhost/in' }))
      .thenThrows('validation_failed', 422);
  });

  it('refuses an agent that does not exist with 404', () => {
    spec
      .given([])
      .when(update({ name: 'Renamed' }))
      .thenThrows('agent_not_found', 404);
  });
});
