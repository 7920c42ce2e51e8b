import type { CirclePostState } from '../../../commands/communities/circle-post.ts';
import {
  circlePostAggregate,
  decideAddCircleReply,
  decideDeleteCirclePost,
  decideEditCirclePost,
  decidePublishCirclePost,
  decideToggleCircleReaction,
  resolveMentions,
} from '../../../commands/communities/circle-post.ts';
import type { CircleUserState } from '../../../commands/communities/circle-user.ts';
import { circleUserAggregate, decideMarkCircleNotificationsRead, decideSetNotificationSettings } from '../../../commands/communities/circle-user.ts';
import type { CirclePostEvent, CircleUserEvent } from '../../../events/communities.ts';
import { expect } from 'chai';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const { NOW, USER, ADMIN_USER, CIRCLE, COMMUNITY, CPOST, CREPLY } = f;
const now = NOW.toISOString();
const meta = { now: NOW };
const spec = <C>(decide: (c: C, s: CirclePostState) => CirclePostEvent[]) =>
  DeciderSpecification.for<C, CirclePostState, CirclePostEvent>({ decide, ...circlePostAggregate });

describe('commands: circle posts (cpost-<post_id>)', () => {
  const publish = (is_member: boolean) => ({
    type: 'PublishCirclePost' as const,
    data: {
      circle_id: CIRCLE,
      community_id: COMMUNITY,
      author_id: USER,
      author_name: 'Ada Lovelace',
      is_member,
      content: 'Looking for a #fintech advisor',
      intent: 'ask' as const,
      link_url: null,
      mentions: [],
    },
    metadata: { now: f.at(10), post_id: CPOST },
  });
  it('publishes a member’s post with its hashtags; a non-member 403', () => {
    spec(decidePublishCirclePost).given([]).when(publish(true)).then([f.circlePostPublished()]);
    spec(decidePublishCirclePost).given([]).when(publish(false)).thenThrows('not_circle_member', 403);
  });
  it('edits and deletes by the author only; a deleted post 404', () => {
    const edit = (user_id: string) => ({ type: 'EditCirclePost' as const, data: { user_id, content: 'Looking for a #payments advisor' }, metadata: meta });
    spec(decideEditCirclePost)
      .given([f.circlePostPublished()])
      .when(edit(USER))
      .then([f.circlePostEdited({ edited_at: now })]);
    spec(decideEditCirclePost).given([f.circlePostPublished()]).when(edit(ADMIN_USER)).thenThrows('not_post_author', 403);
    spec(decideEditCirclePost).given([f.circlePostPublished(), f.circlePostDeleted()]).when(edit(USER)).thenThrows('circle_post_not_found', 404);
    spec(decideDeleteCirclePost)
      .given([f.circlePostPublished()])
      .when({ type: 'DeleteCirclePost', data: { user_id: USER }, metadata: meta })
      .then([f.circlePostDeleted({ deleted_at: now })]);
    spec(decideDeleteCirclePost)
      .given([f.circlePostPublished()])
      .when({ type: 'DeleteCirclePost', data: { user_id: ADMIN_USER }, metadata: meta })
      .thenThrows('not_post_author', 403);
  });
  it('replies two levels deep: a reply to a nested reply attaches to its top-level reply; an unknown parent 404', () => {
    const reply = (parent_reply_id: string | null) => ({
      type: 'AddCircleReply' as const,
      data: { author_id: USER, author_name: 'Ada Lovelace', is_member: true, content: 'Thanks', parent_reply_id, mentions: [] },
      metadata: { now: NOW, reply_id: 'crp_new' },
    });
    const nested = f.circleReplyAdded({ reply_id: 'crp_nested', parent_reply_id: CREPLY, author_id: 'usr_third000000000000000' });
    spec(decideAddCircleReply)
      .given([f.circlePostPublished(), f.circleReplyAdded(), nested])
      .when(reply('crp_nested'))
      .then([
        f.circleReplyAdded({
          reply_id: 'crp_new',
          parent_reply_id: CREPLY,
          author_id: USER,
          author_name: 'Ada Lovelace',
          content: 'Thanks',
          parent_author_id: 'usr_third000000000000000',
          replied_at: now,
        }),
      ]);
    spec(decideAddCircleReply).given([f.circlePostPublished()]).when(reply('crp_none')).thenThrows('circle_reply_not_found', 404);
  });
  it('toggles a reaction on, then off', () => {
    const toggle = {
      type: 'ToggleCircleReaction' as const,
      data: { target_type: 'post' as const, target_id: CPOST, user_id: ADMIN_USER, user_name: 'Grace Admin', is_member: true, reaction: 'like' as const },
      metadata: meta,
    };
    spec(decideToggleCircleReaction)
      .given([f.circlePostPublished()])
      .when(toggle)
      .then([f.circleReactionToggled({ toggled_at: now })]);
    spec(decideToggleCircleReaction)
      .given([f.circlePostPublished(), f.circleReactionToggled()])
      .when(toggle)
      .then([f.circleReactionToggled({ on: false, toggled_at: now })]);
  });
  it('resolves @mentions against the circle’s members by full or first name, never the author', () => {
    const members = [
      { user_id: 'usr_a', full_name: 'Bob Kahn' },
      { user_id: 'usr_b', full_name: 'Ada Lovelace' },
    ];
    expect(resolveMentions('ping @bob and @AdaLovelace', members, 'usr_x')).to.deep.equal(['usr_a', 'usr_b']);
    expect(resolveMentions('ping @bob', members, 'usr_a')).to.deep.equal([]);
  });
});

describe('commands: circle notification settings (circle-user-<user_id>)', () => {
  const spec2 = DeciderSpecification.for<Parameters<typeof decideSetNotificationSettings>[0], CircleUserState, CircleUserEvent>({
    decide: decideSetNotificationSettings,
    ...circleUserAggregate,
  });
  it('records a change over the defaults, and nothing when nothing changes', () => {
    spec2
      .given([])
      .when({ type: 'SetNotificationSettings', data: { user_id: USER, settings: { reactions: false } }, metadata: { now: f.at(9) } })
      .then([f.circleNotificationSettingsChanged()]);
    spec2
      .given([f.circleNotificationSettingsChanged()])
      .when({ type: 'SetNotificationSettings', data: { user_id: USER, settings: { reactions: false } }, metadata: meta })
      .thenNothingHappened();
  });
  it('marks all (null) or some notifications read; an empty list is nothing', () => {
    expect(
      decideMarkCircleNotificationsRead({ type: 'MarkCircleNotificationsRead', data: { user_id: USER, notification_ids: null }, metadata: { now: f.at(12) } }),
    ).to.deep.equal([f.circleNotificationsRead()]);
    expect(
      decideMarkCircleNotificationsRead({ type: 'MarkCircleNotificationsRead', data: { user_id: USER, notification_ids: [] }, metadata: meta }),
    ).to.deep.equal([]);
  });
});
