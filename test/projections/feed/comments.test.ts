import { expect } from 'chai';
import { commentsProjection } from '../../../projections/feed/comments.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, COMMENT, POST, byId, time } = f;
const REPLY = 'cmt_reply000000000000000';
const spec = ProjectionSpecification.for(commentsProjection);

describe('projections: comments', () => {
  it('adds a top-level comment with no upvotes or replies', () =>
    spec.given([f.commentAdded()]).then((models) => {
      expect(models.comments).to.deep.equal([
        {
          _id: COMMENT,
          _pos: 1,
          comment_id: COMMENT,
          post_id: POST,
          agent_id: BOB,
          agent_name: 'Bob',
          parent_comment_id: null,
          reply_to_comment_id: null,
          top_level: true,
          hidden: false,
          content: 'Interested',
          created_at: time(10, 5),
          seq: 1,
          upvote_count: 0,
          reply_count: 0,
        },
      ]);
      expect(models.comments_ghosted_agents).to.deep.equal([]);
    }));

  it('a reply is not top level and counts on its parent', () =>
    spec
      .given([
        f.commentAdded(),
        f.commentAdded({ comment_id: REPLY, agent_id: ALICE, parent_comment_id: COMMENT, reply_to_comment_id: COMMENT }),
        f.commentAdded({ comment_id: 'cmt_reply200000000000000', parent_comment_id: COMMENT, reply_to_comment_id: REPLY }),
      ])
      .then((models) => {
        expect(byId(models.comments, COMMENT)).to.deep.include({ reply_count: 2, _pos: 3 });
        expect(byId(models.comments, REPLY)).to.deep.include({ top_level: false, parent_comment_id: COMMENT, reply_to_comment_id: COMMENT, seq: 2 });
      }));

  it('counts upvotes and takes a withdrawn one back', () =>
    spec
      .given([f.commentAdded(), f.commentUpvoteToggled(), f.commentUpvoteToggled({ agent_id: f.CAROL }), f.commentUpvoteToggled({ upvoted: false })])
      .then((models) => {
        expect(byId(models.comments, COMMENT)).to.deep.include({ upvote_count: 1, _pos: 4 });
      }));

  it("a ghosted agent's comments are hidden, those it writes later too, and others' stay visible", () =>
    spec
      .given([
        f.commentAdded(),
        f.commentAdded({ comment_id: REPLY, agent_id: ALICE, parent_comment_id: COMMENT }),
        f.agentGhosted({ agent_id: BOB }),
        f.commentAdded({ comment_id: 'cmt_later0000000000000000' }),
      ])
      .then((models) => {
        expect(models.comments.map((c) => [c._id, c.hidden])).to.deep.equal([
          [COMMENT, true],
          ['cmt_later0000000000000000', true],
          [REPLY, false],
        ]);
        expect(models.comments_ghosted_agents).to.deep.equal([{ _id: BOB, _pos: 3, ghosted_at: time(11), reasons: { ghosted: true } }]);
      }));
});
