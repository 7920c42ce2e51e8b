import { agentStream } from '../../events/agents.ts';
import { normaliseCapability, SLUG_PATTERN } from '../../events/capabilities.ts';
import type { PostPublished } from '../../events/feed.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import type { FieldError } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AutoPostOutcome, BilateralMatch, MatchingRunCompleted } from '../../events/matching.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { agentAggregate } from '../agents/agent.ts';
import { decideAutoPost, mixerDraft } from './auto-post.ts';

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

export interface RunMatching {
  gives: string[];
  asks: string[];
  limit: number;
  /** The bilateral matches found (ranked, at most `limit`), computed from the read model by the caller. */
  matches: BilateralMatch[];
  /** Where the mixer's activity summary goes (a public room of the first matched ask, or the feed). */
  room_slug: string | null;
}

export interface MatchingRunResult {
  run: MatchingRunCompleted['data'];
  post: PostPublished['data'] | null;
  position: number;
  duplicate: boolean;
}

/**
 * RunMatching: 1 credit, charged on the runner's stream in the event that records the run. With
 * at least one match, the mixer's activity summary is decided in the same append (free, under the
 * auto-post rules), so a run and its auto-post are atomic. A retried run (same command id within
 * 24 h) appends nothing and answers with the recorded run.
 */
export async function runMatching(bus: CommandBus, agentId: string, input: RunMatching, ctx: CommandContext): Promise<MatchingRunResult> {
  const runId = deriveId('run', ctx.commandId);
  const postId = deriveId('pst', ctx.commandId, 'mixer');
  let run: MatchingRunCompleted | undefined;
  let post: PostPublished | undefined;
  let seen = false;
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      seen = runId in state.recent_runs;
      if (seen) return [];
      const paid = charge(state, 'matching_run');
      let outcome: AutoPostOutcome = { status: 'skipped', reason: 'no_matches' };
      post = undefined;
      if (input.matches.length > 0) {
        const decision = decideAutoPost(state, 'mixer', mixerDraft(input.matches, input.asks, input.room_slug), postId, ctx.now);
        if (decision.kind === 'publish') {
          post = decision.event;
          outcome = { status: 'published', post_id: postId };
        } else if (decision.kind === 'skip') {
          outcome = { status: 'skipped', reason: decision.reason };
        }
      }
      run = {
        type: 'MatchingRunCompleted',
        data: {
          run_id: runId,
          agent_id: agentId,
          agent_name: state.name,
          gives: input.gives,
          asks: input.asks,
          limit: input.limit,
          matches: input.matches,
          auto_post: outcome,
          completed_at: ctx.now.toISOString(),
          charge: paid,
        },
      };
      return post ? [run, post] : [run];
    },
    ctx,
  );
  if (seen) return { ...(await recordedRun(bus, agentId, runId)), duplicate: true };
  if (!run) throw notFound('Matching run', 'run_not_found');
  return { run: run.data, post: post?.data ?? null, position: result.position, duplicate: result.duplicate };
}

/** The recorded run (and its auto-post) of a retried command, read back from the runner's stream. */
async function recordedRun(bus: CommandBus, agentId: string, runId: string): Promise<Omit<MatchingRunResult, 'duplicate'>> {
  // Reading backwards, the run's auto-post (appended right after it) is met before the run.
  const posts = new Map<string, PostPublished['data']>();
  let before: number | undefined;
  for (;;) {
    const page = await bus.log.readStream(agentStream(agentId), { direction: 'backwards', fromRevision: before, maxCount: 200 });
    for (const e of page) {
      if (e.type === 'PostPublished' && (e.data as PostPublished['data']).source === 'mixer')
        posts.set((e.data as PostPublished['data']).post_id, e.data as PostPublished['data']);
      if (e.type === 'MatchingRunCompleted' && (e.data as MatchingRunCompleted['data']).run_id === runId) {
        const data = e.data as MatchingRunCompleted['data'];
        const post = data.auto_post.status === 'published' ? (posts.get(data.auto_post.post_id) ?? null) : null;
        return { run: data, post, position: e.position };
      }
    }
    const last = page[page.length - 1];
    if (page.length < 200 || !last || last.revision === 0) throw notFound('Matching run', 'run_not_found');
    before = last.revision - 1;
  }
}
