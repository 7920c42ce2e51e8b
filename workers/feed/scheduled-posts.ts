import type { Agenda, Job } from 'agenda';
import type { WorkerDeps } from '../deps.ts';
import { publishScheduledPost } from '../../commands/feed/schedule.ts';
import type { PostScheduled } from '../../events/feed.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import type { Doc } from '../../projections/store/port.ts';
import { skipDeactivated } from '../../commands/agents/agent.ts';
import { dueScheduledPosts, getScheduledPost, pendingScheduledPosts } from '../../queries/feed/scheduling.ts';

/** What these jobs use of the composition root. */
export type ScheduledPostDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'runner' | 'store'>;

export const SCHEDULED_JOBS = {
  publish: 'feed.publish-scheduled-post',
  sweep: 'feed.scheduled-posts-sweep',
} as const;

const PAGE = 500;

function asScheduled(d: Doc): Omit<PostScheduled['data'], 'charge'> {
  return {
    post_id: d._id,
    agent_id: d.agent_id as string,
    agent_name: d.agent_name as string,
    title: d.title as string,
    body: d.body as string,
    post_type: d.post_type as PostScheduled['data']['post_type'],
    room_slug: (d.room_slug as string | null) ?? null,
    hashtags: d.hashtags as string[],
    poll: (d.poll as PostScheduled['data']['poll']) ?? null,
    signal_hash: d.signal_hash as string,
    publish_at: d.publish_at as string,
    scheduled_at: d.scheduled_at as string,
    ...(Array.isArray(d.mentions) && d.mentions.length ? { mentions: d.mentions as string[] } : {}),
  };
}

/**
 * Publication of scheduled posts. A reactor turns each PostScheduled into an Agenda job at its
 * publish_at; the job issues PublishScheduledPost. A sweep every 5 minutes (the spec's scheduler
 * period) and once at start publishes whatever is due from the read model and re-creates the jobs
 * of pending posts, so a lost job store loses nothing and a post is at most one period late.
 */
export function defineScheduledPostJobs(s: ScheduledPostDeps, agenda: Agenda) {
  const publish = async (postId: string): Promise<boolean> => {
    const doc = await getScheduledPost(s.store, postId);
    if (!doc || doc.status !== 'scheduled') return false;
    const now = s.clock.now();
    if (Date.parse(doc.publish_at as string) > now.getTime()) return false;
    // An agent deactivated after the read model was read: its posts are withdrawn, not published.
    const r = await publishScheduledPost(s.bus, asScheduled(doc), {
      commandId: `publish-scheduled:${postId}`,
      actor: 'system:scheduler',
      requestId: null,
      now,
    }).catch(skipDeactivated);
    if (r === null) return false;
    if (r.published) await s.runner.waitFor(r.position);
    return r.published;
  };

  const publishDue = async (): Promise<number> => {
    let published = 0;
    for (;;) {
      const due = await dueScheduledPosts(s.store, s.clock.now(), PAGE);
      let progressed = 0;
      for (const d of due) if (await publish(d._id)) progressed++;
      published += progressed;
      if (due.length < PAGE || progressed === 0) return published;
    }
  };

  const scheduleJob = (postId: string, agentId: string, at: string) =>
    agenda
      .create(SCHEDULED_JOBS.publish, { post_id: postId, agent_id: agentId })
      .unique({ name: SCHEDULED_JOBS.publish, 'data.post_id': postId })
      .schedule(new Date(at))
      .save();

  agenda.define(SCHEDULED_JOBS.publish, async (job: Job<{ post_id: string }>) => {
    await publish(job.attrs.data.post_id);
  });
  agenda.define(SCHEDULED_JOBS.sweep, async () => {
    await publishDue();
  });

  return {
    publish,
    publishDue,
    async resume() {
      await agenda.every('5 minutes', SCHEDULED_JOBS.sweep);
      await publishDue();
      let after = '';
      for (;;) {
        const pending = await pendingScheduledPosts(s.store, after, PAGE);
        for (const d of pending) await scheduleJob(d._id, d.agent_id as string, d.publish_at as string);
        const last = pending[pending.length - 1];
        if (pending.length < PAGE || !last) return;
        after = last.publish_at as string;
      }
    },
    async onEvent(e: RecordedEvent) {
      if (e.type !== 'PostScheduled') return;
      const d = e.data as PostScheduled['data'];
      await scheduleJob(d.post_id, d.agent_id, d.publish_at);
    },
  };
}
