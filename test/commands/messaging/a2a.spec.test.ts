import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { SendA2AMessage } from '../../../commands/messaging/a2a.ts';
import { checkA2ARecipient, decideSendA2AMessage } from '../../../commands/messaging/a2a.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { MESSAGE, NOW, RECIPIENT, SENDER, a2aMessageSent, funded, signature } from './fixtures.ts';

const spec = DeciderSpecification.for<SendA2AMessage, AgentState, AgentStreamEvent>({ decide: decideSendA2AMessage, ...agentAggregate });

const sendA2A = (over: Partial<SendA2AMessage['data']> = {}, signed: SendA2AMessage['metadata']['signature'] = null): SendA2AMessage => ({
  type: 'SendA2AMessage',
  data: {
    from_agent_id: SENDER,
    to_agent_id: RECIPIENT,
    intent: 'deal_offer',
    payload: { offer: 'pilot' },
    recipient_exists: true,
    recipient_blocks_sender: false,
    ...over,
  },
  metadata: { now: NOW, message_id: MESSAGE, signature: signed },
});
const sent = (over: Parameters<typeof a2aMessageSent>[0] = {}) => a2aMessageSent({ sent_at: NOW.toISOString(), ...over });

describe('commands: SendA2AMessage (agent-<sender>)', () => {
  it('sends an unsigned message and charges the sender 0.25 credits', () => {
    spec.given(funded()).when(sendA2A()).then([sent()]);
  });

  it('carries the signature the handler made with the passport key', () => {
    spec
      .given(funded())
      .when(sendA2A({}, signature()))
      .then([sent({ signature: signature() })]);
  });

  it('refuses a message to oneself with 400', () => {
    spec
      .given(funded())
      .when(sendA2A({ to_agent_id: SENDER }))
      .thenThrows('cannot_message_self', 400);
  });

  it('refuses a recipient that does not exist with 404', () => {
    spec
      .given(funded())
      .when(sendA2A({ recipient_exists: false }))
      .thenThrows('agent_not_found', 404);
  });

  it('refuses a recipient that blocks the sender with 403', () => {
    spec
      .given(funded())
      .when(sendA2A({ recipient_blocks_sender: true }))
      .thenThrows('message_not_delivered', 403);
  });

  it('refuses a sender that is not registered with 404', () => {
    spec.given([]).when(sendA2A()).thenThrows('agent_not_found', 404);
  });

  it('refuses with 402 when the balance does not cover 0.25 credits', () => {
    spec.given(funded(SENDER, 100)).when(sendA2A()).thenThrows('insufficient_credits', 402);
  });

  it('checks the recipient on its own, so the handler can refuse before a passport key is issued', () => {
    expect(() => checkA2ARecipient(sendA2A({ recipient_blocks_sender: true }).data)).to.throw('Message not delivered');
    expect(() => checkA2ARecipient(sendA2A().data)).not.to.throw();
  });
});
