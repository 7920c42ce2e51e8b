import { agentStream } from '../../events/agents.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { A2AIntent, A2AMessageSent, A2ASignature } from '../../events/messaging.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { charge } from '../credits/spend.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import { notDelivered } from './dm.ts';
import { ensurePassport, signA2A } from './passport.ts';

export type SendA2AMessage = Command<
  'SendA2AMessage',
  {
    from_agent_id: string;
    to_agent_id: string;
    intent: A2AIntent;
    payload: Record<string, unknown>;
    /** The recipient exists, and blocks the sender (both from the recipient's stream). */
    recipient_exists: boolean;
    recipient_blocks_sender: boolean;
  },
  {
    now: Date;
    message_id: string;
    /** Made by the handler with the sender's current passport key (signing needs the secret box), or null when unsigned. */
    signature: A2ASignature | null;
  }
>;

/** Who may be messaged: never oneself, an agent that exists and does not block the sender. */
export function checkA2ARecipient(data: SendA2AMessage['data']): void {
  if (data.to_agent_id === data.from_agent_id) throw new DomainError(400, 'cannot_message_self', 'You cannot send an A2A message to yourself');
  if (!data.recipient_exists) throw notFound('Agent', 'agent_not_found');
  if (data.recipient_blocks_sender) throw notDelivered();
}

/** SendA2AMessage: 0.25 credits on the sender's stream. */
export function decideSendA2AMessage(command: SendA2AMessage, state: AgentState): A2AMessageSent[] {
  checkA2ARecipient(command.data);
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { from_agent_id, to_agent_id, intent, payload } = command.data;
  const { now, message_id, signature } = command.metadata;
  return [
    {
      type: 'A2AMessageSent',
      data: {
        message_id,
        from_agent_id,
        to_agent_id,
        intent,
        payload,
        agent_id: from_agent_id,
        from_agent_name: state.name,
        signature,
        sent_at: now.toISOString(),
        charge: charge(state, 'a2a_message'),
      },
    },
  ];
}

/** The signature of the message with the sender's current passport key, issued on first use. */
async function signWithPassport(bus: CommandBus, secrets: SecretBox, data: SendA2AMessage['data'], messageId: string, now: Date): Promise<A2ASignature | null> {
  const passport = await ensurePassport(bus, secrets, data.from_agent_id, now);
  if (!passport.current) return null;
  const fields = { message_id: messageId, from_agent_id: data.from_agent_id, to_agent_id: data.to_agent_id, intent: data.intent, payload: data.payload };
  return signA2A(passport.current, secrets, fields, now.toISOString());
}

export interface SendA2A {
  to_agent_id: string;
  intent: A2AIntent;
  payload: Record<string, unknown>;
  sign: boolean;
}

/**
 * Checks the recipient before anything is written, so a refused message issues no passport key;
 * a signed message is signed with the sender's current passport key (issued on first use).
 */
export async function sendA2A(bus: CommandBus, secrets: SecretBox, fromId: string, input: SendA2A, ctx: CommandContext) {
  const recipient = await bus.load(agentStream(input.to_agent_id), agentAggregate);
  const data: SendA2AMessage['data'] = {
    from_agent_id: fromId,
    to_agent_id: input.to_agent_id,
    intent: input.intent,
    payload: input.payload,
    recipient_exists: recipient.state.exists && recipient.state.deactivated_at === null,
    recipient_blocks_sender: recipient.state.blocked[fromId] === true,
  };
  checkA2ARecipient(data);
  const messageId = deriveId('msg', ctx.commandId);
  const signature = input.sign ? await signWithPassport(bus, secrets, data, messageId, ctx.now) : null;
  const command: SendA2AMessage = { type: 'SendA2AMessage', data, metadata: { now: ctx.now, message_id: messageId, signature } };
  const result = await bus.handle<AgentState, A2AMessageSent>(agentStream(fromId), agentAggregate, (state) => decideSendA2AMessage(command, state), ctx);
  const [sent] = result.events;
  return { message: sent.data, position: result.position };
}
