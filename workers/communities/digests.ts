import { circleUserState, DIGEST_ITEMS, digestPeriodOf, produceCircleDigest } from '../../commands/communities/circle-user.ts';
import { sealMail } from '../../commands/humans/mail.ts';
import { circleNames, nextMemberWithUnread, unreadNotificationsAfter } from '../../queries/communities/digests.ts';
import { getUser } from '../../queries/humans/users.ts';
import type { WorkerDeps } from '../deps.ts';

/** What the digest job uses of the composition root. */
export type CircleDigestDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'config' | 'runner' | 'secrets' | 'store'>;

export const CIRCLE_DIGEST_JOB = 'communities.circle-digests';

/**
 * One member's digest for the period of `now`, when their setting asks for one (weekly: on Mondays), none was produced
 * for this period yet, and something is unread since the last one. The command id names the member
 * and period and the decider refuses a second digest of a period, so a restart, a retry or two
 * workers produce it once. Returns whether a digest was produced.
 */
export async function digestFor(s: CircleDigestDeps, userId: string, now: Date): Promise<boolean> {
  const state = await circleUserState(s.bus, userId);
  const frequency = state.settings.digest;
  if (frequency === 'none') return false;
  const period = digestPeriodOf(now, frequency);
  // Weekly digests go out on the weekly day's run only, not caught up later in the week.
  if (frequency === 'weekly' && period !== digestPeriodOf(now, 'daily')) return false;
  if (state.last_digest && state.last_digest.period >= period) return false;
  const after = state.last_digest?.through_position ?? 0;
  const unread = await unreadNotificationsAfter(s.store, userId, after, DIGEST_ITEMS);
  const newest = unread.items[0];
  if (unread.count === 0 || !newest) return false;
  const user = await getUser(s.store, userId);
  if (typeof user?.email !== 'string') return false;
  const names = await circleNames(
    s.store,
    unread.items.map((n) => String(n.circle_id)),
  );
  const ctx = { commandId: `circle-digest:${userId}:${frequency}:${period}`, actor: 'system:circle-digests', requestId: null, now };
  const mail = sealMail(s.secrets, ctx, 'circle-digest', 'circle_digest', user.email, {
    full_name: String(user.full_name ?? ''),
    frequency,
    unread_count: unread.count,
    items: unread.items.map((n) => ({
      kind: String(n.kind),
      actor_name: String(n.actor_name ?? ''),
      circle_name: names.get(String(n.circle_id)) ?? 'a circle',
      text: String(n.text ?? ''),
      at: String(n.created_at),
    })),
    settings_url: `${s.config.publicBaseUrl}/api/brew-circles/settings/notifications`,
  });
  const r = await produceCircleDigest(
    s.bus,
    {
      user_id: userId,
      frequency,
      period,
      unread: { notification_ids: unread.items.map((n) => n._id), count: unread.count, after_position: after, through_position: Number(newest.seq) },
      mail,
    },
    ctx,
  );
  if (r.events.length === 0 || r.duplicate) return false;
  await s.runner.waitFor(r.position, 10_000);
  return true;
}

/**
 * The digest run of the clock's `now`: every member with an unread circle notification, in user
 * id order (index-served, one member at a time). Returns the digests produced.
 */
export async function produceCircleDigests(s: CircleDigestDeps): Promise<number> {
  const now = s.clock.now();
  let produced = 0;
  for (let userId = await nextMemberWithUnread(s.store, ''); userId !== null; userId = await nextMemberWithUnread(s.store, userId))
    if (await digestFor(s, userId, now)) produced++;
  return produced;
}

/**
 * The job's body, checked every 5 minutes: a run per daily period (from DIGEST_HOUR_UTC), weekly
 * members served on Mondays. The period of the last complete run is remembered in the process only:
 * after a start the first check runs again, and finds done what was done (the decider's rule).
 */
export function circleDigestJob(s: CircleDigestDeps): () => Promise<number | null> {
  let done: string | null = null;
  return async () => {
    const period = digestPeriodOf(s.clock.now(), 'daily');
    if (done === period) return null;
    const produced = await produceCircleDigests(s);
    done = period;
    return produced;
  };
}
