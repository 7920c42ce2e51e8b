import type { Agenda } from 'agenda';
import { expireImage, IMAGE_UNREFERENCED_TTL_MS } from '../../commands/feed/image.ts';
import { unreferencedImagesBefore } from '../../queries/feed/images.ts';
import type { WorkerDeps } from '../deps.ts';

export type ImageDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'runner' | 'store' | 'blobs' | 'logger'>;

export const IMAGE_JOBS = { expire: 'feed.expire-unreferenced-images' } as const;

const PAGE = 200;

/**
 * Unreferenced images expire: every hour (and once at start) each image that no post or comment
 * references a day after its upload gets ImageExpired (its size leaves the agent's quota) and its
 * bytes are deleted. Time is the injected clock's.
 */
export function defineImageJobs(s: ImageDeps, agenda: Agenda) {
  const expire = async (): Promise<number> => {
    let expired = 0;
    for (;;) {
      const now = s.clock.now();
      const due = await unreferencedImagesBefore(s.store, new Date(now.getTime() - IMAGE_UNREFERENCED_TTL_MS), PAGE);
      let progressed = 0;
      for (const d of due) {
        const r = await expireImage(
          s.bus,
          { agent_id: d.agent_id as string, image_id: d._id, referenced: d.referenced === true, uploaded_at: d.created_at as string },
          { commandId: `expire-image:${d._id}`, actor: 'system:images', requestId: null, now },
        );
        if (r.expired) {
          await s.runner.waitFor(r.position);
          progressed++;
        }
        // Deleted after the event: bytes without an event are harmless, an event without bytes is what expiry means.
        await s.blobs.delete(d._id);
      }
      expired += progressed;
      if (due.length < PAGE || progressed === 0) return expired;
    }
  };
  agenda.define(IMAGE_JOBS.expire, async () => {
    await expire();
  });
  return { expire };
}
