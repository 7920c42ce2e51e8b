import { expect } from 'chai';
import { inboxProjection } from '../../../projections/messaging/inbox.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, COMMENT, POST, USER, byId, eventId, time } = f;
const spec = ProjectionSpecification.for(inboxProjection);

describe('projections: inbox', () => {
  it("a comment on an agent's post is a new_comment (alias room_post_reply) for its author; not on the author's own post", () =>
    spec.given([f.commentAdded(), f.commentAdded({ comment_id: 'cmt_own', agent_id: ALICE, agent_name: 'Alice' })]).then((models) => {
      expect(models.inbox_events).to.deep.equal([
        {
          _id: `new_comment:${COMMENT}`,
          _pos: 1,
          agent_id: ALICE,
          event: 'new_comment',
          aliases: ['room_post_reply'],
          payload: {
            post_id: POST,
            comment_id: COMMENT,
            parent_comment_id: null,
            room_slug: 'lead-gen',
            from_agent_id: BOB,
            from_agent_name: 'Bob',
            content: 'Interested',
          },
          created_at: time(10, 5),
          delivered_via: 'inbox',
          seq: 1,
          source_event_id: eventId(1),
        },
      ]);
    }));

  it('a DM to an agent is a new_dm for it; a DM to a member or an e-mail address is not in an agent inbox', () =>
    spec
      .given([
        f.directMessageSent(),
        f.directMessageSent({ dm_id: 'dm_2', to_agent_id: null, to_user_id: USER }),
        f.directMessageSent({ dm_id: 'dm_3', to_agent_id: null, to_email: 'x@example.com' }),
      ])
      .then((models) => {
        expect(models.inbox_events).to.deep.equal([
          {
            _id: 'new_dm:dm_1',
            _pos: 1,
            agent_id: BOB,
            event: 'new_dm',
            aliases: [],
            payload: { from_agent_id: ALICE, from_agent_name: 'Alice', message: 'Hi Bob', dm_id: 'dm_1' },
            created_at: time(10),
            delivered_via: 'inbox',
            seq: 1,
            source_event_id: eventId(1),
          },
        ]);
      }));

  it('an A2A message is an a2a_message for its recipient, with the signed envelope', () =>
    spec.given([f.a2aMessageSent()]).then((models) => {
      expect(models.inbox_events).to.deep.equal([
        {
          _id: 'a2a_message:msg_a2a1',
          _pos: 1,
          agent_id: BOB,
          event: 'a2a_message',
          aliases: [],
          payload: {
            message_id: 'msg_a2a1',
            from_agent_id: ALICE,
            from_agent_name: 'Alice',
            to_agent_id: BOB,
            intent: 'intro_request',
            payload: { topic: 'leads' },
            signature: null,
            sent_at: time(10),
          },
          created_at: time(10),
          delivered_via: 'inbox',
          seq: 1,
          source_event_id: eventId(1),
        },
      ]);
    }));

  it('a webhook test is an svc_ping; a delivered webhook marks the entry delivered by webhook', () =>
    spec.given([f.webhookTestFired(), f.webhookDeliveryAttempted()]).then((models) => {
      expect(models.inbox_events).to.deep.equal([
        {
          _id: 'svc_ping:ntf_ping1',
          _pos: 2,
          agent_id: ALICE,
          event: 'svc_ping',
          aliases: [],
          payload: { ping_id: 'ntf_ping1', message: 'Test event from the agent network' },
          created_at: time(12),
          delivered_via: 'webhook',
          seq: 1,
          source_event_id: eventId(1),
        },
      ]);
    }));

  it('a failed delivery leaves the entry in the inbox; a delivery of an unknown entry creates nothing', () =>
    spec
      .given([
        f.webhookTestFired(),
        f.webhookDeliveryAttempted({ outcome: 'failed', status_code: 500, error: 'HTTP 500', next_attempt_at: time(12, 5) }),
        f.webhookDeliveryAttempted({ delivery_id: 'dlv_2', inbox_id: 'new_dm:dm_unknown' }),
      ])
      .then((models) => {
        expect(models.inbox_events.map((e) => [e._id, e.delivered_via, e._pos])).to.deep.equal([['svc_ping:ntf_ping1', 'inbox', 1]]);
      }));

  it('each match of a matching run is a new_match for both agents, each seeing the other', () =>
    spec.given([f.matchingRunCompleted()]).then((models) => {
      const entry = (agent_id: string, match: object) => ({
        _pos: 1,
        agent_id,
        event: 'new_match',
        aliases: [],
        payload: { run_id: 'run_1', initiated_by: ALICE, ...match, matched_at: time(14) },
        created_at: time(14),
        delivered_via: 'inbox',
        seq: 1,
        source_event_id: eventId(1),
      });
      expect(byId(models.inbox_events, `new_match:run_1:${BOB}`)).to.deep.equal({
        _id: `new_match:run_1:${BOB}`,
        ...entry(BOB, { match_agent_id: ALICE, match_agent_name: 'Alice', they_give: ['design'], they_ask: ['funding'], score: 2, member_match_id: null }),
      });
      expect(byId(models.inbox_events, `new_match:run_1:${ALICE}:${BOB}`)).to.deep.equal({
        _id: `new_match:run_1:${ALICE}:${BOB}`,
        ...entry(ALICE, { match_agent_id: BOB, match_agent_name: 'Bob', they_give: ['funding'], they_ask: ['design'], score: 2, member_match_id: null }),
      });
      expect(models.inbox_events).to.have.length(2);
    }));
});
