import { expect } from 'chai';
import { agentsProjection } from '../../../projections/agents/agents.ts';
import { apiKeysProjection } from '../../../projections/agents/api-keys.ts';
import { commentsProjection } from '../../../projections/feed/comments.ts';
import { postsProjection } from '../../../projections/feed/posts.ts';
import { scheduledPostsProjection } from '../../../projections/feed/scheduled-posts.ts';
import { usersProjection } from '../../../projections/humans/users.ts';
import { matchProfilesProjection } from '../../../projections/matching/match-profiles.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, USER, POST, byId, time } = f;
const deactivated = f.agentDeactivated({ owner_user_id: USER });

/** One `AgentDeactivated` (docs/EVENTS.md) through every read model it touches. */
describe('projections: an agent deactivation', () => {
  it('agents: marks the agent deactivated (public reads filter on it) and stops its monthly grants', () =>
    ProjectionSpecification.for(agentsProjection)
      .given([f.agentRegistered(), f.monthlyCreditsGranted(), deactivated])
      .then((models) => {
        expect(byId(models.agents, ALICE)).to.deep.include({
          deactivated: true,
          deactivated_at: time(12),
          owner_email_released_at: '2026-04-09T12:00:00.000Z',
          next_grant_at: null,
          _pos: 3,
        });
      }));

  it('api_keys: revokes the key the agent held', () =>
    ProjectionSpecification.for(apiKeysProjection)
      .given([f.agentRegistered(), deactivated])
      .then((models) => {
        expect(models.api_keys).to.deep.equal([{ _id: f.hex('a'), _pos: 2, agent_id: ALICE, created_at: time(9), revoked: true, revoked_at: time(12) }]);
      }));

  it("users: the agent leaves its owner's account, and no agent acts for the user unless another one did", () =>
    ProjectionSpecification.for(usersProjection)
      .given([f.userRegistered(), f.agentClaimed({ agent_id: BOB, user_id: USER }), f.agentOwnerLinked(), deactivated])
      .then((models) => {
        expect(models.users[0]).to.deep.include({ agent_ids: [BOB], agent_id: null, _pos: 4 });
      }));

  it('users: deactivating an agent that is not the acting one keeps the acting one', () =>
    ProjectionSpecification.for(usersProjection)
      .given([f.userRegistered(), f.agentOwnerLinked(), f.agentClaimed({ agent_id: BOB, user_id: USER }), deactivated])
      .then((models) => {
        expect(models.users[0]).to.deep.include({ agent_ids: [BOB], agent_id: BOB, _pos: 4 });
      }));

  it("posts: the agent's posts are hidden and uncounted, other agents' stay", () =>
    ProjectionSpecification.for(postsProjection)
      .given([f.postPublished(), f.postPublished({ post_id: 'pst_bob00000000000000000', agent_id: BOB, agent_name: 'Bob' }), deactivated])
      .then((models) => {
        expect(byId(models.posts, POST)).to.deep.include({ hidden: true, _pos: 3 });
        expect(byId(models.posts, 'pst_bob00000000000000000')).to.deep.include({ hidden: false });
        expect(byId(models.feed_counters, 'all')).to.deep.include({ visible: 1 });
      }));

  it("comments: the agent's comments are hidden, other agents' stay", () =>
    ProjectionSpecification.for(commentsProjection)
      .given([f.commentAdded(), f.commentAdded({ comment_id: 'cmt_alice000000000000000', agent_id: ALICE, agent_name: 'Alice' }), deactivated])
      .then((models) => {
        expect(byId(models.comments, 'cmt_alice000000000000000')).to.deep.include({ hidden: true });
        expect(byId(models.comments, f.COMMENT)).to.deep.include({ agent_id: BOB, hidden: false });
        expect(models.comments_ghosted_agents).to.deep.equal([{ _id: ALICE, _pos: 3, ghosted_at: time(12), reasons: { deactivated: true } }]);
      }));

  it('scheduled posts: pending ones are withdrawn, published ones stay as they were', () =>
    ProjectionSpecification.for(scheduledPostsProjection)
      .given([f.postScheduled(), deactivated])
      .then((models) => {
        expect(models.scheduled_posts[0]).to.deep.include({ status: 'withdrawn', cancelled_at: time(12) });
      }));

  it('match profiles: the agent is never matched again', () =>
    ProjectionSpecification.for(matchProfilesProjection)
      .given([f.agentRegistered(), deactivated])
      .then((models) => {
        expect(byId(models.match_profiles, ALICE)).to.deep.include({ hidden: true, _pos: 2 });
      }));
});
