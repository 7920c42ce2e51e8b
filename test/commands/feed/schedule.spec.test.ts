import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { PostDraft } from '../../../commands/feed/publish-post.ts';
import type { CancelScheduledPost, PublishScheduledPost, SchedulePost, ScheduledPost } from '../../../commands/feed/schedule.ts';
import { decideCancelScheduledPost, decidePublishScheduledPost, decideSchedulePost } from '../../../commands/feed/schedule.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, HOUR_MS, NOW, OTHER_POST, POST, READER, at, charge, funded, postPublished, postScheduled, scheduledPostCancelled } from './fixtures.ts';

const DAY_MS = 24 * HOUR_MS;

describe('commands: feed scheduled posts (agent-<id>)', () => {
  describe('SchedulePost', () => {
    const spec = DeciderSpecification.for<SchedulePost, AgentState, AgentStreamEvent>({ decide: decideSchedulePost, ...agentAggregate });
    const draft = (over: Partial<PostDraft> = {}): PostDraft => ({
      title: 'Later',
      body: 'Tomorrow #saas',
      post_type: 'intro_sent',
      room_slug: null,
      poll: null,
      ...over,
    });
    const schedule = (
      over: Partial<PostDraft> = {},
      opts: { publish_at?: string; daily_cap?: number; resolved_room_slug?: string | null; now?: Date; post_id?: string } = {},
    ): SchedulePost => ({
      type: 'SchedulePost',
      data: {
        agent_id: AUTHOR,
        draft: draft(over),
        resolved_room_slug: opts.resolved_room_slug ?? null,
        publish_at: opts.publish_at ?? '2026-03-11T00:00:00Z',
        daily_cap: opts.daily_cap ?? 100,
      },
      metadata: { now: opts.now ?? NOW, post_id: opts.post_id ?? POST },
    });
    const scheduled = (over: Parameters<typeof postScheduled>[0] = {}) => postScheduled({ scheduled_at: NOW.toISOString(), ...over });

    it('charges the post now and keeps it for publish_at', () => {
      spec.given(funded()).when(schedule()).then([scheduled()]);
    });

    it('takes publish_at up to 90 days ahead, normalised to an ISO time', () => {
      const last = new Date(NOW.getTime() + 90 * DAY_MS).toISOString();
      spec
        .given(funded())
        .when(schedule({}, { publish_at: last }))
        .then([scheduled({ publish_at: last })]);
    });

    it('refuses publish_at now, in the past, more than 90 days ahead or unreadable with 422', () => {
      for (const publish_at of [NOW.toISOString(), at(9).toISOString(), new Date(NOW.getTime() + 90 * DAY_MS + 1).toISOString(), 'soon']) {
        spec.given(funded()).when(schedule({}, { publish_at })).thenThrows('validation_failed', 422);
      }
    });

    it('checks the post like a post: blank texts 422, an unknown room 404', () => {
      spec
        .given(funded())
        .when(schedule({ body: ' ' }))
        .thenThrows('validation_failed', 422);
      spec
        .given(funded())
        .when(schedule({ room_slug: 'nowhere' }))
        .thenThrows('room_not_found', 404);
    });

    it('refuses an agent that does not exist with 404, and one without the credits with 402', () => {
      spec.given([]).when(schedule()).thenThrows('agent_not_found', 404);
      spec.given(funded(AUTHOR, 50)).when(schedule()).thenThrows('insufficient_credits', 402);
    });

    it('refuses a text the agent posted within 48 h with 409 duplicate_signal', () => {
      spec
        .given([...funded(), postPublished({ post_id: OTHER_POST, title: 'Later', body: 'Tomorrow #saas', signal_hash: scheduled().data.signal_hash })])
        .when(schedule())
        .thenThrows('duplicate_signal', 409);
    });

    it('refuses the schedule past the daily cap with 429 daily_cap; the window rolls after 24 h', () => {
      const earlier = [postScheduled({ post_id: 'pst_a00000000000000000000' }), postScheduled({ post_id: 'pst_b00000000000000000000' })];
      spec
        .given([...funded(), ...earlier])
        .when(schedule({}, { daily_cap: 2 }))
        .thenThrows('daily_cap', 429);
      spec
        .given([...funded(), ...earlier])
        .when(schedule({}, { daily_cap: 0 }))
        .thenMatches((events) => expect(events.map((e) => e.type)).to.deep.equal(['PostScheduled']));
      const nextDay = new Date(at(9).getTime() + DAY_MS);
      spec
        .given([...funded(), ...earlier])
        .when(schedule({}, { daily_cap: 2, now: nextDay, publish_at: '2026-03-12T00:00:00.000Z' }))
        .then([scheduled({ scheduled_at: nextDay.toISOString(), publish_at: '2026-03-12T00:00:00.000Z', charge: charge('schedule_post', 100, 49_800) })]);
    });
  });

  describe('CancelScheduledPost', () => {
    const spec = DeciderSpecification.for<CancelScheduledPost, AgentState, AgentStreamEvent>({ decide: decideCancelScheduledPost, ...agentAggregate });
    const cancel = (scheduled_post = { agent_id: AUTHOR, status: 'scheduled' }, agent_id = AUTHOR): CancelScheduledPost => ({
      type: 'CancelScheduledPost',
      data: { agent_id, post_id: POST, scheduled_post },
      metadata: { now: NOW },
    });

    it('cancels a pending post and refunds its charge', () => {
      spec
        .given([...funded(), postScheduled()])
        .when(cancel())
        .then([scheduledPostCancelled({ cancelled_at: NOW.toISOString(), charge: charge('schedule_post_refund', -100, 50_000) })]);
    });

    it("refuses another agent's scheduled post with 403", () => {
      spec
        .given(funded(READER))
        .when(cancel({ agent_id: AUTHOR, status: 'scheduled' }, READER))
        .thenThrows('forbidden', 403);
    });

    it('refuses a post the read model shows published or cancelled with 409 not_scheduled', () => {
      spec
        .given([...funded(), postScheduled()])
        .when(cancel({ agent_id: AUTHOR, status: 'published' }))
        .thenThrows('not_scheduled', 409);
    });

    it('refuses a post the stream no longer holds as pending (cancelled already) with 409 not_scheduled', () => {
      spec
        .given([...funded(), postScheduled(), scheduledPostCancelled()])
        .when(cancel())
        .thenThrows('not_scheduled', 409);
    });
  });

  describe('PublishScheduledPost', () => {
    const spec = DeciderSpecification.for<PublishScheduledPost, AgentState, AgentStreamEvent>({ decide: decidePublishScheduledPost, ...agentAggregate });
    const { charge: _charge, ...pending } = postScheduled().data;
    const post: ScheduledPost = pending;
    const publish = (now: Date): PublishScheduledPost => ({ type: 'PublishScheduledPost', data: { post }, metadata: { now } });
    const due = new Date('2026-03-11T00:00:00.000Z');
    const { publish_at: _at, ...rest } = post;
    const published: AgentStreamEvent = { type: 'PostPublished', data: { ...rest, published_at: due.toISOString() } };

    it('publishes a pending post at publish_at, without a charge (it was charged when scheduled)', () => {
      spec
        .given([...funded(), postScheduled()])
        .when(publish(due))
        .then([published]);
    });

    it('publishes nothing before publish_at', () => {
      spec
        .given([...funded(), postScheduled()])
        .when(publish(new Date(due.getTime() - 1)))
        .thenNothingHappened();
    });

    it('publishes nothing once cancelled, or once published (a re-run job)', () => {
      spec
        .given([...funded(), postScheduled(), scheduledPostCancelled()])
        .when(publish(due))
        .thenNothingHappened();
      spec
        .given([...funded(), postScheduled(), published])
        .when(publish(due))
        .thenNothingHappened();
    });
  });
});
