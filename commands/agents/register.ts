import type { AgentRegistered, OwnerEmailReserved } from '../../events/agents.ts';
import { agentStream, ownerEmailStream } from '../../events/agents.ts';
import { DomainError, ValidationFailed } from '../../events/kernel/errors.ts';
import type { FieldError } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import { decideMonthlyGrants } from '../credits/grant.ts';
import { TIERS } from '../credits/tiers.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { agentAggregate } from './agent.ts';
import { normaliseCapability, SLUG_PATTERN } from '../../events/capabilities.ts';
import { isDisposableDomain, looksLikeEmail, normaliseEmail } from './email.ts';
import type { SecretBox } from './secrets.ts';
import { newApiKey, newClaimToken, newWebhookSecret } from './secrets.ts';
import { checkWebhookUrl } from './webhook-url.ts';

export interface RegisterAgent {
  name: string;
  capabilities: string[];
  owner_name: string;
  owner_email: string;
  description?: string | null;
  webhook_url?: string | null;
}

export interface Registration {
  agent_id: string;
  name: string;
  api_key: string;
  webhook_secret: string;
  claim_token: string;
  tier: 'free';
  monthly_credits_mc: number;
  position: number;
}

/** A reservation whose agent never got written (the process died in between) is taken over after this. */
const ORPHAN_RESERVATION_MS = 60_000;

function validate(input: RegisterAgent): { email: string; capabilities: string[] } {
  const errors: FieldError[] = [];
  const capabilities: string[] = [];
  input.capabilities.forEach((raw, i) => {
    const slug = normaliseCapability(raw);
    if (!SLUG_PATTERN.test(slug)) {
      errors.push({ loc: ['body', 'capabilities', i], msg: 'capability must normalise to 3-40 characters of [a-z0-9-]', type: 'value_error.capability' });
    } else if (!capabilities.includes(slug)) capabilities.push(slug);
  });
  if (!looksLikeEmail(input.owner_email)) {
    errors.push({ loc: ['body', 'owner_email'], msg: 'value is not a valid email address', type: 'value_error.email' });
  } else if (isDisposableDomain(input.owner_email)) {
    errors.push({ loc: ['body', 'owner_email'], msg: 'disposable e-mail domains are not accepted', type: 'value_error.email.disposable' });
  }
  if (input.webhook_url) {
    const problem = checkWebhookUrl(input.webhook_url);
    if (problem) errors.push({ loc: ['body', 'webhook_url'], msg: problem, type: 'value_error.url' });
  }
  if (!input.name.trim()) errors.push({ loc: ['body', 'name'], msg: 'name must not be blank', type: 'value_error.blank' });
  if (!input.owner_name.trim()) errors.push({ loc: ['body', 'owner_name'], msg: 'owner_name must not be blank', type: 'value_error.blank' });
  if (errors.length) throw new ValidationFailed(errors);
  return { email: normaliseEmail(input.owner_email), capabilities };
}

/**
 * Registration: reserve the normalised owner e-mail (stream appended with "no stream", so only
 * one registration can win), then create the agent's stream with its first monthly grant.
 */
export async function registerAgent(bus: CommandBus, secrets: SecretBox, input: RegisterAgent, ctx: CommandContext): Promise<Registration> {
  const { email, capabilities } = validate(input);
  const agentId = deriveId('agt', ctx.commandId);
  const emailHash = secrets.hash(`owner-email:${email}`);
  await reserveEmail(bus, emailHash, agentId, ctx);

  const apiKey = newApiKey();
  const webhookSecret = newWebhookSecret();
  const claimToken = newClaimToken();
  const registered: AgentRegistered = {
    type: 'AgentRegistered',
    data: {
      agent_id: agentId,
      name: input.name.trim(),
      description: input.description?.trim() || null,
      capabilities,
      owner_name: input.owner_name.trim(),
      owner_email: email,
      webhook_url: input.webhook_url ?? null,
      webhook_secret_enc: secrets.encrypt(webhookSecret),
      api_key_hash: secrets.hash(apiKey),
      claim_token_hash: secrets.hash(claimToken),
      tier: 'free',
      registration_source: 'api',
      intent_type: 'seeker',
      registered_at: ctx.now.toISOString(),
    },
  };
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (state.exists) return [];
      const next = agentAggregate.evolve(state, registered);
      return [registered, ...decideMonthlyGrants(next, ctx.now)];
    },
    ctx,
  );
  if (result.duplicate) {
    // A retry of a registration that already happened: the secrets were shown once and are gone.
    throw new DomainError(409, 'already_registered', 'This registration was already processed; its secrets were shown once');
  }
  return {
    agent_id: agentId,
    name: registered.data.name,
    api_key: apiKey,
    webhook_secret: webhookSecret,
    claim_token: claimToken,
    tier: 'free',
    monthly_credits_mc: TIERS.free.monthly_mc ?? 0,
    position: result.position,
  };
}

async function reserveEmail(bus: CommandBus, emailHash: string, agentId: string, ctx: CommandContext): Promise<void> {
  const stream = ownerEmailStream(emailHash);
  const reservation: OwnerEmailReserved = {
    type: 'OwnerEmailReserved',
    data: { email_hash: emailHash, agent_id: agentId, reserved_at: ctx.now.toISOString() },
  };
  try {
    await bus.appendRaw(stream, [reservation], 'no_stream', ctx);
    return;
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
  }
  const existing = await bus.log.readStream(stream, { direction: 'backwards', maxCount: 1 });
  const last = existing[0];
  const lastData = last?.data as OwnerEmailReserved['data'] | undefined;
  if (last && lastData) {
    if (lastData.agent_id === agentId) return;
    const agentExists = (await bus.log.readStream(agentStream(lastData.agent_id), { maxCount: 1 })).length > 0;
    const age = ctx.now.getTime() - new Date(lastData.reserved_at).getTime();
    if (!agentExists && age > ORPHAN_RESERVATION_MS) {
      try {
        await bus.appendRaw(stream, [reservation], last.revision, { ...ctx, commandId: `${ctx.commandId}:takeover` });
        return;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
      }
    }
  }
  throw new DomainError(409, 'owner_email_taken', 'An agent is already registered for this owner e-mail');
}
