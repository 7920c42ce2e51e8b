import type {
  CircleContentModerated,
  CirclePostDeleted,
  CirclePostEdited,
  CirclePostEvent,
  CirclePostPublished,
  CircleReaction,
  CircleReactionToggled,
  CircleReplyAdded,
  Intent,
} from '../../events/communities.ts';
import { circlePostStream } from '../../events/communities.ts';
import { extractHashtags } from '../../events/feed.ts';
import { conflict, forbidden, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import { entityId } from '../handler.ts';

/** `cpost-<post_id>`: the post, its replies (two levels) and who reacted how to each. */
export interface CirclePostState {
  exists: boolean;
  deleted: boolean;
  post_id: string;
  circle_id: string;
  author_id: string;
  content: string;
  intent: Intent;
  replies: Readonly<Record<string, { author_id: string; parent_reply_id: string | null }>>;
  /** `<target_id>|<user_id>|<reaction>` of every reaction that is on. */
  reactions: Readonly<Record<string, true>>;
  /** The post's id or reply ids a community admin hid (and has not restored). */
  hidden?: Readonly<Record<string, true>>;
}

export const circlePostAggregate: Aggregate<CirclePostState, CirclePostEvent> = {
  initialState: () => ({ exists: false, deleted: false, post_id: '', circle_id: '', author_id: '', content: '', intent: 'update', replies: {}, reactions: {} }),
  evolve(state, event) {
    switch (event.type) {
      case 'CirclePostPublished': {
        const d = event.data;
        return { ...state, exists: true, post_id: d.post_id, circle_id: d.circle_id, author_id: d.author_id, content: d.content, intent: d.intent };
      }
      case 'CirclePostEdited':
        return { ...state, content: event.data.content, intent: event.data.intent };
      case 'CirclePostDeleted':
        return { ...state, deleted: true };
      case 'CircleReplyAdded':
        return {
          ...state,
          replies: { ...state.replies, [event.data.reply_id]: { author_id: event.data.author_id, parent_reply_id: event.data.parent_reply_id } },
        };
      case 'CircleContentModerated': {
        const hidden = { ...(state.hidden ?? {}) };
        if (event.data.action === 'hide') hidden[event.data.target_id] = true;
        else delete hidden[event.data.target_id];
        return { ...state, hidden };
      }
      case 'CircleReactionToggled': {
        const key = `${event.data.target_id}|${event.data.user_id}|${event.data.reaction}`;
        const reactions = { ...state.reactions };
        if (event.data.on) reactions[key] = true;
        else delete reactions[key];
        return { ...state, reactions };
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

const live = (state: CirclePostState) => {
  if (!state.exists || state.deleted) throw notFound('Circle post', 'circle_post_not_found');
};
const mustBeMember = (isMember: boolean) => {
  if (!isMember) throw forbidden('Only members of the circle may do this; join it first', 'not_circle_member');
};
const mustBeAuthor = (state: CirclePostState, userId: string) => {
  if (state.author_id !== userId) throw forbidden('Only the author may edit or delete this post', 'not_post_author');
};

/** `@name` mentions: members of the circle whose full name (spaces removed) or first name follows an `@`. */
export function resolveMentions(content: string, members: Array<{ user_id: string; full_name: string }>, exclude: string): string[] {
  const handles = new Set([...content.matchAll(/@([\p{L}\p{N}_.-]{2,64})/gu)].map((m) => m[1].toLowerCase()));
  if (handles.size === 0) return [];
  const out: string[] = [];
  for (const m of members) {
    const full = m.full_name.toLowerCase().replace(/\s+/g, '');
    const first = m.full_name.toLowerCase().split(/\s+/)[0] ?? '';
    if (m.user_id !== exclude && (handles.has(full) || handles.has(first)) && !out.includes(m.user_id)) out.push(m.user_id);
  }
  return out.slice(0, 20);
}

export type PublishCirclePost = Command<
  'PublishCirclePost',
  {
    circle_id: string;
    community_id: string;
    author_id: string;
    author_name: string;
    /** From the circle members read model. */
    is_member: boolean;
    content: string;
    intent: Intent;
    link_url: string | null;
    mentions: string[];
  },
  { now: Date; post_id: string }
>;
export function decidePublishCirclePost(command: PublishCirclePost, state: CirclePostState): CirclePostPublished[] {
  if (state.exists) return [];
  const d = command.data;
  mustBeMember(d.is_member);
  return [
    {
      type: 'CirclePostPublished',
      data: {
        post_id: command.metadata.post_id,
        circle_id: d.circle_id,
        community_id: d.community_id,
        author_id: d.author_id,
        author_name: d.author_name,
        content: d.content,
        intent: d.intent,
        link_url: d.link_url,
        hashtags: extractHashtags(d.content).slice(0, 20),
        mentions: d.mentions,
        published_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

export type EditCirclePost = Command<'EditCirclePost', { user_id: string; content?: string; intent?: Intent }>;
export function decideEditCirclePost(command: EditCirclePost, state: CirclePostState): CirclePostEdited[] {
  live(state);
  mustBeAuthor(state, command.data.user_id);
  const content = command.data.content ?? state.content;
  const intent = command.data.intent ?? state.intent;
  if (content === state.content && intent === state.intent) return [];
  return [
    {
      type: 'CirclePostEdited',
      data: {
        post_id: state.post_id,
        circle_id: state.circle_id,
        author_id: state.author_id,
        content,
        intent,
        hashtags: extractHashtags(content).slice(0, 20),
        edited_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

export type DeleteCirclePost = Command<'DeleteCirclePost', { user_id: string }>;
export function decideDeleteCirclePost(command: DeleteCirclePost, state: CirclePostState): CirclePostDeleted[] {
  live(state);
  mustBeAuthor(state, command.data.user_id);
  return [
    {
      type: 'CirclePostDeleted',
      data: { post_id: state.post_id, circle_id: state.circle_id, author_id: state.author_id, deleted_at: command.metadata.now.toISOString() },
    },
  ];
}

export type AddCircleReply = Command<
  'AddCircleReply',
  { author_id: string; author_name: string; is_member: boolean; content: string; parent_reply_id: string | null; mentions: string[] },
  { now: Date; reply_id: string }
>;
/** Two levels, like feed comments: a reply to a nested reply attaches to its top-level reply. */
export function decideAddCircleReply(command: AddCircleReply, state: CirclePostState): CircleReplyAdded[] {
  live(state);
  const d = command.data;
  mustBeMember(d.is_member);
  if (state.replies[command.metadata.reply_id]) return [];
  let parent: string | null = null;
  let parentAuthor: string | null = null;
  if (d.parent_reply_id !== null) {
    const p = state.replies[d.parent_reply_id];
    if (!p) throw notFound('Reply', 'circle_reply_not_found');
    parent = p.parent_reply_id ?? d.parent_reply_id;
    parentAuthor = p.author_id;
  }
  return [
    {
      type: 'CircleReplyAdded',
      data: {
        reply_id: command.metadata.reply_id,
        post_id: state.post_id,
        circle_id: state.circle_id,
        parent_reply_id: parent,
        author_id: d.author_id,
        author_name: d.author_name,
        content: d.content,
        mentions: d.mentions,
        post_author_id: state.author_id,
        parent_author_id: parentAuthor,
        replied_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

export type ToggleCircleReaction = Command<
  'ToggleCircleReaction',
  { target_type: 'post' | 'reply'; target_id: string; user_id: string; user_name: string; is_member: boolean; reaction: CircleReaction }
>;
/** Sets the reaction, or takes it back when the user already gave it. */
export function decideToggleCircleReaction(command: ToggleCircleReaction, state: CirclePostState): CircleReactionToggled[] {
  live(state);
  const d = command.data;
  let author = state.author_id;
  if (d.target_type === 'reply') {
    const r = state.replies[d.target_id];
    if (!r) throw notFound('Reply', 'circle_reply_not_found');
    author = r.author_id;
  } else if (d.target_id !== state.post_id) throw notFound('Circle post', 'circle_post_not_found');
  mustBeMember(d.is_member);
  const on = !state.reactions[`${d.target_id}|${d.user_id}|${d.reaction}`];
  return [
    {
      type: 'CircleReactionToggled',
      data: {
        target_type: d.target_type,
        target_id: d.target_id,
        post_id: state.post_id,
        circle_id: state.circle_id,
        user_id: d.user_id,
        user_name: d.user_name,
        target_author_id: author,
        reaction: d.reaction,
        on,
        toggled_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

export type ModerateCircleContent = Command<
  'ModerateCircleContent',
  {
    target_type: 'post' | 'reply';
    target_id: string;
    action: 'hide' | 'restore';
    user_id: string;
    community_id: string;
    /** From the communities read model: the user is an admin of `community_id`, or a super admin. */
    may_moderate: boolean;
    note: string;
  }
>;
/**
 * A community admin hides or restores a post or reply of a circle of their own community (403
 * `not_community_admin_of_item` otherwise; 404 for an unknown or deleted one; 409
 * `already_hidden` / `item_not_hidden` when there is nothing to change).
 */
export function decideModerateCircleContent(command: ModerateCircleContent, state: CirclePostState): CircleContentModerated[] {
  live(state);
  const d = command.data;
  if (!d.may_moderate) throw forbidden('Only an admin of this community may hide or restore its posts and replies', 'not_community_admin_of_item');
  if (d.target_type === 'reply' ? !state.replies[d.target_id] : d.target_id !== state.post_id) {
    throw d.target_type === 'reply' ? notFound('Reply', 'circle_reply_not_found') : notFound('Circle post', 'circle_post_not_found');
  }
  const hidden = state.hidden?.[d.target_id] === true;
  if (d.action === 'hide' && hidden) throw conflict('This is already hidden', 'already_hidden');
  if (d.action === 'restore' && !hidden) throw conflict('This is not hidden', 'item_not_hidden');
  return [
    {
      type: 'CircleContentModerated',
      data: {
        target_type: d.target_type,
        target_id: d.target_id,
        post_id: state.post_id,
        circle_id: state.circle_id,
        community_id: d.community_id,
        action: d.action,
        by_user_id: d.user_id,
        note: d.note,
        at: command.metadata.now.toISOString(),
      },
    },
  ];
}

const handle = <R extends CirclePostEvent[]>(bus: CommandBus, postId: string, decide: (s: CirclePostState) => R, ctx: CommandContext) =>
  bus.handle<CirclePostState, CirclePostEvent, R>(circlePostStream(postId), circlePostAggregate, decide, ctx);

export async function publishCirclePost(bus: CommandBus, data: PublishCirclePost['data'], ctx: CommandContext) {
  const post_id = entityId('cpo', ctx);
  // A new post's stream: decided without reading it.
  const r = await bus.create<CirclePostState, CirclePostEvent, ReturnType<typeof decidePublishCirclePost>>(
    circlePostStream(post_id),
    circlePostAggregate,
    (s) => decidePublishCirclePost({ type: 'PublishCirclePost', data, metadata: { now: ctx.now, post_id } }, s),
    ctx,
  );
  return { ...r, post_id };
}
export const editCirclePost = (bus: CommandBus, postId: string, data: EditCirclePost['data'], ctx: CommandContext) =>
  handle(bus, postId, (s) => decideEditCirclePost({ type: 'EditCirclePost', data, metadata: { now: ctx.now } }, s), ctx);
export const deleteCirclePost = (bus: CommandBus, postId: string, data: DeleteCirclePost['data'], ctx: CommandContext) =>
  handle(bus, postId, (s) => decideDeleteCirclePost({ type: 'DeleteCirclePost', data, metadata: { now: ctx.now } }, s), ctx);
export async function addCircleReply(bus: CommandBus, postId: string, data: AddCircleReply['data'], ctx: CommandContext) {
  const reply_id = deriveId('crp', ctx.commandId);
  const r = await handle(bus, postId, (s) => decideAddCircleReply({ type: 'AddCircleReply', data, metadata: { now: ctx.now, reply_id } }, s), ctx);
  return { ...r, reply_id };
}
export const toggleCircleReaction = (bus: CommandBus, postId: string, data: ToggleCircleReaction['data'], ctx: CommandContext) =>
  handle(bus, postId, (s) => decideToggleCircleReaction({ type: 'ToggleCircleReaction', data, metadata: { now: ctx.now } }, s), ctx);
export const moderateCircleContent = (bus: CommandBus, postId: string, data: ModerateCircleContent['data'], ctx: CommandContext) =>
  handle(bus, postId, (s) => decideModerateCircleContent({ type: 'ModerateCircleContent', data, metadata: { now: ctx.now } }, s), ctx);
