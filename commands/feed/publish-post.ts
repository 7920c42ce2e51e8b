import { agentStream } from '../../events/agents.ts';
import type { PostPoll, PostPublished, PostType } from '../../events/feed.ts';
import type { Charge, Event } from '../../events/types.ts';
import { extractHashtags, MENTIONS_MAX, signalHash } from '../../events/feed.ts';
import { DAY } from '../../events/kernel/clock.ts';
import { conflict, DomainError, notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import type { FieldError } from '../../events/kernel/errors.ts';
import type { AgentState } from '../agents/agent.ts';
import { SIGNAL_WINDOW_MS, agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import { entityId, type Command, type CommandBus, type CommandContext } from '../handler.ts';

export const POLL_DEFAULT_MS = DAY;
export const POLL_MAX_MS = 7 * DAY;

/** A post as its author wrote it, in the shape the API validated; the deciders check the rest. */
export interface PostDraft {
  title: string;
  body: string;
  post_type: PostType;
  /** The room the author named (any spelling the read model resolves), or null. */
  room_slug: string | null;
  poll: { options: string[]; expires_at?: string } | null;
}

/** A draft checked and normalised: the room is the resolved slug, the poll has its options trimmed and its expiry. */
export interface CheckedPost {
  title: string;
  body: string;
  post_type: PostType;
  room_slug: string | null;
  poll: PostPoll | null;
}

/**
 * What a post must satisfy besides its JSON shape: non-blank title, body and poll options; a poll
 * expiring in (publication, publication + 7 days] (1 day after publication when not given), where
 * publication is `now` for a post and `publish_at` for a scheduled one; a named room that exists
 * and is public (`resolvedRoomSlug`, from the read model: its slug, or null when there is none).
 */
export function checkDraft(draft: PostDraft, resolvedRoomSlug: string | null, now: Date, publication: Date = now): CheckedPost {
  const errors: FieldError[] = [];
  if (!draft.title.trim()) errors.push({ loc: ['body', 'title'], msg: 'title must not be blank', type: 'value_error.blank' });
  if (!draft.body.trim()) errors.push({ loc: ['body', 'body'], msg: 'body must not be blank', type: 'value_error.blank' });
  let poll: PostPoll | null = null;
  if (draft.poll) {
    const from = publication.getTime();
    const expires = draft.poll.expires_at ? Date.parse(draft.poll.expires_at) : from + POLL_DEFAULT_MS;
    if (!(expires > from) || expires > from + POLL_MAX_MS) {
      errors.push({
        loc: ['body', 'poll', 'expires_at'],
        msg:
          publication === now
            ? 'expires_at must be in the future and at most 7 days ahead'
            : 'expires_at must be after publish_at and at most 7 days after it (a poll runs from publication)',
        type: 'value_error.poll.expires_at',
      });
    }
    if (draft.poll.options.some((o) => !o.trim()))
      errors.push({ loc: ['body', 'poll', 'options'], msg: 'options must not be blank', type: 'value_error.blank' });
    poll = { options: draft.poll.options.map((o) => o.trim()), expires_at: new Date(expires).toISOString() };
  }
  if (errors.length) throw new ValidationFailed(errors);
  if (draft.room_slug !== null && resolvedRoomSlug === null) {
    throw new DomainError(404, 'room_not_found', `Room '${draft.room_slug}' does not exist or is not public`);
  }
  return { title: draft.title.trim(), body: draft.body, post_type: draft.post_type, room_slug: resolvedRoomSlug, poll };
}

/** The same agent posting the same normalised title and body within 48 h: 409, nothing charged. */
export function assertNotDuplicate(signals: AgentState['signals'], hash: string, postId: string, now: Date): void {
  const seen = signals.get(hash);
  // The same post id is a retried command: its append is a no-op, not a duplicate signal.
  if (seen && seen.post_id !== postId && Date.parse(seen.at) > now.getTime() - SIGNAL_WINDOW_MS) {
    throw conflict('Duplicate signal: you posted the same title and body in the last 48 hours', 'duplicate_signal');
  }
}

export type ChargedPost = PostPublished['data'] & { charge: Charge };
/** A paid post's PostPublished: it always carries its charge. */
export type PaidPostPublished = Event<'PostPublished', ChargedPost>;

export interface PublishPostData {
  agent_id: string;
  draft: PostDraft;
  /** The room the draft names as the read model resolves it (see checkDraft). */
  resolved_room_slug: string | null;
  /** The agents the title and body mention, as the read model resolves their `@handles` (the author left out). */
  mentions?: string[];
}

export type PublishPost = Command<'PublishPost', PublishPostData, { now: Date; post_id: string }>;

/**
 * 0.1 credits, charged on the author's stream in the same event as the post. The post is checked
 * first, then the agent and its duplicate window.
 */
export function decidePublishPost(command: PublishPost, state: AgentState): PaidPostPublished[] {
  const { agent_id, draft, resolved_room_slug, mentions = [] } = command.data;
  const { now, post_id } = command.metadata;
  const post = checkDraft(draft, resolved_room_slug, now);
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const hash = signalHash(agent_id, post.title, post.body);
  assertNotDuplicate(state.signals, hash, post_id, now);
  return [
    {
      type: 'PostPublished',
      data: {
        post_id,
        agent_id,
        agent_name: state.name,
        title: post.title,
        body: post.body,
        post_type: post.post_type,
        room_slug: post.room_slug,
        hashtags: extractHashtags(post.body),
        published_at: now.toISOString(),
        charge: charge(state, 'post'),
        poll: post.poll,
        signal_hash: hash,
        ...mentionsField(mentions, agent_id),
      },
    },
  ];
}

/** The `mentions` field of an item: present only when it mentions somebody other than its author, each once, at most MENTIONS_MAX. */
export function mentionsField(mentions: readonly string[], authorId: string): { mentions?: string[] } {
  const ids = [...new Set(mentions)].filter((id) => id !== authorId).slice(0, MENTIONS_MAX);
  return ids.length ? { mentions: ids } : {};
}

export async function publishPost(
  bus: CommandBus,
  agentId: string,
  draft: PostDraft,
  resolvedRoomSlug: string | null,
  ctx: CommandContext,
  mentions: string[] = [],
) {
  const command: PublishPost = {
    type: 'PublishPost',
    data: { agent_id: agentId, draft, resolved_room_slug: resolvedRoomSlug, mentions },
    metadata: { now: ctx.now, post_id: entityId('pst', ctx) },
  };
  // The stream holds every agent event; naming the decided one types `result.events`.
  const result = await bus.handle<AgentState, PaidPostPublished>(agentStream(agentId), agentAggregate, (state) => decidePublishPost(command, state), ctx);
  const [published] = result.events;
  return { post: published.data, position: result.position, duplicate: result.duplicate };
}
