import { expect } from 'chai';
import type { WebhookUrlFacts } from '../../../commands/webhooks/target.ts';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { RegisterAgent, RegistrationInput } from '../../../commands/agents/register.ts';
import { decideRegisterAgent, validateRegistration } from '../../../commands/agents/register.ts';
import { ValidationFailed } from '../../../events/kernel/errors.ts';
import { webhookConfigured } from '../../fixtures/events.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, NOW, agentRegistered, funded, hex, monthlyCreditsGranted } from './fixtures.ts';

const NO_FACTS: WebhookUrlFacts = { allow_loopback: false, resolution_problem: null };

describe('commands: agents RegisterAgent (agent-<id>)', () => {
  const spec = DeciderSpecification.for<RegisterAgent, AgentState, AgentStreamEvent>({ decide: decideRegisterAgent, ...agentAggregate });
  const register = (over: Partial<RegisterAgent['data']> = {}): RegisterAgent => ({
    type: 'RegisterAgent',
    data: { name: 'Agent', description: null, capabilities: ['lead-gen'], owner_name: 'Owner', owner_email: 'owner@example.com', webhook_url: null, ...over },
    metadata: { now: NOW, agent_id: AGENT, api_key_hash: hex('a'), claim_token_hash: hex('c'), webhook_secret_enc: 'v1.secret' },
  });

  it("writes the agent on the free tier, with its secrets' hashes and ciphertext, and grants cycle 0 in the same append", () => {
    spec
      .given([])
      .when(register({ description: 'Finds leads', webhook_url: 'https://hooks.example.com/in' }))
      .then([
        agentRegistered({ description: 'Finds leads', webhook_url: 'https://hooks.example.com/in', registered_at: NOW.toISOString() }),
        webhookConfigured({
          agent_id: AGENT,
          webhook_url: 'https://hooks.example.com/in',
          events: null,
          signature_scheme: 'timestamped',
          configured_at: NOW.toISOString(),
        }),
        monthlyCreditsGranted({ cycle_start: NOW.toISOString(), next_grant_at: '2026-04-10T09:30:00.000Z' }),
      ]);
  });

  it('refuses a registration whose agent was already written (a retry: its secrets were shown once) with 409 already_registered', () => {
    spec.given(funded()).when(register()).thenThrows('already_registered', 409);
  });
});

describe('commands: agents validateRegistration (before the e-mail is reserved)', () => {
  const input = (over: Partial<RegistrationInput> = {}): RegistrationInput => ({
    name: 'Agent',
    capabilities: ['lead-gen'],
    owner_name: 'Owner',
    owner_email: 'owner@example.com',
    ...over,
  });
  const problems = (over: Partial<RegistrationInput>, facts = NO_FACTS) => {
    try {
      validateRegistration(input(over), facts);
    } catch (err) {
      expect(err).to.be.instanceOf(ValidationFailed);
      return (err as ValidationFailed).errors.map((e) => [e.loc.join('.'), e.type]);
    }
    return expect.fail('expected 422');
  };

  it('normalises: names trimmed, a blank description dropped, capabilities to slugs without duplicates, the e-mail to its canonical form', () => {
    expect(
      validateRegistration(
        input({
          name: ' Agent ',
          owner_name: ' Owner ',
          description: '  ',
          capabilities: ['Lead Gen', 'lead_gen', 'B2B Sales'],
          owner_email: 'Jane.Doe+x@GMail.com',
        }),
        NO_FACTS,
      ),
    ).to.deep.equal({
      name: 'Agent',
      description: null,
      capabilities: ['lead-gen', 'b2b-sales'],
      owner_name: 'Owner',
      owner_email: 'janedoe@gmail.com',
      webhook_url: null,
    });
  });

  it('refuses a capability that does not normalise to a slug with 422, naming its index', () => {
    expect(problems({ capabilities: ['lead-gen', 'ai'] })).to.deep.equal([['body.capabilities.1', 'value_error.capability']]);
  });

  it('refuses an implausible owner e-mail, and a disposable domain, with 422', () => {
    expect(problems({ owner_email: 'not-an-address' })).to.deep.equal([['body.owner_email', 'value_error.email']]);
    expect(problems({ owner_email: 'a@mailinator.com' })).to.deep.equal([['body.owner_email', 'value_error.email.disposable']]);
  });

  it('refuses a webhook URL that is not public https with 422', () => {
    expect(problems({ webhook_url: 'http://hooks.example.com/in' })).to.deep.equal([['body.webhook_url', 'value_error.url']]);
    expect(problems({ webhook_url: 'https://10.0.0.1/in' })).to.deep.equal([['body.webhook_url', 'value_error.url']]);
  });

  it('refuses with 422 a webhook URL whose host resolved to a non-public address (the rule of PATCH .../webhook)', () => {
    const resolved = { allow_loopback: false, resolution_problem: 'vm.example.test resolves to a non-public address (127.0.0.1)' };
    expect(problems({ webhook_url: 'https://vm.example.test/in' }, resolved)).to.deep.equal([['body.webhook_url', 'value_error.url']]);
    expect(problems({ webhook_url: 'https://vm/in' })).to.deep.equal([['body.webhook_url', 'value_error.url']]);
  });

  it('refuses blank names with 422, every problem reported at once', () => {
    expect(problems({ name: ' ', owner_name: '', capabilities: ['%%%'] })).to.deep.equal([
      ['body.capabilities.0', 'value_error.capability'],
      ['body.name', 'value_error.blank'],
      ['body.owner_name', 'value_error.blank'],
    ]);
  });
});
