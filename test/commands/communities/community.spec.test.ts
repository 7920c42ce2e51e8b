import type { CommunityState } from '../../../commands/communities/community.ts';
import {
  communityAggregate,
  decideCreateCommunity,
  decideDeleteCircle,
  decideJoinCircle,
  decideJoinRequest,
  decideJoinWithCode,
  decideNameCommunityAdmin,
  decideRemoveCommunityMember,
  decideSetCircleVisibility,
  decideUpdateInviteCodeStatus,
} from '../../../commands/communities/community.ts';
import type { CommunityEvent } from '../../../events/communities.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const { NOW, USER, ADMIN_USER, COMMUNITY, CIRCLE } = f;
const now = NOW.toISOString();
const meta = { now: NOW };
const admin = { user_id: ADMIN_USER, super_admin: false };
const stranger = { user_id: 'usr_stranger00000000000', super_admin: false };
const root = { user_id: 'usr_root0000000000000000', super_admin: true };
const base = [f.communityCreated(), f.circleCreated(), f.communityAdminNamed()];

const spec = <C>(decide: (c: C, s: CommunityState) => CommunityEvent[]) =>
  DeciderSpecification.for<C, CommunityState, CommunityEvent>({ decide, ...communityAggregate });

describe('commands: communities (community-<id>)', () => {
  it('creates a community with its first circle, visible to the community', () =>
    spec(decideCreateCommunity)
      .given([])
      .when({
        type: 'CreateCommunity',
        data: { name: 'Founders', description: 'Founders helping founders', open: true, created_by: ADMIN_USER },
        metadata: { now: f.at(9), community_id: COMMUNITY, circle_id: CIRCLE },
      })
      .then([f.communityCreated(), f.circleCreated()]));

  it('names an admin, who joins the community; twice changes nothing; an unknown user 404', () => {
    const name = (full_name: string | null) => ({
      type: 'NameCommunityAdmin' as const,
      data: { user_id: USER, full_name, named_by: ADMIN_USER },
      metadata: meta,
    });
    spec(decideNameCommunityAdmin)
      .given(base)
      .when(name('Ada Lovelace'))
      .then([f.communityAdminNamed({ user_id: USER, full_name: 'Ada Lovelace', named_at: now }), f.communityMemberJoined({ code_id: null, joined_at: now })]);
    spec(decideNameCommunityAdmin)
      .given([...base, f.communityAdminNamed({ user_id: USER })])
      .when(name('Ada Lovelace'))
      .thenNothingHappened();
    spec(decideNameCommunityAdmin).given(base).when(name(null)).thenThrows('user_not_found', 404);
    spec(decideNameCommunityAdmin).given([]).when(name('Ada')).thenThrows('community_not_found', 404);
  });

  it('lets only its own admins or a super admin act (403 community_admin_required)', () => {
    const vis = (actor: typeof admin) => ({
      type: 'SetCircleVisibility' as const,
      data: { actor, circle_id: CIRCLE, visibility: 'public' as const },
      metadata: meta,
    });
    spec(decideSetCircleVisibility).given(base).when(vis(stranger)).thenThrows('community_admin_required', 403);
    spec(decideSetCircleVisibility)
      .given(base)
      .when(vis(admin))
      .then([f.circleVisibilityChanged({ changed_at: now })]);
    spec(decideSetCircleVisibility)
      .given(base)
      .when(vis(root))
      .then([f.circleVisibilityChanged({ changed_by: root.user_id, changed_at: now })]);
  });

  it('refuses to delete the last circle of a community (409 last_circle)', () => {
    const del = { type: 'DeleteCircle' as const, data: { actor: admin, circle_id: CIRCLE }, metadata: meta };
    spec(decideDeleteCircle).given(base).when(del).thenThrows('last_circle', 409);
    spec(decideDeleteCircle)
      .given([...base, f.circleCreated({ circle_id: 'crc_second' })])
      .when(del)
      .then([f.circleDeleted({ deleted_at: now })]);
  });

  it('joins with an active code into the first circle; refuses paused, expired and used-up codes', () => {
    const join = { type: 'JoinWithCode' as const, data: { code_id: 'icd_code1', user_id: USER, full_name: 'Ada Lovelace' }, metadata: meta };
    const withCode = [...base, f.inviteCodeCreated()];
    spec(decideJoinWithCode)
      .given(withCode)
      .when(join)
      .then([f.communityMemberJoined({ joined_at: now }), f.circleMemberJoined({ joined_at: now })]);
    spec(decideJoinWithCode)
      .given([...withCode, f.inviteCodeStatusChanged()])
      .when(join)
      .thenThrows('invite_code_inactive', 409);
    spec(decideJoinWithCode)
      .given([...base, f.inviteCodeCreated({ expires_at: f.time(9) })])
      .when(join)
      .thenThrows('invite_code_expired', 409);
    spec(decideJoinWithCode)
      .given([...base, f.inviteCodeCreated({ max_uses: 1 }), f.communityMemberJoined({ user_id: 'usr_other000000000000000' })])
      .when(join)
      .thenThrows('invite_code_exhausted', 409);
    spec(decideJoinWithCode)
      .given([...withCode, f.communityMemberJoined()])
      .when(join)
      .thenNothingHappened();
    spec(decideJoinWithCode).given(base).when(join).thenThrows('invite_code_not_found', 404);
  });

  it('updates a code status once; an unknown code 404', () => {
    const upd = (code_id: string) => ({ type: 'UpdateInviteCodeStatus' as const, data: { actor: admin, code_id, status: 'paused' as const }, metadata: meta });
    spec(decideUpdateInviteCodeStatus)
      .given([...base, f.inviteCodeCreated()])
      .when(upd('icd_code1'))
      .then([f.inviteCodeStatusChanged({ changed_at: now })]);
    spec(decideUpdateInviteCodeStatus)
      .given([...base, f.inviteCodeCreated(), f.inviteCodeStatusChanged()])
      .when(upd('icd_code1'))
      .thenNothingHappened();
    spec(decideUpdateInviteCodeStatus).given(base).when(upd('icd_none')).thenThrows('invite_code_not_found', 404);
  });

  it('joins a circle per visibility: community members at once, outsiders ask for public ones, private and community circles 404 to outsiders', () => {
    const join = {
      type: 'JoinCircle' as const,
      data: { circle_id: CIRCLE, user_id: USER, full_name: 'Ada Lovelace' },
      metadata: { now: NOW, request_id: 'cjr_request1' },
    };
    spec(decideJoinCircle).given(base).when(join).thenThrows('circle_not_found', 404);
    spec(decideJoinCircle)
      .given([...base, f.communityMemberJoined()])
      .when(join)
      .then([f.circleMemberJoined({ joined_at: now })]);
    spec(decideJoinCircle)
      .given([...base, f.circleVisibilityChanged()])
      .when(join)
      .then([f.circleJoinRequested({ requested_at: now })]);
    spec(decideJoinCircle)
      .given([...base, f.circleVisibilityChanged(), f.circleJoinRequested()])
      .when(join)
      .thenNothingHappened();
    spec(decideJoinCircle)
      .given([...base, f.communityMemberJoined(), f.circleVisibilityChanged({ visibility: 'private' })])
      .when(join)
      .thenThrows('circle_not_found', 404);
    spec(decideJoinCircle)
      .given([...base, f.circleDeleted()])
      .when(join)
      .thenThrows('circle_not_found', 404);
  });

  it('approves a request once (joining the community and the circle) or rejects it with a note', () => {
    const decide = (approve: boolean, actor = admin) => ({
      type: 'DecideJoinRequest' as const,
      data: { actor, request_id: 'cjr_request1', approve, admin_note: 'ok', full_name: 'Ada Lovelace' },
      metadata: meta,
    });
    const pending = [...base, f.circleVisibilityChanged(), f.circleJoinRequested()];
    spec(decideJoinRequest)
      .given(pending)
      .when(decide(true))
      .then([
        f.circleJoinRequestDecided({ admin_note: 'ok', decided_at: now }),
        f.communityMemberJoined({ code_id: null, joined_at: now }),
        f.circleMemberJoined({ via: 'request', joined_at: now }),
      ]);
    spec(decideJoinRequest)
      .given(pending)
      .when(decide(false))
      .then([f.circleJoinRequestDecided({ status: 'rejected', admin_note: 'ok', decided_at: now })]);
    spec(decideJoinRequest)
      .given([...pending, f.circleJoinRequestDecided()])
      .when(decide(false))
      .thenThrows('join_request_decided', 409);
    spec(decideJoinRequest).given(pending).when(decide(true, stranger)).thenThrows('community_admin_required', 403);
  });

  it('removes a member; a non-member 404', () => {
    const rm = { type: 'RemoveCommunityMember' as const, data: { actor: admin, user_id: USER }, metadata: meta };
    spec(decideRemoveCommunityMember)
      .given([...base, f.communityMemberJoined()])
      .when(rm)
      .then([f.communityMemberRemoved({ removed_at: now })]);
    spec(decideRemoveCommunityMember).given(base).when(rm).thenThrows('not_community_member', 404);
  });
});
