import type { AcceptBond, BondState, BondStreamEvent, DeclineBond, RemoveBond, RequestBond } from '../../../commands/social/bonds.ts';
import { bondAggregate, decideAcceptBond, decideDeclineBond, decideRemoveBond, decideRequestBond } from '../../../commands/social/bonds.ts';
import type { FollowAgent, FollowState, FollowStreamEvent, UnfollowAgent } from '../../../commands/social/follow.ts';
import { decideFollowAgent, decideUnfollowAgent, followAggregate } from '../../../commands/social/follow.ts';
import type { StampAgent, StampsState, StampsStreamEvent } from '../../../commands/social/stamps.ts';
import { decideStampAgent, stampsAggregate } from '../../../commands/social/stamps.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const { ALICE, BOB, NOW, HOUR_MS, later } = f;
const now = NOW.toISOString();

describe('commands: FollowAgent and UnfollowAgent (follow-<follower>:<followed>)', () => {
  const data = (over: Partial<FollowAgent['data']> = {}) => ({ agent_id: ALICE, target_agent_id: BOB, target_exists: true, ...over });
  const follow = (over: Partial<FollowAgent['data']> = {}): FollowAgent => ({ type: 'FollowAgent', data: data(over), metadata: { now: NOW } });
  const unfollow = (over: Partial<UnfollowAgent['data']> = {}): UnfollowAgent => ({ type: 'UnfollowAgent', data: data(over), metadata: { now: NOW } });
  const follows = DeciderSpecification.for<FollowAgent, FollowState, FollowStreamEvent>({ decide: decideFollowAgent, ...followAggregate });
  const unfollows = DeciderSpecification.for<UnfollowAgent, FollowState, FollowStreamEvent>({ decide: decideUnfollowAgent, ...followAggregate });

  it('follows an agent', () =>
    follows
      .given([])
      .when(follow())
      .then([f.agentFollowed({ followed_at: now })]));
  it('appends nothing when already following', () => follows.given([f.agentFollowed()]).when(follow()).thenNothingHappened());
  it('follows again after an unfollow', () =>
    follows
      .given([f.agentFollowed(), f.agentUnfollowed()])
      .when(follow())
      .then([f.agentFollowed({ followed_at: now })]));
  it('unfollows', () =>
    unfollows
      .given([f.agentFollowed()])
      .when(unfollow())
      .then([f.agentUnfollowed({ unfollowed_at: now })]));
  it('appends nothing when unfollowing an agent not followed', () => unfollows.given([]).when(unfollow()).thenNothingHappened());
  it('refuses oneself with 400', () =>
    follows
      .given([])
      .when(follow({ target_agent_id: ALICE }))
      .thenThrows('cannot_follow_self', 400));
  it('refuses an unknown agent with 404', () =>
    follows
      .given([])
      .when(follow({ target_exists: false }))
      .thenThrows('agent_not_found', 404));
  it('refuses to unfollow an unknown agent with 404', () =>
    unfollows
      .given([])
      .when(unfollow({ target_exists: false }))
      .thenThrows('agent_not_found', 404));
});

describe('commands: StampAgent (stamps-<endorser>:<target>)', () => {
  const stamp = (over: Partial<StampAgent['data']> = {}): StampAgent => ({
    type: 'StampAgent',
    data: { agent_id: ALICE, agent_name: 'Alice', target_agent_id: BOB, capability: 'lead-gen', target_exists: true, ...over },
    metadata: { now: NOW },
  });
  const spec = DeciderSpecification.for<StampAgent, StampsState, StampsStreamEvent>({ decide: decideStampAgent, ...stampsAggregate });
  const five = ['lead-gen', 'b2b-sales', 'founder-matching', 'intro-drafting', 'talent-matching'].map((capability) => f.trustStampGiven({ capability }));

  it('stamps a capability', () =>
    spec
      .given([])
      .when(stamp())
      .then([f.trustStampGiven({ stamped_at: now })]));
  it('appends nothing for a capability already stamped (not counted twice)', () => spec.given([f.trustStampGiven()]).when(stamp()).thenNothingHappened());
  it('accepts a 5th distinct capability', () =>
    spec
      .given(five.slice(0, 4))
      .when(stamp({ capability: 'talent-matching' }))
      .then([f.trustStampGiven({ capability: 'talent-matching', stamped_at: now })]));
  it('refuses a 6th distinct capability with 400', () =>
    spec
      .given(five)
      .when(stamp({ capability: 'investor-connect' }))
      .thenThrows('stamp_capability_limit', 400));
  it('still takes a repeat of one of the five (nothing appended)', () =>
    spec
      .given(five)
      .when(stamp({ capability: 'b2b-sales' }))
      .thenNothingHappened());
  it('refuses oneself with 400', () =>
    spec
      .given([])
      .when(stamp({ target_agent_id: ALICE }))
      .thenThrows('cannot_endorse_self', 400));
  it('refuses an unknown agent with 404', () =>
    spec
      .given([])
      .when(stamp({ target_exists: false }))
      .thenThrows('agent_not_found', 404));
});

describe('commands: bonds (bond-<a>:<b>)', () => {
  const counts = { agent_bonds: 0, other_bonds: 0, agent_pending_outgoing: 0 };
  const request = (over: Partial<RequestBond['data']> = {}, at = NOW): RequestBond => ({
    type: 'RequestBond',
    data: { agent_id: ALICE, agent_name: 'Alice', other_agent_id: BOB, other_exists: true, ...counts, ...over },
    metadata: { now: at },
  });
  const accept = (over: Partial<AcceptBond['data']> = {}): AcceptBond => ({
    type: 'AcceptBond',
    data: { agent_id: BOB, agent_name: 'Bob', other_agent_id: ALICE, other_exists: true, ...counts, ...over },
    metadata: { now: NOW },
  });
  const decline = (over: Partial<DeclineBond['data']> = {}): DeclineBond => ({
    type: 'DeclineBond',
    data: { agent_id: BOB, agent_name: 'Bob', other_agent_id: ALICE, other_exists: true, ...over },
    metadata: { now: NOW },
  });
  const remove = (over: Partial<RemoveBond['data']> = {}): RemoveBond => ({
    type: 'RemoveBond',
    data: { agent_id: ALICE, agent_name: 'Alice', other_agent_id: BOB, other_exists: true, ...over },
    metadata: { now: NOW },
  });
  const requests = DeciderSpecification.for<RequestBond, BondState, BondStreamEvent>({ decide: decideRequestBond, ...bondAggregate });
  const accepts = DeciderSpecification.for<AcceptBond, BondState, BondStreamEvent>({ decide: decideAcceptBond, ...bondAggregate });
  const declines = DeciderSpecification.for<DeclineBond, BondState, BondStreamEvent>({ decide: decideDeclineBond, ...bondAggregate });
  const removes = DeciderSpecification.for<RemoveBond, BondState, BondStreamEvent>({ decide: decideRemoveBond, ...bondAggregate });
  const bonded = [f.bondRequested(), f.bondAccepted()];
  const removedAt = NOW.toISOString();
  const removed = [...bonded, f.bondRemoved({ removed_at: removedAt, cooldown_until: later(24 * HOUR_MS).toISOString() })];

  it('requests a bond', () =>
    requests
      .given([])
      .when(request())
      .then([f.bondRequested({ requested_at: now })]));
  it('appends nothing for a request already pending', () => requests.given([f.bondRequested()]).when(request()).thenNothingHappened());
  it('refuses a request when the other agent already asked (409)', () =>
    requests
      .given([f.bondRequested({ agent_id: BOB, agent_name: 'Bob', other_agent_id: ALICE })])
      .when(request())
      .thenThrows('bond_request_incoming', 409));
  it('refuses a request when already bonded (409)', () => requests.given(bonded).when(request()).thenThrows('already_bonded', 409));
  it('refuses a request within 24 h of a removal, from either side (409 bond_cooldown)', () => {
    requests
      .given(removed)
      .when(request({}, later(24 * HOUR_MS - 1)))
      .thenThrows('bond_cooldown', 409);
    requests
      .given(removed)
      .when(request({ agent_id: BOB, agent_name: 'Bob', other_agent_id: ALICE }, later(HOUR_MS)))
      .thenThrows('bond_cooldown', 409);
  });
  it('takes a request again once the 24 h have passed', () =>
    requests
      .given(removed)
      .when(request({}, later(24 * HOUR_MS)))
      .then([f.bondRequested({ requested_at: later(24 * HOUR_MS).toISOString() })]));
  it('takes a request again after a decline, without cooldown', () =>
    requests
      .given([f.bondRequested(), f.bondDeclined()])
      .when(request())
      .then([f.bondRequested({ requested_at: now })]));
  it('refuses a request at 500 bonds, of either agent (409 bond_limit)', () => {
    requests
      .given([])
      .when(request({ agent_bonds: 500 }))
      .thenThrows('bond_limit', 409);
    requests
      .given([])
      .when(request({ other_bonds: 500 }))
      .thenThrows('bond_limit', 409);
    requests
      .given([])
      .when(request({ agent_bonds: 499, other_bonds: 499 }))
      .then([f.bondRequested({ requested_at: now })]);
  });
  it('refuses a 21st pending outgoing request (409 bond_request_limit)', () => {
    requests
      .given([])
      .when(request({ agent_pending_outgoing: 20 }))
      .thenThrows('bond_request_limit', 409);
    requests
      .given([])
      .when(request({ agent_pending_outgoing: 19 }))
      .then([f.bondRequested({ requested_at: now })]);
  });
  it('refuses oneself (400) and an unknown agent (404)', () => {
    requests
      .given([])
      .when(request({ other_agent_id: ALICE }))
      .thenThrows('cannot_bond_self', 400);
    requests
      .given([])
      .when(request({ other_exists: false }))
      .thenThrows('agent_not_found', 404);
  });

  it('accepts a pending request of the other agent', () =>
    accepts
      .given([f.bondRequested()])
      .when(accept())
      .then([f.bondAccepted({ accepted_at: now })]));
  it('appends nothing when accepting an active bond', () => accepts.given(bonded).when(accept()).thenNothingHappened());
  it('refuses to accept one’s own request or no request (404)', () => {
    accepts
      .given([f.bondRequested()])
      .when(accept({ agent_id: ALICE, other_agent_id: BOB }))
      .thenThrows('bond_request_not_found', 404);
    accepts.given([]).when(accept()).thenThrows('bond_request_not_found', 404);
  });
  it('refuses to accept at 500 bonds (409 bond_limit)', () =>
    accepts
      .given([f.bondRequested()])
      .when(accept({ agent_bonds: 500 }))
      .thenThrows('bond_limit', 409));

  it('declines a pending request of the other agent', () =>
    declines
      .given([f.bondRequested()])
      .when(decline())
      .then([f.bondDeclined({ declined_at: now })]));
  it('refuses to decline without a request (404)', () => declines.given(bonded).when(decline()).thenThrows('bond_request_not_found', 404));

  it('removes an active bond, starting the 24 h cooldown', () =>
    removes
      .given(bonded)
      .when(remove())
      .then([f.bondRemoved({ removed_at: now, cooldown_until: later(24 * HOUR_MS).toISOString() })]));
  it('refuses to remove what is not an active bond (404)', () => {
    removes.given([f.bondRequested()]).when(remove()).thenThrows('bond_not_found', 404);
    removes.given(removed).when(remove()).thenThrows('bond_not_found', 404);
  });
});
