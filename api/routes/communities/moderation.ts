import Router from '@koa/router';
import { moderateCircleContent } from '../../../commands/communities/circle-post.ts';
import { notFound } from '../../../events/kernel/errors.ts';
import { adminScope, communityAdmins, isSuper } from '../../../queries/communities/communities.ts';
import { mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { requireUser } from '../humans/auth.ts';
import { bool, obj, str } from '../schemas.ts';
import { commandContext, settled } from '../util.ts';

export const CircleModerationBody = typed<{ target_type: 'post' | 'reply'; target_id: string; action: 'hide' | 'restore'; note: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['target_type', 'target_id', 'action', 'note'],
  properties: {
    target_type: { type: 'string', enum: ['post', 'reply'] },
    target_id: { type: 'string', minLength: 1, maxLength: 64 },
    action: { type: 'string', enum: ['hide', 'restore'] },
    note: { type: 'string', minLength: 1, maxLength: 2000, pattern: '\\S' },
  },
});

export const circleModerationOperations = operations({
  postAdminCommunityAdminModeration: {
    method: 'POST',
    path: '/api/admin/community-admin/moderation',
    summary: 'Community admin: hide or restore a circle post or reply of your own community, with a note (audited)',
    tags: ['communities'],
    auth: 'bearer',
    body: CircleModerationBody,
    responses: {
      200: {
        schema: obj({ target_type: str, target_id: str, post_id: str, community_id: str, action: str, hidden: bool, by_user_id: str, note: str, at: str }),
      },
    },
    errors: [404, 409],
  },
});

/**
 * Community moderation (docs/MODERATION.md): an admin of the community a circle post belongs to
 * (or a super admin) hides or restores the post or one of its replies. One
 * `CircleContentModerated` on the post's stream; the audit log lists it.
 */
export function circleModerationRoutes(router: Router, s: Services): void {
  const r = new Router({ prefix: '/api/admin/community-admin' });
  mount(r, circleModerationOperations.postAdminCommunityAdminModeration, async (ctx, input) => {
    const caller = requireUser(ctx);
    // Authorisation before validation: only community admins (or super admins) go further.
    await adminScope(s.store, caller);
    const body = input.body;
    let postId = body.target_id;
    if (body.target_type === 'reply') {
      const reply = await s.store.collection('circle_replies').findOne({ _id: body.target_id }, { projection: { post_id: 1 } });
      if (!reply) throw notFound('Reply', 'circle_reply_not_found');
      postId = reply.post_id;
    }
    const post = await s.store.collection('circle_posts').findOne({ _id: postId }, { projection: { community_id: 1 } });
    if (!post) throw notFound('Circle post', 'circle_post_not_found');
    const communityId = post.community_id;
    const admins = (await communityAdmins(s.store, communityId)) ?? [];
    const res = await moderateCircleContent(
      s.bus,
      postId,
      {
        target_type: body.target_type,
        target_id: body.target_id,
        action: body.action,
        user_id: caller.userId,
        community_id: communityId,
        may_moderate: isSuper(caller) || admins.includes(caller.userId),
        note: body.note.trim(),
      },
      commandContext(s, ctx, caller.userId),
    );
    await settled(s, res.position);
    const [e] = res.events;
    ctx.body = {
      target_type: e.data.target_type,
      target_id: e.data.target_id,
      post_id: e.data.post_id,
      community_id: e.data.community_id,
      action: e.data.action,
      hidden: e.data.action === 'hide',
      by_user_id: e.data.by_user_id,
      note: e.data.note,
      at: e.data.at,
    };
  });
  router.use(r.routes());
}
