import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { ConfigureWebhook, FireTestEvent, RegenerateWebhookSecret } from '../../../commands/webhooks/config.ts';
import { decideConfigureWebhook, decideFireTestEvent, decideRegenerateWebhookSecret } from '../../../commands/webhooks/config.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, HOUR_MS, NOW, PING, URL_, funded, later, webhookConfigured, webhookSecretRotated, webhookTestFired } from './fixtures.ts';

describe('commands: webhooks ConfigureWebhook (agent-<id>)', () => {
  const spec = DeciderSpecification.for<ConfigureWebhook, AgentState, AgentStreamEvent>({ decide: decideConfigureWebhook, ...agentAggregate });
  const none = { webhook_url: null, signature_scheme: null };
  const configure = (over: Partial<ConfigureWebhook['data']> = {}): ConfigureWebhook => ({
    type: 'ConfigureWebhook',
    data: { agent_id: AGENT, current: none, allow_loopback: false, resolution_problem: null, ...over },
    metadata: { now: NOW },
  });
  const configured = (over: Parameters<typeof webhookConfigured>[0] = {}) => webhookConfigured({ configured_at: NOW.toISOString(), ...over });

  it('sets the URL, every event (null) and variant B (timestamped) by default', () => {
    spec
      .given(funded())
      .when(configure({ webhook_url: URL_ }))
      .then([configured({ signature_scheme: 'timestamped' })]);
  });

  it('keeps delivery_timestamped for a webhook configured with it; a webhook set again after its URL was removed is new and gets variant B', () => {
    spec
      .given(funded())
      .when(configure({ current: { webhook_url: URL_, signature_scheme: 'delivery_timestamped' }, events: ['new_dm'] }))
      .then([configured({ signature_scheme: 'delivery_timestamped', events: ['new_dm'] })]);
    spec
      .given(funded())
      .when(configure({ current: { webhook_url: null, signature_scheme: 'delivery_timestamped' }, webhook_url: URL_ }))
      .then([configured({ signature_scheme: 'timestamped' })]);
  });

  it('keeps the earlier default (timestamped) for a URL set before schemes were recorded, unless another is chosen', () => {
    const legacy = { webhook_url: URL_, signature_scheme: null };
    spec
      .given(funded())
      .when(configure({ current: legacy, events: ['new_dm'] }))
      .then([configured({ signature_scheme: 'timestamped', events: ['new_dm'] })]);
    spec
      .given(funded())
      .when(configure({ current: legacy, signature_scheme: 'standard_webhooks' }))
      .then([configured({ signature_scheme: 'standard_webhooks' })]);
  });

  it('keeps the current URL and scheme when the change leaves them out; events left out mean every event, [] pauses', () => {
    const current = { webhook_url: URL_, signature_scheme: 'body' as const };
    spec
      .given(funded())
      .when(configure({ current }))
      .then([configured({ signature_scheme: 'body' })]);
    spec
      .given(funded())
      .when(configure({ current, events: [] }))
      .then([configured({ signature_scheme: 'body', events: [] })]);
    spec
      .given(funded())
      .when(configure({ current, webhook_url: null, events: ['new_dm'], signature_scheme: 'timestamped' }))
      .then([configured({ webhook_url: null, events: ['new_dm'], signature_scheme: 'timestamped' })]);
  });

  it('refuses a URL that is not public https with 422, also when it is the current one kept', () => {
    spec
      .given(funded())
      .when(configure({ webhook_url: 'http://hooks.example.com/in' }))
      .thenThrows('validation_failed', 422);
    spec
      .given(funded())
      .when(configure({ current: { webhook_url: 'https://169.254.169.254/in', signature_scheme: null } }))
      .thenThrows('validation_failed', 422);
  });

  it('refuses a URL whose host resolves to a non-public address with 422', () => {
    spec
      .given(funded())
      .when(configure({ webhook_url: URL_, resolution_problem: 'hooks.example.com resolves to a non-public address (10.0.0.1)' }))
      .thenThrows('validation_failed', 422);
  });

  it('admits a literal loopback URL over http only where the deployment allows loopback', () => {
    const loopback = 'http://127.0.0.1:9000/in';
    spec
      .given(funded())
      .when(configure({ webhook_url: loopback }))
      .thenThrows('validation_failed', 422);
    spec
      .given(funded())
      .when(configure({ webhook_url: loopback, allow_loopback: true }))
      .then([configured({ webhook_url: loopback })]);
  });

  it('refuses an agent that does not exist with 404', () => {
    spec
      .given([])
      .when(configure({ webhook_url: URL_ }))
      .thenThrows('agent_not_found', 404);
  });
});

describe('commands: webhooks RegenerateWebhookSecret (agent-<id>)', () => {
  const spec = DeciderSpecification.for<RegenerateWebhookSecret, AgentState, AgentStreamEvent>({ decide: decideRegenerateWebhookSecret, ...agentAggregate });
  const regenerate: RegenerateWebhookSecret = {
    type: 'RegenerateWebhookSecret',
    data: { agent_id: AGENT },
    metadata: { now: NOW, webhook_secret_enc: 'v1.new-secret' },
  };

  it("stores the new secret's ciphertext, which signs from now on, the previous one beside it for 24 hours", () => {
    spec
      .given(funded())
      .when(regenerate)
      .then([webhookSecretRotated({ rotated_at: NOW.toISOString(), previous_valid_until: later(24 * HOUR_MS).toISOString() })]);
  });

  it('keeps the previous secret for keep_previous_seconds, none at all with 0 (a leaked secret)', () => {
    spec
      .given(funded())
      .when({ ...regenerate, data: { agent_id: AGENT, keep_previous_seconds: 600 } })
      .then([webhookSecretRotated({ rotated_at: NOW.toISOString(), previous_valid_until: later(600_000).toISOString() })]);
    spec
      .given(funded())
      .when({ ...regenerate, data: { agent_id: AGENT, keep_previous_seconds: 0 } })
      .then([webhookSecretRotated({ rotated_at: NOW.toISOString(), previous_valid_until: null })]);
  });

  it('refuses keep_previous_seconds outside 0..86400 with 422', () => {
    spec
      .given(funded())
      .when({ ...regenerate, data: { agent_id: AGENT, keep_previous_seconds: 86_401 } })
      .thenThrows('validation_failed', 422);
  });

  it('refuses an agent that does not exist with 404', () => {
    spec.given([]).when(regenerate).thenThrows('agent_not_found', 404);
  });
});

describe('commands: webhooks FireTestEvent (agent-<id>)', () => {
  const spec = DeciderSpecification.for<FireTestEvent, AgentState, AgentStreamEvent>({ decide: decideFireTestEvent, ...agentAggregate });
  const fire: FireTestEvent = { type: 'FireTestEvent', data: { agent_id: AGENT }, metadata: { now: NOW, ping_id: PING } };

  it("puts an svc_ping with the command's id into the agent's inbox", () => {
    spec
      .given(funded())
      .when(fire)
      .then([webhookTestFired({ fired_at: NOW.toISOString() })]);
  });

  it('refuses an agent that does not exist with 404', () => {
    spec.given([]).when(fire).thenThrows('agent_not_found', 404);
  });
});
