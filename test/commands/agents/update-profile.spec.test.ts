import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { UpdateProfile } from '../../../commands/agents/update-profile.ts';
import { decideUpdateProfile } from '../../../commands/agents/update-profile.ts';
import type { SignatureScheme } from '../../../events/webhooks.ts';
import { webhookConfigured } from '../../fixtures/events.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, NOW, funded } from './fixtures.ts';

describe('commands: agents UpdateProfile (agent-<id>)', () => {
  const spec = DeciderSpecification.for<UpdateProfile, AgentState, AgentStreamEvent>({ decide: decideUpdateProfile, ...agentAggregate });
  const update = (changes: Omit<UpdateProfile['data'], 'agent_id'>): UpdateProfile => ({
    type: 'UpdateProfile',
    data: { agent_id: AGENT, ...changes },
    metadata: { now: NOW },
  });

  const webhook = (over: Partial<NonNullable<UpdateProfile['data']['webhook']>> = {}) => ({
    current: { webhook_url: null, signature_scheme: null, events: null },
    allow_loopback: false,
    resolution_problem: null,
    ...over,
  });
  const configured = (webhook_url: string | null, signature_scheme: SignatureScheme = 'timestamped') =>
    webhookConfigured({ agent_id: AGENT, webhook_url, events: null, signature_scheme, configured_at: NOW.toISOString() });

  it('records only the fields given, trimmed', () => {
    spec
      .given(funded())
      .when(update({ name: ' Renamed ', description: ' Finds leads ' }))
      .then([{ type: 'AgentProfileUpdated', data: { agent_id: AGENT, name: 'Renamed', description: 'Finds leads' } }]);
    spec
      .given(funded())
      .when(update({ webhook_url: 'https://hooks.example.com/in', webhook: webhook() }))
      .then([configured('https://hooks.example.com/in')]);
  });

  it('sets a webhook URL as PATCH .../webhook does, its events filter and scheme kept (the earlier default for a URL set before schemes were recorded)', () => {
    spec
      .given(funded())
      .when(
        update({
          name: 'Renamed',
          webhook_url: 'https://hooks.example.com/new',
          webhook: webhook({ current: { webhook_url: 'https://hooks.example.com/in', signature_scheme: null, events: ['new_dm'] } }),
        }),
      )
      .then([
        { type: 'AgentProfileUpdated', data: { agent_id: AGENT, name: 'Renamed' } },
        {
          ...configured('https://hooks.example.com/new', 'timestamped'),
          data: { ...configured('https://hooks.example.com/new', 'timestamped').data, events: ['new_dm'] },
        },
      ]);
  });

  it('refuses with 422 a webhook URL whose host resolved to a non-public address, as PATCH .../webhook does', () => {
    spec
      .given(funded())
      .when(
        update({
          webhook_url: 'https://vm.example.test/in',
          webhook: webhook({ resolution_problem: 'vm.example.test resolves to a non-public address (127.0.0.1)' }),
        }),
      )
      .thenThrows('validation_failed', 422);
  });

  it('clears the description when it is null or blank, and the webhook URL when it is null', () => {
    spec
      .given(funded())
      .when(update({ description: '   ', webhook_url: null, webhook: webhook() }))
      .then([{ type: 'AgentProfileUpdated', data: { agent_id: AGENT, description: null } }, configured(null)]);
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
      .when(update({ webhook_url: 'https://localhost/in', webhook: webhook() }))
      .thenThrows('validation_failed', 422);
  });

  it('refuses an agent that does not exist with 404', () => {
    spec
      .given([])
      .when(update({ name: 'Renamed' }))
      .thenThrows('agent_not_found', 404);
  });
});
