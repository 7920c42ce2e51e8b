import type { Static } from '@sinclair/typebox';
import type { Context } from 'koa';
import type Router from '@koa/router';
import { markCircleNotificationsRead, notificationSettings, setNotificationSettings } from '../../../commands/communities/circle-user.ts';
import { DIGESTS } from '../../../events/communities.ts';
import { INDUSTRIES } from '../../../events/social.ts';
import { circleNotifications, notificationView } from '../../../queries/communities/circles.ts';
import { getMember, memberView } from '../../../queries/social/members.ts';
import { mount, operations, queryOf } from '../../operations.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { validate } from '../../validation.ts';
import { doneTo, formField, page, problemOf, requireMember, webRouter } from '../../web/member.ts';
import { FORM, formOf, MEMBER_FORM, MEMBER_PAGE } from '../../web/page-operations.ts';
import { MarkBrewNotificationsRequest, NotificationSettingsRequest, skipLimit } from '../communities/circles.ts';
import { profileSchema, updateOwnProfile, type ProfileChanges } from '../social/members.ts';
import { commandContext, settled } from '../util.ts';

const text = (max: number) => ({ type: 'string', maxLength: max });
const SETTINGS = ['mentions', 'replies', 'reactions', 'join_requests'] as const;
const PAGE_SIZE = 20;

/** The member's profile, notifications and notification settings in the browser (docs/WEB.md). */
export const myProfileOperations = operations({
  getAppProfile: {
    method: 'GET',
    path: '/app/profile',
    summary: "The member's profile (what other members see)",
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  postAppProfile: {
    method: 'POST',
    path: '/app/profile',
    summary: "Change the member's profile (the command of PATCH /api/auth/me)",
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf(
      {
        full_name: text(100),
        headline: text(120),
        bio: text(1000),
        industry: text(40),
        region: text(2),
        gives: { type: 'string', maxLength: 1000, description: 'Capability slugs, separated by commas' },
        asks: { type: 'string', maxLength: 1000, description: 'Capability slugs, separated by commas' },
        discoverable: { type: 'string', enum: ['on'], description: 'Present (checked) to be listed in the member directory' },
      },
      ['full_name'],
    ),
    responses: MEMBER_FORM,
  },
  getAppNotifications: {
    method: 'GET',
    path: '/app/notifications',
    summary: "The member's notifications, newest first, and their settings",
    tags: ['app'],
    auth: 'member',
    query: queryOf('skip'),
    responses: MEMBER_PAGE,
  },
  postAppNotificationsRead: {
    method: 'POST',
    path: '/app/notifications/read',
    summary: 'Mark one notification read, or all (the command of POST /api/brew-circles/notifications/read)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ notification_id: { type: 'string', maxLength: 64, description: 'The one to mark read; all when left out' } }),
    rateLimit: LIMITS.writes,
    responses: MEMBER_FORM,
  },
  postAppNotificationsSettings: {
    method: 'POST',
    path: '/app/notifications/settings',
    summary: 'Change the notification settings (the command of PUT /api/brew-circles/settings/notifications)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({
      mentions: { type: 'string', enum: ['on'] },
      replies: { type: 'string', enum: ['on'] },
      reactions: { type: 'string', enum: ['on'] },
      join_requests: { type: 'string', enum: ['on'] },
      digest: { type: 'string', enum: [...DIGESTS] },
    }),
    rateLimit: LIMITS.writes,
    responses: MEMBER_FORM,
  },
});

/** What a notification is about, in words (its `kind`). */
const KIND_WORDS: Record<string, string> = {
  mention: 'mentioned you',
  reply: 'replied',
  reaction: 'reacted',
  join_request: 'asked to join a circle',
  join_request_approved: 'approved your join request',
  join_request_rejected: 'declined your join request',
};

/** A time as people read it: `2026-03-10 09:46 UTC`. */
const whenText = (iso: unknown) => (typeof iso === 'string' && iso.length >= 16 ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '');

/** Capability slugs typed as a comma-separated list. */
const slugList = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

export function myProfileRoutes(router: Router, s: Services): void {
  const web = webRouter(s);

  const profilePage = async (ctx: Context, userId: string, data: { values?: Record<string, unknown>; problem?: unknown } = {}, status = 200) => {
    const doc = await getMember(s.store, userId);
    const current = doc ? { ...memberView(doc), discoverable: doc.discoverable === true } : null;
    const values = data.values ?? {
      full_name: current?.full_name ?? '',
      headline: current?.headline ?? '',
      bio: current?.bio ?? '',
      industry: current?.industry ?? '',
      region: current?.region ?? '',
      gives: (current?.gives ?? []).join(', '),
      asks: (current?.asks ?? []).join(', '),
      discoverable: current?.discoverable ?? false,
    };
    await page(s, ctx, 'app/profile', { title: 'Your profile', values, industries: INDUSTRIES, problem: data.problem ?? null }, status);
  };

  mount(web, myProfileOperations.getAppProfile, async (ctx) => {
    const member = await requireMember(s, ctx);
    await profilePage(ctx, member.userId);
  });

  mount(web, myProfileOperations.postAppProfile, async (ctx) => {
    const member = await requireMember(s, ctx);
    const values = {
      full_name: formField(ctx, 'full_name').trim(),
      headline: formField(ctx, 'headline'),
      bio: formField(ctx, 'bio'),
      industry: formField(ctx, 'industry'),
      region: formField(ctx, 'region').trim(),
      gives: formField(ctx, 'gives'),
      asks: formField(ctx, 'asks'),
      discoverable: formField(ctx, 'discoverable') === 'on',
    };
    try {
      const changes = validate<ProfileChanges>(profileSchema, {
        full_name: values.full_name,
        headline: values.headline,
        bio: values.bio,
        industry: values.industry || null,
        region: values.region || null,
        gives: slugList(values.gives),
        asks: slugList(values.asks),
        discoverable: values.discoverable,
      });
      await updateOwnProfile(s, ctx, member.userId, changes);
    } catch (err) {
      const problem = problemOf(err);
      if (!problem || problem.status >= 500) throw err;
      return profilePage(ctx, member.userId, { values, problem }, problem.status);
    }
    doneTo(ctx, '/app/profile', 'Your profile was saved.');
  });

  mount(web, myProfileOperations.getAppNotifications, async (ctx) => {
    const member = await requireMember(s, ctx);
    const { skip } = skipLimit(ctx.query, { limit: PAGE_SIZE, max: PAGE_SIZE });
    const [res, settings] = await Promise.all([
      circleNotifications(s.store, member.userId, { skip, limit: PAGE_SIZE + 1 }),
      notificationSettings(s.bus, member.userId),
    ]);
    const notifications = res.items.slice(0, PAGE_SIZE).map((d) => {
      const n = notificationView(d);
      return { ...n, what: KIND_WORDS[String(n.kind)] ?? '', when: whenText(n.created_at) };
    });
    await page(s, ctx, 'app/notifications', {
      title: 'Notifications',
      notifications,
      unread: res.unread,
      settings,
      digests: DIGESTS,
      newer: skip > 0 ? Math.max(0, skip - PAGE_SIZE) : null,
      older: res.items.length > PAGE_SIZE ? skip + PAGE_SIZE : null,
    });
  });

  mount(web, myProfileOperations.postAppNotificationsRead, async (ctx) => {
    const member = await requireMember(s, ctx);
    s.limiter.hit(LIMITS.writes, member.userId, ctx);
    const one = formField(ctx, 'notification_id');
    const body = validate<Static<typeof MarkBrewNotificationsRequest>>(MarkBrewNotificationsRequest, one ? { notification_ids: [one] } : {});
    const res = await markCircleNotificationsRead(
      s.bus,
      { user_id: member.userId, notification_ids: body.notification_ids ?? null },
      commandContext(s, ctx, member.userId),
    );
    await settled(s, res.position);
    doneTo(ctx, '/app/notifications', one ? 'Marked read.' : 'All notifications marked read.');
  });

  mount(web, myProfileOperations.postAppNotificationsSettings, async (ctx) => {
    const member = await requireMember(s, ctx);
    s.limiter.hit(LIMITS.writes, member.userId, ctx);
    const raw: Record<string, unknown> = Object.fromEntries(SETTINGS.map((name) => [name, formField(ctx, name) === 'on']));
    const digest = formField(ctx, 'digest');
    if (digest) raw.digest = digest;
    const settings = validate<Static<typeof NotificationSettingsRequest>>(NotificationSettingsRequest, raw);
    const res = await setNotificationSettings(s.bus, { user_id: member.userId, settings }, commandContext(s, ctx, member.userId));
    await settled(s, res.position);
    doneTo(ctx, '/app/notifications', 'Your notification settings were saved.');
  });

  router.use(web.routes());
}
