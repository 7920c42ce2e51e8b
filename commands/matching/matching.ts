import { agentStream } from '../../events/agents.ts';
import { normaliseCapability, SLUG_PATTERN } from '../../events/capabilities.ts';
import type { PostPublished } from '../../events/feed.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import type { FieldError } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AutoPostOutcome, BilateralMatch, MatchingRunCompleted } from '../../events/matching.ts';
import { MATCH_LIMIT_DEFAULT } from '../../events/matching.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate, agentStreamEvent } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import { autoPostVerdict, mixerDraft } from './auto-post.ts';
import type { MatchCreated } from '../../events/humans.ts';
import { matchStream } from '../../events/humans.ts';
import type { CreateMatch, MatchEvent, MatchState } from '../humans/matches.ts';
import { decideCreateMatch, matchAggregate } from '../humans/matches.ts';

/**
 * Matching terms are capability slugs: normalised the same way (lower case, separators to
 * hyphens, accents and other characters dropped) and then 3-40 characters of [a-z0-9-], so a
 * give or an ask compares equal to a capability. Duplicates after normalisation are merged.
 */
export function normaliseTerms(raw: string[], field: 'gives' | 'asks'): string[] {
  const errors: FieldError[] = [];
  const out: string[] = [];
  raw.forEach((r, i) => {
    const t = normaliseCapability(r);
    if (!SLUG_PATTERN.test(t))
      errors.push({ loc: ['body', field, i], msg: 'term must normalise to 3-40 characters of [a-z0-9-] (a capability slug)', type: 'value_error.term' });
    else if (!out.includes(t)) out.push(t);
  });
  if (errors.length) throw new ValidationFailed(errors);
  return out;
}

/** An agent's standing offers and needs (the `match_profiles` read model). */
export interface StandingProfile {
  agent_id: string;
  name: string;
  capabilities: string[];
  /** Gives of its latest matching run ∪ its capabilities. */
  offers: string[];
  /** Asks of its latest matching run. */
  needs: string[];
  last_run_at: string | null;
}

/**
 * Bilateral matching: B matches A when A's asks meet B's offers and B's needs meet A's offers
 * (A itself excluded). Ranked by overlap (|they_give| + |they_ask|), then the more recent standing
 * run, then agent id, so the same read model always gives the same order.
 */
export function rankBilateral(me: { agent_id: string; offers: string[]; asks: string[] }, candidates: StandingProfile[]): BilateralMatch[] {
  const offers = new Set(me.offers);
  const ranked: Array<BilateralMatch & { last_run_at: string }> = [];
  for (const c of candidates) {
    if (c.agent_id === me.agent_id) continue;
    const theirOffers = new Set(c.offers);
    const they_give = me.asks.filter((t) => theirOffers.has(t));
    if (they_give.length === 0) continue;
    const they_ask = c.needs.filter((t) => offers.has(t));
    if (they_ask.length === 0) continue;
    ranked.push({ agent_id: c.agent_id, name: c.name, they_give, they_ask, score: they_give.length + they_ask.length, last_run_at: c.last_run_at ?? '' });
  }
  ranked.sort(
    (a, b) => b.score - a.score || (a.last_run_at < b.last_run_at ? 1 : a.last_run_at > b.last_run_at ? -1 : 0) || (a.agent_id < b.agent_id ? -1 : 1),
  );
  return ranked.map(({ last_run_at: _at, ...m }) => m);
}

/** Both lists of a run normalised; the errors of both reported together (422). */
export function normaliseRunTerms(raw: { gives: string[]; asks: string[] }): { gives: string[]; asks: string[] } {
  const errors: FieldError[] = [];
  const run = (terms: string[], field: 'gives' | 'asks') => {
    try {
      return normaliseTerms(terms, field);
    } catch (err) {
      if (!(err instanceof ValidationFailed)) throw err;
      errors.push(...err.errors);
      return [];
    }
  };
  const gives = run(raw.gives, 'gives');
  const asks = run(raw.asks, 'asks');
  if (errors.length) throw new ValidationFailed(errors);
  return { gives, asks };
}

/** What a run offers: its gives, then the agent's capabilities it did not list. */
export function offersOf(gives: string[], capabilities: string[]): string[] {
  return [...gives, ...capabilities.filter((c) => !gives.includes(c))];
}

/** What a matching run reads from the read models (the caller passes the queries: commands do not import them). */
export interface MatchingReads {
  standingProfile(agentId: string): Promise<{ capabilities: string[]; hidden: boolean } | null>;
  /** Visible agents other than `exclude` whose standing needs include one of `terms`. */
  agentsNeeding(terms: string[], exclude: string): Promise<StandingProfile[]>;
  blockedEitherWay(a: string, b: string): Promise<boolean>;
  /** The room of a term (its public room), or null. */
  roomOf(term: string): Promise<string | null>;
  /** The user an active agent is linked to, when that user is a discoverable member; else null. */
  memberOwnerOf(agentId: string): Promise<string | null>;
}

/** The member match of two users a matching run opens: one per pair of users, whichever run found them first. */
export const memberMatchIdOf = (userA: string, userB: string) => deriveId('mtc', `members:${[userA, userB].sort().join(':')}`);

/** A member match a run opens between the owners of its two agents. */
interface MemberPair {
  match_id: string;
  user_a_id: string;
  user_b_id: string;
  agent_name: string;
}

/**
 * The runner's owner and each match's owner, when both are discoverable members who differ: the
 * match then carries the id of their member match (created after the run is recorded).
 */
async function withMemberMatches(
  reads: MatchingReads,
  agentId: string,
  matches: BilateralMatch[],
): Promise<{ matches: BilateralMatch[]; pairs: MemberPair[] }> {
  const runnerOwner = matches.length ? await reads.memberOwnerOf(agentId) : null;
  if (!runnerOwner) return { matches, pairs: [] };
  const pairs: MemberPair[] = [];
  const out: BilateralMatch[] = [];
  for (const m of matches) {
    const owner = await reads.memberOwnerOf(m.agent_id);
    if (!owner || owner === runnerOwner) {
      out.push(m);
      continue;
    }
    const match_id = memberMatchIdOf(runnerOwner, owner);
    pairs.push({ match_id, user_a_id: runnerOwner, user_b_id: owner, agent_name: m.name });
    out.push({ ...m, member_match_id: match_id });
  }
  return { matches: out, pairs };
}

/**
 * The bilateral matches of a run, best first, at most `limit`: candidates from the standing-needs
 * index, ranked by the pure rule, pairs where either agent blocks the other left out (checked in
 * rank order until `limit` are found).
 */
export async function findBilateralMatches(reads: MatchingReads, agentId: string, offers: string[], asks: string[], limit: number): Promise<BilateralMatch[]> {
  const ranked = rankBilateral({ agent_id: agentId, offers, asks }, await reads.agentsNeeding(offers, agentId));
  const out: BilateralMatch[] = [];
  for (const m of ranked) {
    if (out.length >= limit) break;
    if (await reads.blockedEitherWay(agentId, m.agent_id)) continue;
    out.push(m);
  }
  return out;
}

/**
 * RunMatching: the normalised gives and asks, and the facts found in the read models: the
 * bilateral matches (ranked, at most `limit`) and where the mixer's activity summary goes (the
 * public room of the first matched ask, or the feed). Run and post ids derive from the command id.
 */
export type RunMatching = Command<
  'RunMatching',
  { agent_id: string; gives: string[]; asks: string[]; limit: number; matches: BilateralMatch[]; room_slug: string | null },
  { now: Date; run_id: string; post_id: string }
>;

/**
 * 1 credit (402 when the balance does not cover it), charged in the event that records the run.
 * With at least one match, the mixer's activity summary is decided in the same append (free,
 * under the auto-post rules), so a run and its auto-post are atomic. A run this agent already
 * recorded in the last 24 h (a retried command) appends nothing.
 */
export function decideRunMatching(command: RunMatching, state: AgentState): Array<MatchingRunCompleted | PostPublished> {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { agent_id, gives, asks, limit, matches, room_slug } = command.data;
  const { now, run_id, post_id } = command.metadata;
  if (run_id in state.recent_runs) return [];
  const paid = charge(state, 'matching_run');
  let outcome: AutoPostOutcome = { status: 'skipped', reason: 'no_matches' };
  let post: PostPublished | null = null;
  if (matches.length > 0) {
    const verdict = autoPostVerdict(state, 'mixer', mixerDraft(matches, asks, room_slug), post_id, now);
    if (verdict.kind === 'publish') {
      post = verdict.event;
      outcome = { status: 'published', post_id };
    } else if (verdict.kind === 'skip') {
      outcome = { status: 'skipped', reason: verdict.reason };
    }
  }
  const run: MatchingRunCompleted = {
    type: 'MatchingRunCompleted',
    data: {
      run_id,
      agent_id,
      agent_name: state.name,
      gives,
      asks,
      limit,
      matches,
      auto_post: outcome,
      completed_at: now.toISOString(),
      charge: paid,
    },
  };
  return post ? [run, post] : [run];
}

export interface MatchingRunResult {
  run: MatchingRunCompleted['data'];
  post: PostPublished['data'] | null;
  position: number;
  duplicate: boolean;
}

/**
 * Normalises the terms (422), loads the facts (404 without a standing profile; a ghosted agent's
 * runs reach nobody, and nobody reaches it), then decides. A retried run answers with the recorded run.
 */
export async function runMatching(
  bus: CommandBus,
  reads: MatchingReads,
  agentId: string,
  input: { gives: string[]; asks: string[]; limit?: number },
  ctx: CommandContext,
): Promise<MatchingRunResult> {
  const { gives, asks } = normaliseRunTerms(input);
  const limit = input.limit ?? MATCH_LIMIT_DEFAULT;
  const me = await reads.standingProfile(agentId);
  if (!me) throw notFound('Agent', 'agent_not_found');
  const bilateral = me.hidden ? [] : await findBilateralMatches(reads, agentId, offersOf(gives, me.capabilities), asks, limit);
  const { matches, pairs } = await withMemberMatches(reads, agentId, bilateral);
  const found = new Set(matches.flatMap((m) => m.they_give));
  const first = asks.find((t) => found.has(t));
  const command: RunMatching = {
    type: 'RunMatching',
    data: { agent_id: agentId, gives, asks, limit, matches, room_slug: first ? await reads.roomOf(first) : null },
    metadata: { now: ctx.now, run_id: deriveId('run', ctx.commandId), post_id: deriveId('pst', ctx.commandId, 'mixer') },
  };
  const result = await bus.handle(agentStream(agentId), agentAggregate, (state) => decideRunMatching(command, state), ctx);
  let run: MatchingRunCompleted['data'] | null = null;
  let post: PostPublished['data'] | null = null;
  for (const e of result.events) {
    if (e.type === 'MatchingRunCompleted') run = e.data;
    else post = e.data;
  }
  if (run === null) {
    // A retried run: complete the member matches it recorded (an earlier attempt may have stopped before them).
    const recorded = await recordedRun(bus, agentId, command.metadata.run_id);
    const ids = new Set(recorded.run.matches.map((m) => m.member_match_id));
    const matchesAt = await openMemberMatches(
      bus,
      recorded.run.run_id,
      pairs.filter((p) => ids.has(p.match_id)),
      ctx,
    );
    return { ...recorded, position: Math.max(recorded.position, matchesAt), duplicate: true };
  }
  const matchesAt = await openMemberMatches(bus, run.run_id, pairs, ctx);
  return { run, post, position: Math.max(result.position, matchesAt), duplicate: result.duplicate };
}

/**
 * Opens the member match of each pair on `match-<id>` (a second append, like an approved
 * introduction's): a pair already matched (by an earlier run) appends nothing. Answers the
 * position of the last append (0 when there was none).
 */
async function openMemberMatches(bus: CommandBus, runId: string, pairs: MemberPair[], ctx: CommandContext): Promise<number> {
  let position = 0;
  for (const p of pairs) {
    const create: CreateMatch = {
      type: 'CreateMatch',
      data: {
        user_a_id: p.user_a_id,
        user_b_id: p.user_b_id,
        reason: `Matching run ${runId} matched your agents (with ${p.agent_name})`.slice(0, 500),
        users_exist: true,
        created_by: `run:${runId}`,
      },
      metadata: { now: ctx.now, match_id: p.match_id },
    };
    const r = await bus.handle<MatchState, MatchEvent, MatchCreated[]>(matchStream(p.match_id), matchAggregate, (s) => decideCreateMatch(create, s), {
      ...ctx,
      commandId: `${ctx.commandId}:match:${p.match_id}`,
    });
    if (r.events.length > 0 && !r.duplicate) position = Math.max(position, r.position);
  }
  return position;
}

/** The recorded run (and its auto-post) of a retried command, read back from the runner's stream. */
async function recordedRun(bus: CommandBus, agentId: string, runId: string): Promise<Omit<MatchingRunResult, 'duplicate'>> {
  // Reading backwards, the run's auto-post (appended right after it) is met before the run.
  const posts = new Map<string, PostPublished['data']>();
  let before: number | undefined;
  for (;;) {
    const page = await bus.log.readStream(agentStream(agentId), { direction: 'backwards', fromRevision: before, maxCount: 200 });
    for (const recorded of page) {
      const e = agentStreamEvent(recorded);
      if (e.type === 'PostPublished' && e.data.source === 'mixer') posts.set(e.data.post_id, e.data);
      if (e.type === 'MatchingRunCompleted' && e.data.run_id === runId) {
        const data = e.data;
        const post = data.auto_post.status === 'published' ? (posts.get(data.auto_post.post_id) ?? null) : null;
        return { run: data, post, position: e.position };
      }
    }
    const last = page[page.length - 1];
    if (page.length < 200 || !last || last.revision === 0) throw notFound('Matching run', 'run_not_found');
    before = last.revision - 1;
  }
}
