import { agentStream } from '../../events/agents.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { A2AIntent, A2AMessageSent } from '../../events/messaging.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { notDelivered } from './dm.ts';
import { ensurePassport, signA2A } from './passport.ts';

export interface SendA2A {
  to_agent_id: string;
  intent: A2AIntent;
  payload: Record<string, unknown>;
  sign: boolean;
}

/** SendA2AMessage: 0.25 credits on the sender's stream; optionally signed with the sender's current passport key. */
export async function sendA2A(bus: CommandBus, secrets: SecretBox, fromId: string, input: SendA2A, ctx: CommandContext) {
  if (input.to_agent_id === fromId) throw new DomainError(400, 'cannot_message_self', 'You cannot send an A2A message to yourself');
  const recipient = await bus.load(agentStream(input.to_agent_id), agentAggregate);
  if (!recipient.state.exists) throw notFound('Agent', 'agent_not_found');
  if (recipient.state.blocked[fromId]) throw notDelivered();
  const passport = input.sign ? await ensurePassport(bus, secrets, fromId, ctx.now) : null;
  const messageId = deriveId('msg', ctx.commandId);
  let sent: A2AMessageSent | undefined;
  const result = await bus.handle(
    agentStream(fromId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      const now = ctx.now.toISOString();
      const c = charge(state, 'a2a_message');
      const fields = { message_id: messageId, from_agent_id: fromId, to_agent_id: input.to_agent_id, intent: input.intent, payload: input.payload };
      sent = {
        type: 'A2AMessageSent',
        data: {
          ...fields,
          agent_id: fromId,
          from_agent_name: state.name,
          signature: passport?.current ? signA2A(passport.current, secrets, fields, now) : null,
          sent_at: now,
          charge: c,
        },
      };
      return [sent];
    },
    ctx,
  );
  return { message: (result.events[0]?.data ?? sent?.data) as A2AMessageSent['data'], position: result.position };
}
