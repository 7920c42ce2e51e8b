import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { OtpState } from '../../../commands/humans/otp.ts';
import { otpAggregate } from '../../../commands/humans/otp.ts';
import type {
  ClaimAgent,
  LinkAgentOwner,
  ProvisionEliteAgent,
  ReplaceApiKey,
  RequestFullClaimOtp,
  RequestKeyRecoveryOtp,
  RequestLiteClaimOtp,
  ReserveEliteAgent,
  VerifyFullClaimOtp,
  VerifyKeyRecoveryOtp,
  VerifyLiteClaimOtp,
} from '../../../commands/humans/ownership.ts';
import {
  decideClaimAgent,
  decideLinkAgentOwner,
  decideProvisionEliteAgent,
  decideReplaceApiKey,
  decideRequestFullClaimOtp,
  decideRequestKeyRecoveryOtp,
  decideRequestLiteClaimOtp,
  decideReserveEliteAgent,
  decideVerifyFullClaimOtp,
  decideVerifyKeyRecoveryOtp,
  decideVerifyLiteClaimOtp,
  LITE_CLAIM_MAILS_PER_HOUR,
} from '../../../commands/humans/ownership.ts';
import type { OtpEvent } from '../../../events/humans.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import {
  AGENT,
  agentClaimed,
  agentOwnerLinked,
  agentRegistered,
  at,
  hex,
  iso,
  mailQueued,
  NOW,
  OTHER_USER,
  OTP,
  otpAttemptFailed,
  otpConsumed,
  otpIssued,
  registered,
  USER,
} from './fixtures.ts';

const agents = <C>(decide: (command: C, state: AgentState) => AgentStreamEvent[]) =>
  DeciderSpecification.for<C, AgentState, AgentStreamEvent>({ decide, ...agentAggregate });
const otps = <C>(decide: (command: C, state: OtpState) => OtpEvent[]) => DeciderSpecification.for<C, OtpState, OtpEvent>({ decide, ...otpAggregate });

const unclaimed = { claimed: false, owner_user_id: null };
const claimedOnly = { claimed: true, owner_user_id: null };
const linkedTo = (user: string) => ({ claimed: true, owner_user_id: user });
const issueMeta = { now: NOW, otp_id: OTP, code_hash: hex('c') };
const issued = (purpose: 'claim_lite' | 'claim_full') => otpIssued({ purpose, issued_at: iso(NOW), expires_at: iso(at(9, 40)) });
const claimMail = mailQueued({ template: 'claim_otp', to: 'owner@example.com' });
const claimedNotice = mailQueued({ template: 'agent_claimed', to: 'owner@example.com' });
const presented = { otp_id: OTP, code_hash: hex('c') };

describe('commands: RequestLiteClaimOtp (otp-claim_lite-<agent>)', () => {
  const spec = otps(decideRequestLiteClaimOtp);
  const request = (agent = unclaimed): RequestLiteClaimOtp => ({ type: 'RequestLiteClaimOtp', data: { agent, mail: claimMail }, metadata: issueMeta });

  it('sends a claim code to the owner e-mail', () => {
    spec
      .given([])
      .when(request())
      .then([issued('claim_lite'), claimMail]);
  });

  it('refuses a claimed agent with 409', () => {
    spec.given([]).when(request(claimedOnly)).thenThrows('already_claimed', 409);
  });

  it('decides the same events for the same command (the mail was sealed before deciding)', () => {
    expect(decideRequestLiteClaimOtp(request(), otpAggregate.initialState())).to.deep.equal(decideRequestLiteClaimOtp(request(), otpAggregate.initialState()));
  });

  // An earlier code of this stream and the mail that carried it (its parameters sealed).
  const EARLIER = 'otp_earlier0000000000000';
  const earlierCode = (issuedAt = at(9, 25)) =>
    otpIssued({ otp_id: EARLIER, purpose: 'claim_lite', issued_at: iso(issuedAt), expires_at: iso(new Date(issuedAt.getTime() + 10 * 60_000)) });
  const earlierMail = (queuedAt = at(9, 25), mail_id = 'mail_earlier000000000000') =>
    mailQueued({ mail_id, template: 'claim_otp', to: 'owner@example.com', params_enc: 'v1.earlier-code', queued_at: iso(queuedAt) });

  it('while the current code is live, resends it: the mail that carried it again, no new code', () => {
    spec
      .given([earlierCode(), earlierMail()])
      .when(request())
      .then([mailQueued({ ...claimMail.data, params_enc: 'v1.earlier-code' })]);
  });

  it('issues a new code when the current one expired, was used or was killed by wrong tries', () => {
    spec
      .given([earlierCode(at(9, 0)), earlierMail(at(9, 0))])
      .when(request())
      .then([issued('claim_lite'), claimMail]);
    spec
      .given([earlierCode(), earlierMail(), otpConsumed({ otp_id: EARLIER })])
      .when(request())
      .then([issued('claim_lite'), claimMail]);
    spec
      .given([earlierCode(), earlierMail(), otpAttemptFailed({ otp_id: EARLIER, attempts: 5 })])
      .when(request())
      .then([issued('claim_lite'), claimMail]);
  });

  it('refuses with 429 once 10 mails reached the owner within the hour, saying when to retry', () => {
    const mails = Array.from({ length: LITE_CLAIM_MAILS_PER_HOUR }, (_, i) => earlierMail(at(8, 50 + i), `mail_earlier${String(i).padStart(12, '0')}`));
    spec
      .given([earlierCode(at(8, 50)), ...mails])
      .when(request())
      .thenThrows('otp_rate_limited', 429);
    const state = [earlierCode(at(8, 50)), ...mails].reduce(otpAggregate.evolve, otpAggregate.initialState());
    expect(() => decideRequestLiteClaimOtp(request(), state))
      .to.throw()
      .with.property('extra')
      .that.deep.equals({ retry_after: 20 * 60, limit: LITE_CLAIM_MAILS_PER_HOUR });
  });

  it('a retried request (its mail already queued) appends nothing', () => {
    spec
      .given([earlierCode(), earlierMail(), mailQueued({ ...claimMail.data, params_enc: 'v1.earlier-code' })])
      .when(request())
      .then([]);
  });
});

describe('commands: VerifyLiteClaimOtp (otp-claim_lite-<agent>)', () => {
  const spec = otps(decideVerifyLiteClaimOtp);
  const verify = (agent = unclaimed, code_hash = hex('c')): VerifyLiteClaimOtp => ({
    type: 'VerifyLiteClaimOtp',
    data: { presented: { otp_id: OTP, code_hash }, agent },
    metadata: { now: NOW },
  });

  it('consumes the right code', () => {
    spec
      .given([otpIssued({ purpose: 'claim_lite' })])
      .when(verify())
      .then([otpConsumed({ consumed_at: iso(NOW) })]);
  });

  it('records a wrong code', () => {
    spec
      .given([otpIssued({ purpose: 'claim_lite' })])
      .when(verify(unclaimed, hex('d')))
      .then([otpAttemptFailed({ failed_at: iso(NOW) })]);
  });

  it('refuses a claimed agent with 409 before the code is checked', () => {
    spec
      .given([otpIssued({ purpose: 'claim_lite' })])
      .when(verify(claimedOnly))
      .thenThrows('already_claimed', 409);
  });
});

describe('commands: ClaimAgent (agent-<id>)', () => {
  const spec = agents(decideClaimAgent);
  const claim: ClaimAgent = { type: 'ClaimAgent', data: { agent_id: AGENT, mail: claimedNotice }, metadata: { now: NOW } };

  it('claims the agent (no user linked) and tells the owner', () => {
    spec
      .given(registered())
      .when(claim)
      .then([agentClaimed({ claimed_at: iso(NOW) }), claimedNotice]);
  });

  it('appends nothing for a claimed agent', () => {
    spec
      .given([...registered(), agentClaimed()])
      .when(claim)
      .thenNothingHappened();
  });
});

describe('commands: RequestFullClaimOtp (otp-claim_full-<agent>)', () => {
  const spec = otps(decideRequestFullClaimOtp);
  const request = (agent: RequestFullClaimOtp['data']['agent']): RequestFullClaimOtp => ({
    type: 'RequestFullClaimOtp',
    data: { agent, mail: claimMail },
    metadata: issueMeta,
  });

  it('sends a claim code for an agent linked to nobody, claimed or not', () => {
    spec
      .given([])
      .when(request(unclaimed))
      .then([issued('claim_full'), claimMail]);
    spec
      .given([])
      .when(request(claimedOnly))
      .then([issued('claim_full'), claimMail]);
  });

  it('refuses an agent linked to an account with 409', () => {
    spec
      .given([])
      .when(request(linkedTo(USER)))
      .thenThrows('already_linked', 409);
  });
});

describe('commands: VerifyFullClaimOtp (otp-claim_full-<agent>)', () => {
  const spec = otps(decideVerifyFullClaimOtp);
  const verify = (agent: VerifyFullClaimOtp['data']['agent']): VerifyFullClaimOtp => ({
    type: 'VerifyFullClaimOtp',
    data: { presented, user_id: USER, agent },
    metadata: { now: NOW },
  });

  it('consumes the right code for an agent linked to nobody or to the same user', () => {
    spec
      .given([otpIssued({ purpose: 'claim_full' })])
      .when(verify(unclaimed))
      .then([otpConsumed({ consumed_at: iso(NOW) })]);
    spec
      .given([otpIssued({ purpose: 'claim_full' })])
      .when(verify(linkedTo(USER)))
      .then([otpConsumed({ consumed_at: iso(NOW) })]);
  });

  it('refuses an agent linked to another user with 409 before the code is checked', () => {
    spec
      .given([otpIssued({ purpose: 'claim_full' })])
      .when(verify(linkedTo(OTHER_USER)))
      .thenThrows('already_linked', 409);
  });
});

describe('commands: LinkAgentOwner (agent-<id>)', () => {
  const spec = agents(decideLinkAgentOwner);
  const link: LinkAgentOwner = { type: 'LinkAgentOwner', data: { agent_id: AGENT, user_id: USER, mail: claimedNotice }, metadata: { now: NOW } };

  it('claims an unclaimed agent for the user and tells the owner', () => {
    spec
      .given(registered())
      .when(link)
      .then([agentClaimed({ user_id: USER, claimed_at: iso(NOW) }), claimedNotice]);
  });

  it('links a claimed agent to the user', () => {
    spec
      .given([...registered(), agentClaimed()])
      .when(link)
      .then([agentOwnerLinked({ linked_at: iso(NOW) }), claimedNotice]);
  });

  it('appends nothing when the agent is linked to the same user', () => {
    spec
      .given([...registered(), agentClaimed({ user_id: USER })])
      .when(link)
      .thenNothingHappened();
  });

  it('refuses an agent linked to another user with 409', () => {
    spec
      .given([...registered(), agentClaimed({ user_id: OTHER_USER })])
      .when(link)
      .thenThrows('already_linked', 409);
  });
});

describe('commands: RequestKeyRecoveryOtp (otp-key_recovery-<agent>)', () => {
  const spec = otps(decideRequestKeyRecoveryOtp);
  const recoveryMail = mailQueued({ template: 'key_recovery_otp', to: 'owner@example.com' });
  const request = (user_id: string, agent: RequestKeyRecoveryOtp['data']['agent']): RequestKeyRecoveryOtp => ({
    type: 'RequestKeyRecoveryOtp',
    data: { user_id, agent, mail: recoveryMail },
    metadata: issueMeta,
  });

  it('sends a recovery code to the owner e-mail when the linked owner asks', () => {
    spec
      .given([])
      .when(request(USER, linkedTo(USER)))
      .then([otpIssued({ purpose: 'key_recovery', issued_at: iso(NOW), expires_at: iso(at(9, 40)) }), recoveryMail]);
  });

  it('refuses another user with 403, issuing nothing', () => {
    spec
      .given([])
      .when(request(OTHER_USER, linkedTo(USER)))
      .thenThrows('not_owner', 403);
  });

  it('refuses everyone while no user is linked (unclaimed, or claimed without an account) with 403', () => {
    spec.given([]).when(request(USER, unclaimed)).thenThrows('not_owner', 403);
    spec.given([]).when(request(USER, claimedOnly)).thenThrows('not_owner', 403);
  });
});

describe('commands: VerifyKeyRecoveryOtp (otp-key_recovery-<agent>)', () => {
  const spec = otps(decideVerifyKeyRecoveryOtp);
  const verify = (user_id: string): VerifyKeyRecoveryOtp => ({
    type: 'VerifyKeyRecoveryOtp',
    data: { presented, user_id, agent: linkedTo(USER) },
    metadata: { now: NOW },
  });

  it('consumes the right code presented by the linked owner', () => {
    spec
      .given([otpIssued({ purpose: 'key_recovery' })])
      .when(verify(USER))
      .then([otpConsumed({ consumed_at: iso(NOW) })]);
  });

  it('refuses another user with 403 before the code is checked (no attempt is spent)', () => {
    spec
      .given([otpIssued({ purpose: 'key_recovery' })])
      .when(verify(OTHER_USER))
      .thenThrows('not_owner', 403);
  });
});

describe('commands: ReplaceApiKey (agent-<id>)', () => {
  const spec = agents(decideReplaceApiKey);
  const keyMail = mailQueued({ template: 'api_key_changed', to: 'owner@example.com' });
  const replace = (reason: ReplaceApiKey['data']['reason'], user_id: string | null = USER): ReplaceApiKey => ({
    type: 'ReplaceApiKey',
    data: { agent_id: AGENT, reason, user_id, mail: keyMail },
    metadata: { now: NOW, new_key_hash: hex('f') },
  });
  const replaced = (reason: ReplaceApiKey['data']['reason']) => ({
    type: 'ApiKeyReplaced' as const,
    data: { agent_id: AGENT, old_key_hash: hex('a'), new_key_hash: hex('f'), reason, replaced_at: iso(NOW) },
  });

  it('rotates the key of a claimed agent for its linked user, with a mail to the owner', () => {
    spec
      .given([...registered(), agentClaimed({ user_id: USER })])
      .when(replace('rotation'))
      .then([replaced('rotation'), keyMail]);
  });

  it('refuses a rotation before the agent is claimed with 403', () => {
    spec.given(registered()).when(replace('rotation')).thenThrows('claim_required', 403);
  });

  it('refuses a rotation by another user with 403', () => {
    spec
      .given([...registered(), agentClaimed({ user_id: OTHER_USER })])
      .when(replace('rotation'))
      .thenThrows('not_owner', 403);
  });

  it('recovers a key with the code alone (no user, claimed or not)', () => {
    spec
      .given(registered())
      .when(replace('recovery', null))
      .then([replaced('recovery'), keyMail]);
  });

  it('regenerates an Elite key for its linked user only', () => {
    spec
      .given([...registered(), agentClaimed({ user_id: USER })])
      .when(replace('elite_regenerate'))
      .then([replaced('elite_regenerate'), keyMail]);
    spec
      .given([...registered(), agentClaimed({ user_id: OTHER_USER })])
      .when(replace('elite_regenerate'))
      .thenThrows('not_owner', 403);
  });

  it('refuses an agent that does not exist with 404', () => {
    spec.given([]).when(replace('recovery', null)).thenThrows('agent_not_found', 404);
  });
});

describe('commands: ReserveEliteAgent (user-elite-<user>)', () => {
  const reserve = (user_exists: boolean): ReserveEliteAgent => ({
    type: 'ReserveEliteAgent',
    data: { user_id: USER, agent_id: AGENT, user_exists },
    metadata: { now: NOW },
  });

  it('reserves one agent id for the user (the append expects no stream)', () => {
    expect(decideReserveEliteAgent(reserve(true))).to.deep.equal([
      { type: 'EliteAgentReserved', data: { user_id: USER, agent_id: AGENT, reserved_at: iso(NOW) } },
    ]);
  });

  it('refuses a user that does not exist with 401', () => {
    expect(() => decideReserveEliteAgent(reserve(false)))
      .to.throw()
      .that.includes({ code: 'unauthorized', status: 401 });
  });
});

describe('commands: ProvisionEliteAgent (agent-<id>)', () => {
  const spec = agents(decideProvisionEliteAgent);
  const provision: ProvisionEliteAgent = {
    type: 'ProvisionEliteAgent',
    data: { user_id: USER, agent_id: AGENT, full_name: 'Ann Lee', email: 'ann@example.com', plan: 'elite' },
    metadata: { now: NOW, api_key_hash: hex('a'), claim_token_hash: hex('b'), webhook_secret_enc: 'v1.secret' },
  };

  it('follows a Pro plan: tier pro, pro_auto, the Pro allocation', () => {
    spec
      .given([])
      .when({ ...provision, data: { ...provision.data, plan: 'pro' } })
      .thenMatches((events) => {
        expect(events[0].data).to.include({ tier: 'pro', registration_source: 'pro_auto' });
        expect(events[2].data).to.include({ amount_mc: 200_000 });
      });
  });

  it('registers an Elite agent (elite_auto) claimed by and linked to the user, with its first monthly grant', () => {
    spec
      .given([])
      .when(provision)
      .thenMatches((events) => {
        expect(events.map((e) => e.type)).to.deep.equal(['AgentRegistered', 'AgentClaimed', 'MonthlyCreditsGranted']);
        expect(events[0]).to.deep.equal(
          agentRegistered({
            name: "Ann Lee's agent",
            capabilities: ['startup-networking'],
            owner_email: 'ann@example.com',
            tier: 'elite',
            registration_source: 'elite_auto',
            registered_at: iso(NOW),
          }),
        );
        expect(events[1]).to.deep.equal(agentClaimed({ user_id: USER, claimed_at: iso(NOW) }));
        expect(events[2].data).to.include({ agent_id: AGENT, cycle: 0, amount_mc: 500_000, balance_after_mc: 500_000 });
      });
  });

  it('appends nothing for an agent that exists (a retried provisioning)', () => {
    spec.given(registered()).when(provision).thenNothingHappened();
  });
});
