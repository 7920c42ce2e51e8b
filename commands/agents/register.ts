import type { AgentRegistered, Tier } from '../../events/agents.ts';
import { agentStream } from '../../events/agents.ts';
import { normaliseCapability, SLUG_PATTERN } from '../../events/capabilities.ts';
import type { MonthlyCreditsGranted } from '../../events/credits.ts';
import { DomainError, ValidationFailed } from '../../events/kernel/errors.ts';
import type { FieldError } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { decideRegistrationGrant } from '../credits/grant.ts';
import { TIERS } from '../credits/tiers.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { AgentState } from './agent.ts';
import { agentAggregate } from './agent.ts';
import { isDisposableDomain, looksLikeEmail, normaliseEmail } from './email.ts';
import { ownerEmailTakenAs, reserveOwnerEmail } from './owner-email.ts';
import type { SecretBox } from './secrets.ts';
import { newApiKey, newClaimToken, newWebhookSecret } from './secrets.ts';
import type { WebhookConfigured } from '../../events/webhooks.ts';
import { DEFAULT_SIGNATURE_SCHEME } from '../../events/webhooks.ts';
import type { TargetCheckOptions, WebhookUrlFacts } from '../webhooks/target.ts';
import { webhookUrlFacts, webhookUrlProblem } from '../webhooks/target.ts';

/** The registration request as the route validated its shape. */
export interface RegistrationInput {
  name: string;
  capabilities: string[];
  owner_name: string;
  owner_email: string;
  description?: string | null;
  webhook_url?: string | null;
}

/**
 * RegisterAgent: the registration with its e-mail and capabilities normalised; the agent id (from
 * the command id) and what the secrets shown once are stored as (keyed hashes, and the webhook
 * secret's ciphertext, whose IV is random) arrive in the metadata.
 */
export type RegisterAgent = Command<
  'RegisterAgent',
  { name: string; description: string | null; capabilities: string[]; owner_name: string; owner_email: string; webhook_url: string | null },
  { now: Date; agent_id: string; api_key_hash: string; claim_token_hash: string; webhook_secret_enc: string }
>;

export interface Registration {
  agent_id: string;
  name: string;
  api_key: string;
  webhook_secret: string;
  claim_token: string;
  tier: Tier;
  monthly_credits_mc: number;
  position: number;
}

/**
 * The registration's field rules (422, every problem at once), checked before anything is
 * appended, so a refused registration never reserves its e-mail: capabilities normalise to slugs
 * (duplicates merged), the owner e-mail is a plausible, non-disposable address (normalised, so
 * one person cannot register twice with aliases), a webhook URL passes the same configuration-time
 * rule as `PATCH .../webhook` (public https, and its host does not resolve to a non-public
 * address: `facts`), names are not blank.
 */
export function validateRegistration(input: RegistrationInput, facts: WebhookUrlFacts): RegisterAgent['data'] {
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
    const problem = webhookUrlProblem(input.webhook_url, facts);
    if (problem) errors.push({ loc: ['body', 'webhook_url'], msg: problem, type: 'value_error.url' });
  }
  if (!input.name.trim()) errors.push({ loc: ['body', 'name'], msg: 'name must not be blank', type: 'value_error.blank' });
  if (!input.owner_name.trim()) errors.push({ loc: ['body', 'owner_name'], msg: 'owner_name must not be blank', type: 'value_error.blank' });
  if (errors.length) throw new ValidationFailed(errors);
  return {
    name: input.name.trim(),
    description: input.description?.trim() || null,
    capabilities,
    owner_name: input.owner_name.trim(),
    owner_email: normaliseEmail(input.owner_email),
    webhook_url: input.webhook_url ?? null,
  };
}

/**
 * A registration is written once (its secrets were shown once); the free tier's cycle 0 is granted
 * in the same append. A webhook URL given at registration is also configured (every event, the
 * default signing scheme), as `PATCH .../webhook` would.
 */
export function decideRegisterAgent(command: RegisterAgent, state: AgentState): Array<AgentRegistered | WebhookConfigured | MonthlyCreditsGranted> {
  if (state.exists) throw alreadyRegistered();
  const { metadata: m, data: d } = command;
  const registered: AgentRegistered = {
    type: 'AgentRegistered',
    data: {
      agent_id: m.agent_id,
      name: d.name,
      description: d.description,
      capabilities: d.capabilities,
      owner_name: d.owner_name,
      owner_email: d.owner_email,
      webhook_url: d.webhook_url,
      webhook_secret_enc: m.webhook_secret_enc,
      api_key_hash: m.api_key_hash,
      claim_token_hash: m.claim_token_hash,
      tier: 'free',
      registration_source: 'api',
      intent_type: 'seeker',
      registered_at: m.now.toISOString(),
    },
  };
  const webhook: WebhookConfigured[] = d.webhook_url
    ? [
        {
          type: 'WebhookConfigured',
          data: {
            agent_id: m.agent_id,
            webhook_url: d.webhook_url,
            events: null,
            signature_scheme: DEFAULT_SIGNATURE_SCHEME,
            configured_at: m.now.toISOString(),
          },
        },
      ]
    : [];
  return [registered, ...webhook, ...decideRegistrationGrant(agentAggregate.evolve(state, registered), m.now)];
}

// A retry of a registration that already happened: the secrets were shown once and are gone.
const alreadyRegistered = () => new DomainError(409, 'already_registered', 'This registration was already processed; its secrets were shown once');

/**
 * Registration: reserve the normalised owner e-mail (stream appended with "no stream", so only
 * one registration can win), then create the agent's stream with its first monthly grant.
 */
export async function registerAgent(
  bus: CommandBus,
  secrets: SecretBox,
  input: RegistrationInput,
  target: TargetCheckOptions,
  ctx: CommandContext,
): Promise<Registration> {
  const data = validateRegistration(input, await webhookUrlFacts(input.webhook_url, target));
  const agentId = deriveId('agt', ctx.commandId);
  try {
    await reserveOwnerEmail(bus, secrets.hash(`owner-email:${data.owner_email}`), agentId, ctx);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'owner_email_taken') throw ownerEmailTakenAs(input.owner_email, data.owner_email);
    throw err;
  }

  const apiKey = newApiKey();
  const webhookSecret = newWebhookSecret();
  const claimToken = newClaimToken();
  const command: RegisterAgent = {
    type: 'RegisterAgent',
    data,
    metadata: {
      now: ctx.now,
      agent_id: agentId,
      api_key_hash: secrets.hash(apiKey),
      claim_token_hash: secrets.hash(claimToken),
      webhook_secret_enc: secrets.encrypt(webhookSecret),
    },
  };
  const result = await bus.handle(agentStream(agentId), agentAggregate, (state) => decideRegisterAgent(command, state), ctx);
  // The same events were already stored (the log recognised their ids): this is a retry too.
  if (result.duplicate) throw alreadyRegistered();
  const { state } = result;
  return {
    agent_id: state.agent_id,
    name: state.name,
    api_key: apiKey,
    webhook_secret: webhookSecret,
    claim_token: claimToken,
    tier: state.tier,
    monthly_credits_mc: TIERS[state.tier].monthly_mc ?? 0,
    position: result.position,
  };
}
