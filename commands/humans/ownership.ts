import type { AgentRegistered } from '../../events/agents.ts';
import { agentStream } from '../../events/agents.ts';
import type { AgentClaimed, AgentOwnerLinked, ApiKeyReplaced, EliteAgentReserved } from '../../events/humans.ts';
import { eliteStream, userStream } from '../../events/humans.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { newApiKey, newClaimToken, newWebhookSecret } from '../agents/secrets.ts';
import { decideMonthlyGrants } from '../credits/grant.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { mailEvent } from './mail.ts';
import { consumeOtp, issueOtp, OTP_MINUTES } from './otp.ts';
import { userAggregate } from './user.ts';

export interface OwnershipDeps {
  bus: CommandBus;
  secrets: SecretBox;
}

const alreadyClaimed = () => new DomainError(409, 'already_claimed', 'This agent is already claimed');
const notOwner = () => new DomainError(403, 'not_owner', 'Only the owner of this agent may do this');

async function loadAgent(bus: CommandBus, agentId: string): Promise<AgentState> {
  const { state } = await bus.load(agentStream(agentId), agentAggregate);
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  return state;
}

// ---- lite claim: an OTP to the owner e-mail; no account needed -------------------------------

export async function requestLiteClaimOtp(d: OwnershipDeps, agentId: string, ctx: CommandContext) {
  const agent = await loadAgent(d.bus, agentId);
  if (agent.claimed) throw alreadyClaimed();
  return issueOtp(d.bus, d.secrets, 'claim_lite', agentId, ctx, (code) =>
    mailEvent(d.secrets, ctx, 'mail', 'claim_otp', agent.owner_email, { code, minutes: OTP_MINUTES, agent_name: agent.name, agent_id: agentId }),
  );
}

export async function verifyLiteClaim(d: OwnershipDeps, agentId: string, otp: string, ctx: CommandContext) {
  if ((await loadAgent(d.bus, agentId)).claimed) throw alreadyClaimed();
  await consumeOtp(d.bus, d.secrets, 'claim_lite', agentId, otp, ctx);
  return d.bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (state.claimed) return [];
      const claimed: AgentClaimed = {
        type: 'AgentClaimed',
        data: { agent_id: agentId, claimed_via: 'email_otp', user_id: null, claimed_at: ctx.now.toISOString() },
      };
      return [claimed, mailEvent(d.secrets, ctx, 'mail', 'agent_claimed', state.owner_email, { agent_name: state.name, agent_id: agentId })];
    },
    ctx,
  );
}

// ---- full claim: claim token + OTP while signed in links the agent to the user ----------------

/** The claim token must be the agent's (its keyed hash is in AgentRegistered). */
async function checkClaimToken(d: OwnershipDeps, agentId: string, claimToken: string): Promise<void> {
  const first = (await d.bus.log.readStream(agentStream(agentId), { maxCount: 1 }))[0];
  const hash = first?.type === 'AgentRegistered' ? (first.data as AgentRegistered['data']).claim_token_hash : null;
  if (!hash || !d.secrets.verify(claimToken, hash)) throw invalidClaimToken();
}

export const invalidClaimToken = () => new DomainError(404, 'invalid_claim_token', 'No agent has this claim token');

export async function requestFullClaimOtp(d: OwnershipDeps, agentId: string, claimToken: string, ctx: CommandContext) {
  await checkClaimToken(d, agentId, claimToken);
  const agent = await loadAgent(d.bus, agentId);
  if (agent.owner_user_id) throw new DomainError(409, 'already_linked', 'This agent is already linked to an account');
  return issueOtp(d.bus, d.secrets, 'claim_full', agentId, ctx, (code) =>
    mailEvent(d.secrets, ctx, 'mail', 'claim_otp', agent.owner_email, { code, minutes: OTP_MINUTES, agent_name: agent.name, agent_id: agentId }),
  );
}

export async function fullClaim(d: OwnershipDeps, userId: string, agentId: string, claimToken: string, otp: string, ctx: CommandContext) {
  await checkClaimToken(d, agentId, claimToken);
  const before = await loadAgent(d.bus, agentId);
  if (before.owner_user_id && before.owner_user_id !== userId) throw new DomainError(409, 'already_linked', 'This agent is already linked to an account');
  await consumeOtp(d.bus, d.secrets, 'claim_full', agentId, otp, ctx);
  return d.bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (state.owner_user_id === userId) return [];
      if (state.owner_user_id) throw new DomainError(409, 'already_linked', 'This agent is already linked to an account');
      const at = ctx.now.toISOString();
      const link: AgentClaimed | AgentOwnerLinked = state.claimed
        ? { type: 'AgentOwnerLinked', data: { agent_id: agentId, user_id: userId, linked_at: at } }
        : { type: 'AgentClaimed', data: { agent_id: agentId, claimed_via: 'email_otp', user_id: userId, claimed_at: at } };
      return [link, mailEvent(d.secrets, ctx, 'mail', 'agent_claimed', state.owner_email, { agent_name: state.name, agent_id: agentId })];
    },
    ctx,
  );
}

// ---- keys ---------------------------------------------------------------------------------

/** Replaces the agent's key: one event with actor and request id (metadata), and a mail to the owner. */
function replaceKey(d: OwnershipDeps, agentId: string, reason: ApiKeyReplaced['data']['reason'], ctx: CommandContext, check: (s: AgentState) => void) {
  const apiKey = newApiKey();
  return d.bus
    .handle(
      agentStream(agentId),
      agentAggregate,
      (state) => {
        if (!state.exists) throw notFound('Agent', 'agent_not_found');
        check(state);
        const at = ctx.now.toISOString();
        const replaced: ApiKeyReplaced = {
          type: 'ApiKeyReplaced',
          data: { agent_id: agentId, old_key_hash: state.api_key_hash, new_key_hash: d.secrets.hash(apiKey), reason, replaced_at: at },
        };
        return [
          replaced,
          mailEvent(d.secrets, ctx, 'mail', 'api_key_changed', state.owner_email, {
            agent_name: state.name,
            agent_id: agentId,
            reason,
            actor: ctx.actor ?? 'unknown',
            request_id: ctx.requestId ?? '-',
            at,
          }),
        ];
      },
      ctx,
    )
    .then((result) => {
      if (result.duplicate) throw new DomainError(409, 'already_processed', 'This request was already processed; the new key was shown once');
      return { api_key: apiKey, position: result.position };
    });
}

/** Owner only (the user the agent is linked to); the old key is invalid once the read model applies the event. */
export function rotateKey(d: OwnershipDeps, userId: string, agentId: string, ctx: CommandContext) {
  return replaceKey(d, agentId, 'rotation', ctx, (s) => {
    if (!s.claimed) throw new DomainError(403, 'claim_required', 'Claim the agent before rotating its key');
    if (s.owner_user_id !== userId) throw notOwner();
  });
}

/** Lost-key recovery: the code goes to the owner e-mail, so only the owner's mailbox can complete it. */
export async function requestKeyRecoveryOtp(d: OwnershipDeps, agentId: string, ctx: CommandContext) {
  const agent = await loadAgent(d.bus, agentId);
  return issueOtp(d.bus, d.secrets, 'key_recovery', agentId, ctx, (code) =>
    mailEvent(d.secrets, ctx, 'mail', 'key_recovery_otp', agent.owner_email, { code, minutes: OTP_MINUTES, agent_name: agent.name, agent_id: agentId }),
  );
}

export async function recoverKey(d: OwnershipDeps, agentId: string, otp: string, ctx: CommandContext) {
  await loadAgent(d.bus, agentId);
  await consumeOtp(d.bus, d.secrets, 'key_recovery', agentId, otp, ctx);
  return replaceKey(d, agentId, 'recovery', ctx, () => undefined);
}

// ---- the auto-provisioned Elite agent of a user -----------------------------------------------

/** The user's auto-provisioned agent id, from its reservation stream (null when none yet). */
export async function eliteAgentOf(bus: CommandBus, userId: string): Promise<string | null> {
  const first = (await bus.log.readStream(eliteStream(userId), { maxCount: 1 }))[0];
  return first ? (first.data as EliteAgentReserved['data']).agent_id : null;
}

/**
 * Provisions the user's in-app agent once (reservation stream `user-elite-<user>` with "no
 * stream"): tier Elite, registration_source `elite_auto`, claimed and linked to the user. Its key
 * is returned only by this call; afterwards only regeneration shows a new one.
 */
export async function provisionEliteAgent(
  d: OwnershipDeps,
  userId: string,
  ctx: CommandContext,
): Promise<{ agent_id: string; api_key: string | null; created: boolean; position: number }> {
  const existing = await eliteAgentOf(d.bus, userId);
  if (existing) return { agent_id: existing, api_key: null, created: false, position: 0 };
  const { state: user } = await d.bus.load(userStream(userId), userAggregate);
  if (!user.exists) throw new DomainError(401, 'unauthorized', 'Invalid or expired token');
  const agentId = deriveId('agt', ctx.commandId, 'elite');
  try {
    const reserved: EliteAgentReserved = { type: 'EliteAgentReserved', data: { user_id: userId, agent_id: agentId, reserved_at: ctx.now.toISOString() } };
    await d.bus.appendRaw(eliteStream(userId), [reserved], 'no_stream', ctx);
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
    const winner = await eliteAgentOf(d.bus, userId);
    return { agent_id: winner ?? agentId, api_key: null, created: false, position: 0 };
  }
  const apiKey = newApiKey();
  const at = ctx.now.toISOString();
  const registered: AgentRegistered = {
    type: 'AgentRegistered',
    data: {
      agent_id: agentId,
      name: `${user.full_name}'s agent`.slice(0, 100),
      description: null,
      capabilities: ['startup-networking'],
      owner_name: user.full_name,
      owner_email: user.email,
      webhook_url: null,
      webhook_secret_enc: d.secrets.encrypt(newWebhookSecret()),
      api_key_hash: d.secrets.hash(apiKey),
      claim_token_hash: d.secrets.hash(newClaimToken()),
      tier: 'elite',
      registration_source: 'elite_auto',
      intent_type: 'seeker',
      registered_at: at,
    },
  };
  const claimed: AgentClaimed = { type: 'AgentClaimed', data: { agent_id: agentId, claimed_via: 'email_otp', user_id: userId, claimed_at: at } };
  const result = await d.bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (state.exists) return [];
      return [registered, claimed, ...decideMonthlyGrants(agentAggregate.evolve(state, registered), ctx.now)];
    },
    ctx,
  );
  return { agent_id: agentId, api_key: apiKey, created: true, position: result.position };
}

export async function regenerateEliteKey(d: OwnershipDeps, userId: string, ctx: CommandContext) {
  const agentId = await eliteAgentOf(d.bus, userId);
  if (!agentId) throw notFound('Elite key', 'elite_key_not_found');
  const r = await replaceKey(d, agentId, 'elite_regenerate', ctx, (s) => {
    if (s.owner_user_id !== userId) throw notOwner();
  });
  return { agent_id: agentId, ...r };
}
