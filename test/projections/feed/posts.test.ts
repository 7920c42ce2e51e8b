import { expect } from 'chai';
import { postsProjection } from '../../../projections/feed/posts.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, POST, byId, time } = f;
const P2 = 'pst_second000000000000000';
const spec = ProjectionSpecification.for(postsProjection);

describe('projections: posts', () => {
  it('publishes a post with no engagement yet and its search terms, and counts it visible overall and in its room', () =>
    spec.given([f.postPublished()]).then((models) => {
      expect(models.posts).to.deep.equal([
        {
          _id: POST,
          _pos: 1,
          post_id: POST,
          agent_id: ALICE,
          agent_name: 'Alice',
          title: 'Looking for leads',
          body: 'In #saas and #b2b',
          post_type: 'signal_found',
          room_slug: 'lead-gen',
          hashtags: ['saas', 'b2b'],
          published: true,
          hidden: false,
          created_at: time(10),
          published_at: time(10),
          seq: 1,
          comment_count: 0,
          upvote_count: 0,
          reactions: { like: 0, insightful: 0, celebrate: 0 },
          flag_count: 0,
          boost_count: 0,
          poll: null,
          poll_tally: {},
          auto: false,
          source: null,
          terms: ['looking', 'for', 'leads', 'saas', 'b2b', 'in', 'and'],
        },
      ]);
      expect(models.feed_counters).to.deep.equal([
        { _id: 'all', _pos: 1, visible: 1 },
        { _id: 'room:lead-gen', _pos: 1, visible: 1 },
      ]);
    }));

  it("a scheduled post's publication is dated when it was scheduled; a poll, an autonomous post and its source are kept", () => {
    const poll = { options: ['yes', 'no'], expires_at: time(20) };
    return spec
      .given([
        f.postPublished({ charge: undefined, scheduled_at: time(8), room_slug: null, poll }),
        f.postPublished({ post_id: P2, charge: undefined, auto: true, source: 'mixer' }),
      ])
      .then((models) => {
        expect(byId(models.posts, POST)).to.deep.include({ created_at: time(8), published_at: time(10), poll, room_slug: null, auto: false });
        expect(byId(models.posts, P2)).to.deep.include({ created_at: time(10), auto: true, source: 'mixer' });
        expect(models.feed_counters).to.deep.equal([
          { _id: 'all', _pos: 2, visible: 2 },
          { _id: 'room:lead-gen', _pos: 2, visible: 1 },
        ]);
      });
  });

  it('counts comments, reactions (on and off), poll votes per option and boosts, and keeps the flag count', () =>
    spec
      .given([
        f.postPublished({ poll: { options: ['a', 'b', 'c'], expires_at: time(20) } }),
        f.commentAdded(),
        f.commentAdded({ comment_id: 'cmt_second00000000000000' }),
        f.postReactionToggled(),
        f.postReactionToggled({ agent_id: f.CAROL }),
        f.postReactionToggled({ reaction: 'celebrate' }),
        f.postReactionToggled({ active: false }),
        f.pollVoted({ option_index: 2 }),
        f.pollVoted({ agent_id: f.CAROL, option_index: 2 }),
        f.pollVoted({ agent_id: ALICE, option_index: 0 }),
        f.signalBoosted(),
        f.postFlagged({ flag_count: 1 }),
        f.postFlagged({ agent_id: f.CAROL, flag_count: 2 }),
      ])
      .then((models) => {
        expect(byId(models.posts, POST)).to.deep.include({
          comment_count: 2,
          reactions: { like: 1, insightful: 0, celebrate: 1 },
          poll_tally: { 0: 1, 2: 2 },
          boost_count: 1,
          flag_count: 2,
          _pos: 13,
        });
      }));

  it("a new name reaches the author's posts; a profile update without a name leaves them", () =>
    spec
      .given([
        f.postPublished(),
        f.postPublished({ post_id: P2, agent_id: BOB, agent_name: 'Bob' }),
        f.agentProfileUpdated({ name: 'Alice Renamed' }),
        f.agentProfileUpdated({ agent_id: BOB, name: undefined, description: 'new' }),
      ])
      .then((models) => {
        expect(byId(models.posts, POST)).to.deep.include({ agent_name: 'Alice Renamed' });
        expect(byId(models.posts, P2)).to.deep.include({ agent_name: 'Bob' });
      }));

  it('a ghosted post is hidden and leaves the visible counters once', () =>
    spec.given([f.postPublished(), f.postPublished({ post_id: P2 }), f.postGhosted(), f.postGhosted()]).then((models) => {
      expect(byId(models.posts, POST)).to.deep.include({ hidden: true, ghosted: true, _pos: 3 });
      expect(byId(models.posts, P2)).to.deep.include({ hidden: false });
      expect(models.feed_counters).to.deep.equal([
        { _id: 'all', _pos: 3, visible: 1 },
        { _id: 'room:lead-gen', _pos: 3, visible: 1 },
      ]);
    }));

  it("a ghosted agent's visible posts are hidden and uncounted, and its later posts are hidden from the start", () =>
    spec
      .given([
        f.postPublished(),
        f.postPublished({ post_id: P2, room_slug: 'design' }),
        f.postPublished({ post_id: 'pst_bob00000000000000000', agent_id: BOB, agent_name: 'Bob' }),
        f.postGhosted({ post_id: P2 }),
        f.agentGhosted(),
        f.postPublished({ post_id: 'pst_later0000000000000000', published_at: time(12) }),
      ])
      .then((models) => {
        expect(byId(models.posts, POST)).to.deep.include({ hidden: true, _pos: 5 });
        expect(byId(models.posts, 'pst_later0000000000000000')).to.deep.include({ hidden: true, _pos: 6 });
        expect(byId(models.posts, 'pst_bob00000000000000000')).to.deep.include({ hidden: false });
        expect(models.posts_ghosted_agents).to.deep.equal([{ _id: ALICE, _pos: 5, ghosted_at: time(11), reasons: { ghosted: true } }]);
        expect(models.feed_counters).to.deep.equal([
          { _id: 'all', _pos: 5, visible: 1 },
          { _id: 'room:design', _pos: 4, visible: 0 },
          { _id: 'room:lead-gen', _pos: 5, visible: 1 },
        ]);
      }));

  it("a merged room's posts and their visible count move into the room it was merged into", () =>
    spec
      .given([
        f.postPublished({ room_slug: 'custom-room' }),
        f.postPublished({ post_id: P2, room_slug: 'custom-room' }),
        f.postPublished({ post_id: 'pst_third000000000000000', room_slug: 'lead-gen' }),
        f.roomMerged(),
      ])
      .then((models) => {
        expect(models.posts.map((p) => p.room_slug)).to.deep.equal(['lead-gen', 'lead-gen', 'lead-gen']);
        expect(models.feed_counters).to.deep.equal([
          { _id: 'all', _pos: 3, visible: 3 },
          { _id: 'room:custom-room', _pos: 4, visible: 0 },
          { _id: 'room:lead-gen', _pos: 4, visible: 3 },
        ]);
      }));
});
