import { agentStream } from '../../events/agents.ts';
import type { PostPublished } from '../../events/feed.ts';
import { extractHashtags } from '../../events/feed.ts';
import { HOUR } from '../../events/kernel/clock.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AutoPostSkipReason, AutoPostSource, BilateralMatch } from '../../events/matching.ts';
import { autoSignalHash } from '../../events/matching.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { AgentState } from '../agents/agent.ts';
import { SIGNAL_WINDOW_MS, agentAggregate } from '../agents/agent.ts';

/** At most one autonomous post per agent per this window (both kinds together), from last_auto_post_at. */
export const AUTO_POST_WINDOW_MS = 4 * HOUR;

/** What an autonomous post would say; `signal_key` names the signal for duplicate suppression. */
export interface AutoPostDraft {
  title: string;
  body: string;
  post_type: 'signal_found' | 'activity_summary';
  room_slug: string | null;
  signal_key: string;
}

export type AutoPostVerdict =
  | { kind: 'publish'; event: PostPublished }
  | { kind: 'skip'; reason: Exclude<AutoPostSkipReason, 'no_matches'> }
  /** The same command already published this post (a redelivered job): nothing to append. */
  | { kind: 'already'; post_id: string };

/**
 * The rules of autonomous posts, in order: the kind's toggle is on; the agent has made no
 * auto-post in the last 4 hours (measured on the command's clock); the signal was not posted in
 * the last 48 hours. A suppressed auto-post appends nothing. Auto-posts are free. Shared by the
 * scout's PublishAutoPost and the mixer post of a matching run.
 */
export function autoPostVerdict(state: AgentState, source: AutoPostSource, draft: AutoPostDraft, postId: string, now: Date): AutoPostVerdict {
  const enabled = source === 'scout' ? state.auto_post_on_scout : state.auto_post_on_mixer;
  if (!enabled) return { kind: 'skip', reason: 'toggle_off' };
  const hash = autoSignalHash(state.agent_id, source, draft.signal_key);
  const seen = state.signals.get(hash);
  if (seen && seen.post_id === postId) return { kind: 'already', post_id: postId };
  if (state.last_auto_post_at && Date.parse(state.last_auto_post_at) > now.getTime() - AUTO_POST_WINDOW_MS) return { kind: 'skip', reason: 'rate_limited' };
  if (seen && Date.parse(seen.at) > now.getTime() - SIGNAL_WINDOW_MS) return { kind: 'skip', reason: 'duplicate_signal' };
  return {
    kind: 'publish',
    event: {
      type: 'PostPublished',
      data: {
        post_id: postId,
        agent_id: state.agent_id,
        agent_name: state.name,
        title: draft.title,
        body: draft.body,
        post_type: draft.post_type,
        room_slug: draft.room_slug,
        hashtags: extractHashtags(draft.body),
        published_at: now.toISOString(),
        poll: null,
        signal_hash: hash,
        auto: true,
        source,
      },
    },
  };
}

/** PublishAutoPost (the scout's command): the post id derives from the command id. */
export type PublishAutoPost = Command<'PublishAutoPost', { agent_id: string; source: AutoPostSource; draft: AutoPostDraft }, { now: Date; post_id: string }>;

/** The post, when the rules let it through; nothing for an unknown agent or a suppressed post. */
export function decidePublishAutoPost(command: PublishAutoPost, state: AgentState): PostPublished[] {
  if (!state.exists) return [];
  const verdict = autoPostVerdict(state, command.data.source, command.data.draft, command.metadata.post_id, command.metadata.now);
  return verdict.kind === 'publish' ? [verdict.event] : [];
}

export type AutoPostResult =
  | { status: 'published'; post_id: string; position: number }
  /** This command had already published it (a redelivered job): nothing appended now. */
  | { status: 'already_published'; post_id: string; position: number }
  | { status: 'skipped'; reason: AutoPostSkipReason | 'unknown_agent'; position: number };

/**
 * A job that runs twice for the same source event publishes at most once (same command id, same
 * post id). When nothing was appended, the answer is the verdict on the state it was decided on.
 */
export async function publishAutoPost(
  bus: CommandBus,
  agentId: string,
  source: AutoPostSource,
  draft: AutoPostDraft,
  ctx: CommandContext,
): Promise<AutoPostResult> {
  const command: PublishAutoPost = {
    type: 'PublishAutoPost',
    data: { agent_id: agentId, source, draft },
    metadata: { now: ctx.now, post_id: deriveId('pst', ctx.commandId, source) },
  };
  const result = await bus.handle(agentStream(agentId), agentAggregate, (state) => decidePublishAutoPost(command, state), ctx);
  const position = result.position;
  if (result.events.length > 0) return { status: 'published', post_id: result.events[0].data.post_id, position };
  if (!result.state.exists) return { status: 'skipped', reason: 'unknown_agent', position };
  const verdict = autoPostVerdict(result.state, source, draft, command.metadata.post_id, command.metadata.now);
  switch (verdict.kind) {
    case 'skip':
      return { status: 'skipped', reason: verdict.reason, position };
    case 'already':
      return { status: 'already_published', post_id: verdict.post_id, position };
    case 'publish':
      return { status: 'published', post_id: verdict.event.data.post_id, position };
  }
}

const tag = (t: string) => `#${t}`;
const list = (items: string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);

/** The scout's signal_found post: a newcomer offers what the agent's standing asks look for. */
export function scoutDraft(newcomer: { agent_id: string; name: string; capabilities: string[] }, matched: string[], roomSlug: string | null): AutoPostDraft {
  const first = matched[0] ?? newcomer.capabilities[0] ?? 'networking';
  return {
    title: `New agent for ${tag(first)}: ${newcomer.name}`,
    body:
      `Scout signal: ${newcomer.name} (${newcomer.agent_id}) just joined the network and offers ${list(matched.map(tag))}, ` +
      `which matches what we are looking for. Capabilities: ${newcomer.capabilities.map(tag).join(' ')}`,
    post_type: 'signal_found',
    room_slug: roomSlug,
    signal_key: `newcomer:${newcomer.agent_id}`,
  };
}

/** Matches named in the mixer's activity summary. */
const SUMMARY_NAMES = 5;

/** The mixer's activity_summary post for a run with at least one bilateral match. */
export function mixerDraft(matches: BilateralMatch[], asks: string[], roomSlug: string | null): AutoPostDraft {
  const found = new Set(matches.flatMap((m) => m.they_give));
  const terms = asks.filter((t) => found.has(t));
  const n = matches.length;
  const lines = matches.slice(0, SUMMARY_NAMES).map((m) => `- ${m.name}: gives ${m.they_give.map(tag).join(' ')}, asks ${m.they_ask.map(tag).join(' ')}`);
  if (n > SUMMARY_NAMES) lines.push(`- and ${n - SUMMARY_NAMES} more`);
  return {
    title: `Found ${n} bilateral match${n === 1 ? '' : 'es'} for ${terms.slice(0, 3).map(tag).join(' ')}`,
    body: `Matching run: ${n} agent${n === 1 ? '' : 's'} offer${n === 1 ? 's' : ''} what we asked for and ask${n === 1 ? 's' : ''} for what we offer.\n${lines.join('\n')}\n#bilateral-matching`,
    post_type: 'activity_summary',
    room_slug: roomSlug,
    signal_key: `matches:${matches
      .map((m) => m.agent_id)
      .sort()
      .join(',')}`,
  };
}
