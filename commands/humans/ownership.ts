import type { AgentRegistered } from '../../events/agents.ts';
import { agentStream } from '../../events/agents.ts';
import type { MonthlyCreditsGranted, Plan } from '../../events/credits.ts';
import type {
  AgentClaimed,
  AgentOwnerLinked,
  ApiKeyReplaced,
  EliteAgentReserved,
  MailQueued,
  OtpAttemptFailed,
  OtpConsumed,
  OtpIssued,
} from '../../events/humans.ts';
import { eliteStream, otpStream, userStream } from '../../events/humans.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import type { Recorded } from '../../events/types.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { newApiKey, newClaimToken, newWebhookSecret } from '../agents/secrets.ts';
import { decideRegistrationGrant } from '../credits/grant.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import { sealMail } from './mail.ts';
import type { ConsumeOtp, IssueOtpMetadata, OtpDraw, OtpState } from './otp.ts';
import {
  assertConsumed,
  consumeOtpCommand,
  decideConsumeOtp,
  decideIssueOtp,
  drawOtp,
  OTP_MAX_TRIES,
  OTP_MINUTES,
  OTP_TTL_MS,
  otpAggregate,
  otpContext,
} from './otp.ts';
import { userAggregate } from './user.ts';

export interface OwnershipDeps {
  bus: CommandBus;
  secrets: SecretBox;
}

const alreadyClaimed = () => new DomainError(409, 'already_claimed', 'This agent is already claimed');
const alreadyLinked = () => new DomainError(409, 'already_linked', 'This agent is already linked to an account');
const notOwner = () => new DomainError(403, 'not_owner', 'Only the owner of this agent may do this');
const agentNotFound = () => notFound('Agent', 'agent_not_found');
export const invalidClaimToken = () => new DomainError(404, 'invalid_claim_token', 'No agent has this claim token');

/** The agent's state from its stream; 404 when it does not exist. */
async function loadAgent(bus: CommandBus, agentId: string): Promise<AgentState> {
  const { state } = await bus.load(agentStream(agentId), agentAggregate);
  if (!state.exists) throw agentNotFound();
  return state;
}

/** What the OTP-stream steps of a claim check of the agent (read from `agent-<id>` before deciding). */
export interface ClaimFacts {
  claimed: boolean;
  owner_user_id: string | null;
}

const claimFacts = (agent: AgentState): ClaimFacts => ({ claimed: agent.claimed, owner_user_id: agent.owner_user_id });
const issueMetadata = (draw: OtpDraw, now: Date): IssueOtpMetadata => ({ now, otp_id: draw.otp_id, code_hash: draw.code_hash });
const claimOtpMail = (d: OwnershipDeps, ctx: CommandContext, agent: AgentState, code: string) =>
  sealMail(d.secrets, ctx, 'mail', 'claim_otp', agent.owner_email, { code, minutes: OTP_MINUTES, agent_name: agent.name, agent_id: agent.agent_id });
const claimedMail = (d: OwnershipDeps, ctx: CommandContext, agent: AgentState) =>
  sealMail(d.secrets, ctx, 'mail', 'agent_claimed', agent.owner_email, { agent_name: agent.name, agent_id: agent.agent_id });

// ---- lite claim: an OTP to the owner e-mail; no account needed -------------------------------

/** RequestLiteClaimOtp: a claim code for the owner e-mail (sealed mail in the data). */
export type RequestLiteClaimOtp = Command<'RequestLiteClaimOtp', { agent: ClaimFacts; mail: MailQueued }, IssueOtpMetadata>;

/**
 * Mails per hour that lite-claim requests may send to an agent's owner, whoever asks (the route
 * also limits each client address: LITE_CLAIM_LIMITS in api/routes/humans/ownership.ts).
 */
export const LITE_CLAIM_MAILS_PER_HOUR = 10;
const HOUR = 3600_000;

/**
 * A claimed agent cannot be claimed again (409). At most LITE_CLAIM_MAILS_PER_HOUR mails an hour
 * reach the owner (429 `otp_rate_limited`). While the current code is live (not used, not dead,
 * not expired), the request resends it: the mail that carried it is queued again (its parameters
 * stay encrypted; the code itself is stored only as a keyed hash), so no stranger can invalidate
 * the owner's code or use up codes. Otherwise a new code is issued with its mail. A retried
 * command appends nothing.
 */
export function decideRequestLiteClaimOtp(command: RequestLiteClaimOtp, state: OtpState): Array<OtpIssued | MailQueued> {
  if (command.data.agent.claimed) throw alreadyClaimed();
  const { now, otp_id, code_hash } = command.metadata;
  const mail = command.data.mail;
  if (state.current?.otp_id === otp_id || state.last_mail_id === mail.data.mail_id) return [];
  const from = new Date(now.getTime() - HOUR).toISOString();
  const recent = state.mailed.filter((t) => t > from);
  if (recent.length >= LITE_CLAIM_MAILS_PER_HOUR) {
    const retryAfter = Math.max(1, Math.ceil((Date.parse(recent[0]) + HOUR - now.getTime()) / 1000));
    throw new DomainError(429, 'otp_rate_limited', `At most ${LITE_CLAIM_MAILS_PER_HOUR} claim codes per hour are sent to an agent's owner; try again later`, {
      retry_after: retryAfter,
      limit: LITE_CLAIM_MAILS_PER_HOUR,
    });
  }
  const c = state.current;
  const at = now.toISOString();
  if (c && c.mail && !c.consumed && c.attempts < OTP_MAX_TRIES && c.expires_at > at) {
    return [{ type: 'MailQueued', data: { ...mail.data, template: c.mail.template, params_enc: c.mail.params_enc } }];
  }
  const issued: OtpIssued = {
    type: 'OtpIssued',
    data: { otp_id, purpose: 'claim_lite', code_hash, issued_at: at, expires_at: new Date(now.getTime() + OTP_TTL_MS).toISOString() },
  };
  return [issued, mail];
}

export async function requestLiteClaimOtp(d: OwnershipDeps, agentId: string, ctx: CommandContext): Promise<{ position: number }> {
  const agent = await loadAgent(d.bus, agentId);
  const draw = drawOtp(d.secrets, 'claim_lite', agentId, ctx);
  const command: RequestLiteClaimOtp = {
    type: 'RequestLiteClaimOtp',
    data: { agent: claimFacts(agent), mail: claimOtpMail(d, ctx, agent, draw.code) },
    metadata: issueMetadata(draw, ctx.now),
  };
  const result = await d.bus.handle(otpStream('claim_lite', agentId), otpAggregate, (state) => decideRequestLiteClaimOtp(command, state), ctx);
  return { position: result.position };
}

/** VerifyLiteClaimOtp: the code check of a lite claim. */
export type VerifyLiteClaimOtp = Command<'VerifyLiteClaimOtp', ConsumeOtp['data'] & { agent: ClaimFacts }, ConsumeOtp['metadata']>;

/** A claimed agent is refused (409) before the code is checked (see decideConsumeOtp). */
export function decideVerifyLiteClaimOtp(command: VerifyLiteClaimOtp, state: OtpState): Array<OtpConsumed | OtpAttemptFailed> {
  if (command.data.agent.claimed) throw alreadyClaimed();
  return decideConsumeOtp({ type: 'ConsumeOtp', data: { presented: command.data.presented }, metadata: command.metadata }, state);
}

/** ClaimAgent: the lite claim on `agent-<id>`, once the code was consumed. */
export type ClaimAgent = Command<'ClaimAgent', { agent_id: string; mail: MailQueued }, { now: Date }>;

/** The agent becomes claimed (no user linked) and the owner is told; an already claimed agent appends nothing. */
export function decideClaimAgent(command: ClaimAgent, state: AgentState): Array<AgentClaimed | MailQueued> {
  if (state.claimed) return [];
  const claimed: AgentClaimed = {
    type: 'AgentClaimed',
    data: { agent_id: command.data.agent_id, claimed_via: 'email_otp', user_id: null, claimed_at: command.metadata.now.toISOString() },
  };
  return [claimed, command.data.mail];
}

export async function verifyLiteClaim(d: OwnershipDeps, agentId: string, otp: string, ctx: CommandContext) {
  const agent = await loadAgent(d.bus, agentId);
  const stream = otpStream('claim_lite', agentId);
  const check = await consumeOtpCommand(d.bus, d.secrets, stream, otp, ctx.now);
  const verify: VerifyLiteClaimOtp = { type: 'VerifyLiteClaimOtp', data: { ...check.data, agent: claimFacts(agent) }, metadata: check.metadata };
  assertConsumed(
    await d.bus.handle<OtpState, OtpConsumed | OtpAttemptFailed>(stream, otpAggregate, (state) => decideVerifyLiteClaimOtp(verify, state), otpContext(ctx)),
  );
  const command: ClaimAgent = {
    type: 'ClaimAgent',
    data: { agent_id: agentId, mail: claimedMail(d, ctx, await loadAgent(d.bus, agentId)) },
    metadata: { now: ctx.now },
  };
  return d.bus.handle<AgentState, AgentClaimed | MailQueued>(agentStream(agentId), agentAggregate, (state) => decideClaimAgent(command, state), ctx);
}

// ---- full claim: claim token + OTP while signed in links the agent to the user ----------------

/** The claim token must be the agent's (its keyed hash is in AgentRegistered): the caller's credential, checked before anything else. */
async function checkClaimToken(d: OwnershipDeps, agentId: string, claimToken: string): Promise<void> {
  const first = (await d.bus.log.readStream(agentStream(agentId), { maxCount: 1 }))[0];
  // Narrowed by its type: the first event of `agent-<id>` is its AgentRegistered.
  const hash = first?.type === 'AgentRegistered' ? (first as Recorded<AgentRegistered>).data.claim_token_hash : null;
  if (!hash || !d.secrets.verify(claimToken, hash)) throw invalidClaimToken();
}

/** RequestFullClaimOtp: a claim code for the owner e-mail, to link the agent to an account. */
export type RequestFullClaimOtp = Command<'RequestFullClaimOtp', { agent: ClaimFacts; mail: MailQueued }, IssueOtpMetadata>;

/** An agent already linked to an account is refused (409); otherwise a code is issued. */
export function decideRequestFullClaimOtp(command: RequestFullClaimOtp, state: OtpState): Array<OtpIssued | MailQueued> {
  if (command.data.agent.owner_user_id) throw alreadyLinked();
  return decideIssueOtp({ type: 'IssueOtp', data: { purpose: 'claim_full', mail: command.data.mail }, metadata: command.metadata }, state);
}

export async function requestFullClaimOtp(d: OwnershipDeps, agentId: string, claimToken: string, ctx: CommandContext): Promise<{ position: number }> {
  await checkClaimToken(d, agentId, claimToken);
  const agent = await loadAgent(d.bus, agentId);
  const draw = drawOtp(d.secrets, 'claim_full', agentId, ctx);
  const command: RequestFullClaimOtp = {
    type: 'RequestFullClaimOtp',
    data: { agent: claimFacts(agent), mail: claimOtpMail(d, ctx, agent, draw.code) },
    metadata: issueMetadata(draw, ctx.now),
  };
  const result = await d.bus.handle(otpStream('claim_full', agentId), otpAggregate, (state) => decideRequestFullClaimOtp(command, state), ctx);
  return { position: result.position };
}

/** VerifyFullClaimOtp: the code check of a full claim by a signed-in user. */
export type VerifyFullClaimOtp = Command<'VerifyFullClaimOtp', ConsumeOtp['data'] & { user_id: string; agent: ClaimFacts }, ConsumeOtp['metadata']>;

/** An agent linked to another account is refused (409) before the code is checked. */
export function decideVerifyFullClaimOtp(command: VerifyFullClaimOtp, state: OtpState): Array<OtpConsumed | OtpAttemptFailed> {
  const owner = command.data.agent.owner_user_id;
  if (owner && owner !== command.data.user_id) throw alreadyLinked();
  return decideConsumeOtp({ type: 'ConsumeOtp', data: { presented: command.data.presented }, metadata: command.metadata }, state);
}

/** LinkAgentOwner: the full claim on `agent-<id>`, once the code was consumed. */
export type LinkAgentOwner = Command<'LinkAgentOwner', { agent_id: string; user_id: string; mail: MailQueued }, { now: Date }>;

/**
 * Links the agent to the user (claiming it, if it was not claimed yet) and tells the owner. Linked
 * to this user already: nothing; linked to another: 409.
 */
export function decideLinkAgentOwner(command: LinkAgentOwner, state: AgentState): Array<AgentClaimed | AgentOwnerLinked | MailQueued> {
  const { agent_id, user_id, mail } = command.data;
  if (state.owner_user_id === user_id) return [];
  if (state.owner_user_id) throw alreadyLinked();
  const at = command.metadata.now.toISOString();
  const link: AgentClaimed | AgentOwnerLinked = state.claimed
    ? { type: 'AgentOwnerLinked', data: { agent_id, user_id, linked_at: at } }
    : { type: 'AgentClaimed', data: { agent_id, claimed_via: 'email_otp', user_id, claimed_at: at } };
  return [link, mail];
}

export async function fullClaim(d: OwnershipDeps, userId: string, agentId: string, claimToken: string, otp: string, ctx: CommandContext) {
  await checkClaimToken(d, agentId, claimToken);
  const agent = await loadAgent(d.bus, agentId);
  const stream = otpStream('claim_full', agentId);
  const check = await consumeOtpCommand(d.bus, d.secrets, stream, otp, ctx.now);
  const verify: VerifyFullClaimOtp = {
    type: 'VerifyFullClaimOtp',
    data: { ...check.data, user_id: userId, agent: claimFacts(agent) },
    metadata: check.metadata,
  };
  assertConsumed(
    await d.bus.handle<OtpState, OtpConsumed | OtpAttemptFailed>(stream, otpAggregate, (state) => decideVerifyFullClaimOtp(verify, state), otpContext(ctx)),
  );
  const command: LinkAgentOwner = {
    type: 'LinkAgentOwner',
    data: { agent_id: agentId, user_id: userId, mail: claimedMail(d, ctx, await loadAgent(d.bus, agentId)) },
    metadata: { now: ctx.now },
  };
  return d.bus.handle<AgentState, AgentClaimed | AgentOwnerLinked | MailQueued>(
    agentStream(agentId),
    agentAggregate,
    (state) => decideLinkAgentOwner(command, state),
    ctx,
  );
}

// ---- keys ---------------------------------------------------------------------------------

/**
 * ReplaceApiKey: `user_id` is the signed-in user asking (null for a recovery, which the owner's
 * mailbox proved); the new key's keyed hash (random) in the metadata; the sealed notice in the data.
 */
export type ReplaceApiKey = Command<
  'ReplaceApiKey',
  { agent_id: string; reason: ApiKeyReplaced['data']['reason']; user_id: string | null; mail: MailQueued },
  { now: Date; new_key_hash: string }
>;

/**
 * Replaces the agent's key, with a mail to the owner (the event's metadata carries actor and
 * request id). A rotation needs a claimed agent (403 `claim_required`) and its linked user; an
 * Elite key's regeneration its linked user (403 `not_owner`); a recovery only the code.
 */
export function decideReplaceApiKey(command: ReplaceApiKey, state: AgentState): Array<ApiKeyReplaced | MailQueued> {
  const { agent_id, reason, user_id, mail } = command.data;
  if (!state.exists) throw agentNotFound();
  switch (reason) {
    case 'rotation':
      if (!state.claimed) throw new DomainError(403, 'claim_required', 'Claim the agent before rotating its key');
      if (state.owner_user_id !== user_id) throw notOwner();
      break;
    case 'elite_regenerate':
      if (state.owner_user_id !== user_id) throw notOwner();
      break;
    case 'recovery':
      break;
  }
  const replaced: ApiKeyReplaced = {
    type: 'ApiKeyReplaced',
    data: { agent_id, old_key_hash: state.api_key_hash, new_key_hash: command.metadata.new_key_hash, reason, replaced_at: command.metadata.now.toISOString() },
  };
  return [replaced, mail];
}

/** Draws the new key, decides the replacement; the key is answered once (a repeated command gets 409). */
async function replaceKey(d: OwnershipDeps, agentId: string, reason: ReplaceApiKey['data']['reason'], userId: string | null, ctx: CommandContext) {
  const agent = await loadAgent(d.bus, agentId);
  const apiKey = newApiKey();
  const mail = sealMail(d.secrets, ctx, 'mail', 'api_key_changed', agent.owner_email, {
    agent_name: agent.name,
    agent_id: agentId,
    reason,
    actor: ctx.actor ?? 'unknown',
    request_id: ctx.requestId ?? '-',
    at: ctx.now.toISOString(),
  });
  const command: ReplaceApiKey = {
    type: 'ReplaceApiKey',
    data: { agent_id: agentId, reason, user_id: userId, mail },
    metadata: { now: ctx.now, new_key_hash: d.secrets.hash(apiKey) },
  };
  const result = await d.bus.handle<AgentState, ApiKeyReplaced | MailQueued>(
    agentStream(agentId),
    agentAggregate,
    (state) => decideReplaceApiKey(command, state),
    ctx,
  );
  if (result.duplicate) throw new DomainError(409, 'already_processed', 'This request was already processed; the new key was shown once');
  return { api_key: apiKey, position: result.position };
}

/** Owner only (the user the agent is linked to); the old key is invalid once the read model applies the event. */
export function rotateKey(d: OwnershipDeps, userId: string, agentId: string, ctx: CommandContext) {
  return replaceKey(d, agentId, 'rotation', userId, ctx);
}

/**
 * RequestKeyRecoveryOtp: a recovery code for the owner e-mail, asked by the signed-in `user_id`
 * (the agent's facts from its stream; the sealed mail in the data).
 */
export type RequestKeyRecoveryOtp = Command<'RequestKeyRecoveryOtp', { user_id: string; agent: ClaimFacts; mail: MailQueued }, IssueOtpMetadata>;

/**
 * Only the agent's linked owner may ask (403 `not_owner`): anyone else is refused before a code
 * is issued, so nothing is mailed and nothing counts against the owner's hourly cap.
 */
export function decideRequestKeyRecoveryOtp(command: RequestKeyRecoveryOtp, state: OtpState): Array<OtpIssued | MailQueued> {
  const { user_id, agent, mail } = command.data;
  if (agent.owner_user_id === null || agent.owner_user_id !== user_id) throw notOwner();
  return decideIssueOtp({ type: 'IssueOtp', data: { purpose: 'key_recovery', mail }, metadata: command.metadata }, state);
}

/** Lost-key recovery: the code goes to the owner e-mail; only the linked owner may ask for it. */
export async function requestKeyRecoveryOtp(d: OwnershipDeps, userId: string, agentId: string, ctx: CommandContext): Promise<{ position: number }> {
  const agent = await loadAgent(d.bus, agentId);
  const draw = drawOtp(d.secrets, 'key_recovery', agentId, ctx);
  const command: RequestKeyRecoveryOtp = {
    type: 'RequestKeyRecoveryOtp',
    data: {
      user_id: userId,
      agent: claimFacts(agent),
      mail: sealMail(d.secrets, ctx, 'mail', 'key_recovery_otp', agent.owner_email, {
        code: draw.code,
        minutes: OTP_MINUTES,
        agent_name: agent.name,
        agent_id: agentId,
      }),
    },
    metadata: issueMetadata(draw, ctx.now),
  };
  const result = await d.bus.handle(otpStream('key_recovery', agentId), otpAggregate, (state) => decideRequestKeyRecoveryOtp(command, state), ctx);
  return { position: result.position };
}

/** VerifyKeyRecoveryOtp: the code check of a recovery, by the signed-in `user_id`. */
export type VerifyKeyRecoveryOtp = Command<'VerifyKeyRecoveryOtp', ConsumeOtp['data'] & { user_id: string; agent: ClaimFacts }, ConsumeOtp['metadata']>;

/** Only the linked owner (403 `not_owner`, before the code is checked: a stranger burns no attempt). */
export function decideVerifyKeyRecoveryOtp(command: VerifyKeyRecoveryOtp, state: OtpState): Array<OtpConsumed | OtpAttemptFailed> {
  const { user_id, agent, presented } = command.data;
  if (agent.owner_user_id === null || agent.owner_user_id !== user_id) throw notOwner();
  return decideConsumeOtp({ type: 'ConsumeOtp', data: { presented }, metadata: command.metadata }, state);
}

export async function recoverKey(d: OwnershipDeps, userId: string, agentId: string, otp: string, ctx: CommandContext) {
  const agent = await loadAgent(d.bus, agentId);
  const stream = otpStream('key_recovery', agentId);
  const check = await consumeOtpCommand(d.bus, d.secrets, stream, otp, ctx.now);
  const verify: VerifyKeyRecoveryOtp = {
    type: 'VerifyKeyRecoveryOtp',
    data: { ...check.data, user_id: userId, agent: claimFacts(agent) },
    metadata: check.metadata,
  };
  assertConsumed(
    await d.bus.handle<OtpState, OtpConsumed | OtpAttemptFailed>(stream, otpAggregate, (state) => decideVerifyKeyRecoveryOtp(verify, state), otpContext(ctx)),
  );
  return replaceKey(d, agentId, 'recovery', null, ctx);
}

// ---- the auto-provisioned Elite agent of a user -----------------------------------------------

/** The user's auto-provisioned agent id, from its reservation stream (null when none yet). */
export async function eliteAgentOf(bus: CommandBus, userId: string): Promise<string | null> {
  // The stream's name fixes its one event type (only ReserveEliteAgent appends to it).
  const first = (await bus.log.readStream(eliteStream(userId), { maxCount: 1 }))[0] as Recorded<EliteAgentReserved> | undefined;
  return first ? first.data.agent_id : null;
}

/** ReserveEliteAgent: one auto-provisioned agent per user, appended to `user-elite-<user>` with "no stream". */
export type ReserveEliteAgent = Command<'ReserveEliteAgent', { user_id: string; agent_id: string; user_exists: boolean }, { now: Date }>;

/** Only an existing user gets one (401 otherwise: the token names no user). */
export function decideReserveEliteAgent(command: ReserveEliteAgent): [EliteAgentReserved] {
  const { user_id, agent_id, user_exists } = command.data;
  if (!user_exists) throw new DomainError(401, 'unauthorized', 'Invalid or expired token');
  return [{ type: 'EliteAgentReserved', data: { user_id, agent_id, reserved_at: command.metadata.now.toISOString() } }];
}

/** ProvisionEliteAgent: the user's name and address; the secrets' keyed hashes and ciphertext (random) in the metadata. */
export type ProvisionEliteAgent = Command<
  'ProvisionEliteAgent',
  { user_id: string; agent_id: string; full_name: string; email: string; plan: Plan },
  { now: Date; api_key_hash: string; claim_token_hash: string; webhook_secret_enc: string }
>;

/**
 * The in-app agent: the tier of the member's paid plan (Pro or Elite), registration_source
 * `pro_auto` / `elite_auto`, claimed and linked to the user, with its first monthly grant; an
 * existing agent appends nothing.
 */
export function decideProvisionEliteAgent(command: ProvisionEliteAgent, state: AgentState): Array<AgentRegistered | AgentClaimed | MonthlyCreditsGranted> {
  if (state.exists) return [];
  const { user_id, agent_id, full_name, email, plan } = command.data;
  const { now, api_key_hash, claim_token_hash, webhook_secret_enc } = command.metadata;
  const at = now.toISOString();
  const registered: AgentRegistered = {
    type: 'AgentRegistered',
    data: {
      agent_id,
      name: `${full_name}'s agent`.slice(0, 100),
      description: null,
      capabilities: ['startup-networking'],
      owner_name: full_name,
      owner_email: email,
      webhook_url: null,
      webhook_secret_enc,
      api_key_hash,
      claim_token_hash,
      tier: plan,
      registration_source: `${plan}_auto`,
      intent_type: 'seeker',
      registered_at: at,
    },
  };
  const claimed: AgentClaimed = { type: 'AgentClaimed', data: { agent_id, claimed_via: 'email_otp', user_id, claimed_at: at } };
  return [registered, claimed, ...decideRegistrationGrant(agentAggregate.evolve(state, registered), now)];
}

/**
 * Provisions the user's in-app agent once (reservation stream `user-elite-<user>` with "no
 * stream"). Its key is returned only by this call; afterwards only regeneration shows a new one.
 */
export async function provisionEliteAgent(
  d: OwnershipDeps,
  userId: string,
  ctx: CommandContext,
  plan: Plan = 'elite',
): Promise<{ agent_id: string; api_key: string | null; created: boolean; position: number }> {
  const existing = await eliteAgentOf(d.bus, userId);
  if (existing) return { agent_id: existing, api_key: null, created: false, position: 0 };
  const { state: user } = await d.bus.load(userStream(userId), userAggregate);
  const agentId = deriveId('agt', ctx.commandId, 'elite');
  const reservation = decideReserveEliteAgent({
    type: 'ReserveEliteAgent',
    data: { user_id: userId, agent_id: agentId, user_exists: user.exists },
    metadata: { now: ctx.now },
  });
  try {
    await d.bus.appendRaw(eliteStream(userId), reservation, 'no_stream', ctx);
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
    const winner = await eliteAgentOf(d.bus, userId);
    return { agent_id: winner ?? agentId, api_key: null, created: false, position: 0 };
  }
  const apiKey = newApiKey();
  const command: ProvisionEliteAgent = {
    type: 'ProvisionEliteAgent',
    data: { user_id: userId, agent_id: agentId, full_name: user.full_name, email: user.email, plan },
    metadata: {
      now: ctx.now,
      api_key_hash: d.secrets.hash(apiKey),
      claim_token_hash: d.secrets.hash(newClaimToken()),
      webhook_secret_enc: d.secrets.encrypt(newWebhookSecret()),
    },
  };
  const result = await d.bus.handle<AgentState, AgentRegistered | AgentClaimed | MonthlyCreditsGranted>(
    agentStream(agentId),
    agentAggregate,
    (state) => decideProvisionEliteAgent(command, state),
    ctx,
  );
  return { agent_id: agentId, api_key: apiKey, created: true, position: result.position };
}

export async function regenerateEliteKey(d: OwnershipDeps, userId: string, ctx: CommandContext) {
  const agentId = await eliteAgentOf(d.bus, userId);
  if (!agentId) throw notFound('Elite key', 'elite_key_not_found');
  const r = await replaceKey(d, agentId, 'elite_regenerate', userId, ctx);
  return { agent_id: agentId, ...r };
}
