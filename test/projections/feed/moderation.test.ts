import { expect } from 'chai';
import { moderationProjection } from '../../../projections/feed/moderation.ts';
import { postsProjection } from '../../../projections/feed/posts.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, CAROL, POST, time } = f;
const queue = ProjectionSpecification.for(moderationProjection);
const posts = ProjectionSpecification.for(postsProjection);

describe('projections: moderation queue and restores', () => {
  it('queues a flagged post with each flag and its weight; a withdrawal of the only flag takes it out', () =>
    queue
      .given([f.postFlagged({ agent_id: BOB, weight: 'unclaimed', counting_count: 0 }), f.postFlagWithdrawn({ agent_id: BOB, flag_count: 0 })])
      .then((models) => {
        const [item] = models.moderation_items;
        expect(item).to.include({ _id: `post:${POST}`, item_kind: 'post', state: 'withdrawn', open: false, flag_count: 0, counting_count: 0 });
        expect(item.flags).to.deep.equal([{ agent_id: BOB, reason: null, weight: 'unclaimed', flagged_at: time(10, 9), withdrawn_at: time(10, 11) }]);
      }));

  it('a hidden post waits as hidden, then appealed; a restore closes it and spends the flags', () =>
    queue
      .given([
        f.postFlagged({ agent_id: BOB }),
        f.postFlagged({ agent_id: CAROL, flag_count: 2 }),
        f.postGhosted(),
        f.moderationAppealed(),
        f.moderationDecided({ decision: 'restore', hidden: false, spent: [BOB, CAROL], appeal: true }),
      ])
      .then((models) => {
        const [item] = models.moderation_items;
        expect(item).to.include({ state: 'restored', open: false, hidden: false, flag_count: 2, counting_count: 0, seq: 1 });
        expect(item.spent).to.deep.equal([BOB, CAROL]);
        expect(item.appeal).to.include({ message: 'This was a real offer', decision: 'restore' });
        expect(item.decisions).to.have.length(1);
      }));

  it('a restored post is back in the feed and its counters; an upheld one leaves them', () =>
    posts.given([f.postPublished({ room_slug: 'lead-gen' }), f.postGhosted(), f.moderationDecided({ decision: 'restore', hidden: false })]).then((models) => {
      expect(models.posts[0]).to.include({ hidden: false, ghosted: false });
      expect(models.feed_counters.find((c) => c._id === 'all')).to.include({ visible: 1 });
      expect(models.feed_counters.find((c) => c._id === 'room:lead-gen')).to.include({ visible: 1 });
    }));

  it("a restored agent's posts come back, but not while it is also banned", () =>
    posts
      .given([
        f.postPublished(),
        f.agentGhosted(),
        f.agentBanned({ agent_id: ALICE }),
        f.moderationDecided({ item_kind: 'agent', item_id: ALICE, author_agent_id: ALICE, decision: 'restore', hidden: false }),
      ])
      .then((models) => {
        expect(models.posts[0]).to.include({ hidden: true });
        expect(models.posts_ghosted_agents[0].reasons).to.deep.equal({ banned: true });
        expect(models.feed_counters.find((c) => c._id === 'all')).to.include({ visible: 0 });
      }));
});
