import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { AddComment } from '../../../commands/feed/comment.ts';
import { decideAddComment } from '../../../commands/feed/comment.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, COMMENT, NOW, POST, READER, charge, commentAdded, funded } from './fixtures.ts';

describe('commands: feed AddComment (agent-<id>)', () => {
  const spec = DeciderSpecification.for<AddComment, AgentState, AgentStreamEvent>({ decide: decideAddComment, ...agentAggregate });
  const NEW_COMMENT = 'cmt_new000000000000000000';
  const TOP = 'cmt_top000000000000000000';
  const comment = (reply_to: AddComment['data']['reply_to'] = null): AddComment => ({
    type: 'AddComment',
    data: { agent_id: READER, post_id: POST, post_author_id: AUTHOR, post_room_slug: 'lead-gen', content: 'Interested', reply_to },
    metadata: { now: NOW, comment_id: NEW_COMMENT },
  });
  const added = (over: Parameters<typeof commentAdded>[0] = {}) =>
    commentAdded({ comment_id: NEW_COMMENT, post_room_slug: 'lead-gen', created_at: NOW.toISOString(), ...over });

  it("adds a top-level comment for 0.1, charged on the commenter's stream", () => {
    spec
      .given(funded(READER))
      .when(comment())
      .then([added({ charge: charge('comment', 100, 49_900) })]);
  });

  it('attaches a reply to a top-level comment under that comment', () => {
    spec
      .given(funded(READER))
      .when(comment({ comment_id: COMMENT, parent_comment_id: null }))
      .then([added({ parent_comment_id: COMMENT, reply_to_comment_id: COMMENT, charge: charge('reply', 100, 49_900) })]);
  });

  it('attaches a reply to a reply under the top-level comment, keeping the comment answered', () => {
    spec
      .given(funded(READER))
      .when(comment({ comment_id: COMMENT, parent_comment_id: TOP }))
      .then([added({ parent_comment_id: TOP, reply_to_comment_id: COMMENT, charge: charge('reply', 100, 49_900) })]);
  });

  it('refuses an agent that does not exist with 404, and one without the credits with 402', () => {
    spec.given([]).when(comment()).thenThrows('agent_not_found', 404);
    spec.given(funded(READER, 99)).when(comment()).thenThrows('insufficient_credits', 402);
  });
});
