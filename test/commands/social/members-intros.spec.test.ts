import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { DecideIntro, IntroState, IntroStreamEvent, RequestIntro } from '../../../commands/social/intros.ts';
import { decideApproveIntro, decideDeclineIntro, decideRequestIntro, introAggregate } from '../../../commands/social/intros.ts';
import type { MemberState, MemberStreamEvent, UpdateMemberProfile } from '../../../commands/social/members.ts';
import { decideUpdateMemberProfile, memberAggregate } from '../../../commands/social/members.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const { ALICE, USER, NOW, later, HOUR_MS } = f;
const OWNER = 'usr_owner000000000000000';
const now = NOW.toISOString();

describe('commands: UpdateMemberProfile (member-<user_id>)', () => {
  const spec = DeciderSpecification.for<UpdateMemberProfile, MemberState, MemberStreamEvent>({ decide: decideUpdateMemberProfile, ...memberAggregate });
  const update = (changes: UpdateMemberProfile['data']['changes'], over: Partial<UpdateMemberProfile['data']> = {}): UpdateMemberProfile => ({
    type: 'UpdateMemberProfile',
    data: { user_id: USER, user_exists: true, registered_name: 'Ada Lovelace', changes, ...over },
    metadata: { now: NOW },
  });
  const first = { full_name: 'Ada Lovelace', headline: null, bio: null, industry: null, region: null, gives: [], asks: [], discoverable: true };

  it('starts from the registered name and the defaults (discoverable) on the first change', () =>
    spec
      .given([])
      .when(update({ headline: 'Founder' }))
      .then([f.memberProfileUpdated({ ...first, headline: 'Founder', updated_at: now })]));
  it('keeps the other fields on a later change', () =>
    spec
      .given([f.memberProfileUpdated()])
      .when(update({ discoverable: false }))
      .then([f.memberProfileUpdated({ discoverable: false, updated_at: now })]));
  it('appends nothing when nothing changes', () =>
    spec
      .given([f.memberProfileUpdated()])
      .when(update({ headline: 'Founder' }))
      .thenNothingHappened());
  it('refuses an unknown user with 404', () =>
    spec
      .given([])
      .when(update({ headline: 'x' }, { user_exists: false }))
      .thenThrows('user_not_found', 404));
});

describe('commands: RequestIntro (agent-<id>) and Approve/DeclineIntro (intro-<id>)', () => {
  const requests = DeciderSpecification.for<RequestIntro, AgentState, AgentStreamEvent>({ decide: decideRequestIntro, ...agentAggregate });
  const claimed = [
    f.agentRegistered({ registered_at: f.time(8) }),
    f.monthlyCreditsGranted({ amount_mc: 10_000, balance_after_mc: 10_000 }),
    f.agentClaimed({ user_id: OWNER }),
  ];
  const request = (over: Partial<RequestIntro['data']> = {}): RequestIntro => ({
    type: 'RequestIntro',
    data: { member_id: USER, reason: 'We both do lead-gen', member_listed: true, pending_exists: false, ...over },
    metadata: { now: NOW, intro_id: 'int_1' },
  });

  it('requests an intro for 0.25 credits, expiring after 14 days', () =>
    requests
      .given(claimed)
      .when(request())
      .then([f.introRequested({ requested_at: now, expires_at: later(14 * 24 * HOUR_MS).toISOString(), agent_name: 'Alice' })]));
  it('refuses an unclaimed agent with 403 agent_not_claimed', () => requests.given(claimed.slice(0, 2)).when(request()).thenThrows('agent_not_claimed', 403));
  it('refuses a member not in the directory with 404', () =>
    requests
      .given(claimed)
      .when(request({ member_listed: false }))
      .thenThrows('member_not_found', 404));
  it('refuses its own owner with 400', () =>
    requests
      .given(claimed)
      .when(request({ member_id: OWNER }))
      .thenThrows('cannot_intro_self', 400));
  it('refuses a second pending request to the same member with 409', () =>
    requests
      .given(claimed)
      .when(request({ pending_exists: true }))
      .thenThrows('intro_pending', 409));
  it('refuses without credits (402)', () =>
    requests
      .given([...claimed.slice(0, 1), f.monthlyCreditsGranted({ amount_mc: 100, balance_after_mc: 100 }), claimed[2] as AgentStreamEvent])
      .when(request())
      .thenThrows('insufficient_credits', 402));

  const answers = DeciderSpecification.for<DecideIntro, IntroState, IntroStreamEvent>({ decide: decideApproveIntro, ...introAggregate });
  const declines = DeciderSpecification.for<DecideIntro, IntroState, IntroStreamEvent>({ decide: decideDeclineIntro, ...introAggregate });
  const pending = { intro_id: 'int_1', agent_id: ALICE, owner_user_id: OWNER, member_id: USER, expires_at: later(HOUR_MS).toISOString() };
  const answer = (over: Partial<DecideIntro['data']> = {}, at = NOW): DecideIntro => ({
    type: 'ApproveIntro',
    data: { user_id: USER, request: pending, ...over },
    metadata: { now: at },
  });

  it('approves a pending intro, naming the match it opens', () =>
    answers
      .given([])
      .when(answer())
      .thenMatches((events) => {
        const e = events[0];
        if (e?.type !== 'IntroApproved') throw new Error('expected IntroApproved');
        if (!/^mtc_/.test(e.data.match_id) || e.data.owner_user_id !== OWNER || e.data.approved_at !== now) throw new Error(JSON.stringify(e.data));
      }));
  it('appends nothing when approved again', () => answers.given([f.introApproved()]).when(answer()).thenNothingHappened());
  it('refuses another user (404), a missing request (404), a decided one (409) and an expired one (409)', () => {
    answers
      .given([])
      .when(answer({ user_id: OWNER }))
      .thenThrows('intro_not_found', 404);
    answers
      .given([])
      .when(answer({ request: null }))
      .thenThrows('intro_not_found', 404);
    answers.given([f.introDeclined()]).when(answer()).thenThrows('intro_decided', 409);
    answers
      .given([])
      .when(answer({}, later(HOUR_MS)))
      .thenThrows('intro_expired', 409);
  });
  it('declines a pending intro', () =>
    declines
      .given([])
      .when(answer())
      .then([f.introDeclined({ declined_at: now })]));
  it('refuses to decline an approved intro (409)', () => declines.given([f.introApproved()]).when(answer()).thenThrows('intro_decided', 409));
});
