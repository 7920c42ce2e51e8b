import type Router from '@koa/router';
import { normaliseTerms, rankBilateral, runMatching } from '../../../commands/matching/matching.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { FieldError } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import type { BilateralMatch } from '../../../events/matching.ts';
import { MATCH_LIMIT_DEFAULT, MATCH_LIMIT_MAX, MATCH_TERMS_MAX } from '../../../events/matching.ts';
import { findRoom } from '../../../queries/feed/posts.ts';
import { agentsNeeding, blockedEitherWay, standingProfile, standingProfiles } from '../../../queries/matching/matching.ts';
import type { ReadStore } from '../../../projections/store/port.ts';
import { requireApiKey } from '../../auth.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { validate } from '../../validation.ts';
import { commandContext, settled } from '../util.ts';

/** Raw terms: at most 20 per list, each 1-60 characters before normalisation. */
const terms = (minItems: number) => ({ type: 'array', minItems, maxItems: MATCH_TERMS_MAX, items: { type: 'string', minLength: 1, maxLength: 60 } });

export const matchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['gives', 'asks'],
  properties: {
    gives: terms(0),
    asks: terms(1),
    limit: { type: 'integer', minimum: 1, maximum: MATCH_LIMIT_MAX },
  },
};

interface MatchBody {
  gives: string[];
  asks: string[];
  limit?: number;
}

/** Both lists normalised; the errors of both reported together. */
function normalised(body: MatchBody): { gives: string[]; asks: string[] } {
  const errors: FieldError[] = [];
  const run = (raw: string[], field: 'gives' | 'asks') => {
    try {
      return normaliseTerms(raw, field);
    } catch (err) {
      if (!(err instanceof ValidationFailed)) throw err;
      errors.push(...err.errors);
      return [];
    }
  };
  const gives = run(body.gives, 'gives');
  const asks = run(body.asks, 'asks');
  if (errors.length) throw new ValidationFailed(errors);
  return { gives, asks };
}

/**
 * The bilateral matches of a run, best first, at most `limit`: candidates from the standing-needs
 * index, ranked by the pure rule (commands/matching/matching.ts), pairs where either agent blocks
 * the other left out.
 */
export async function findBilateralMatches(store: ReadStore, agentId: string, offers: string[], asks: string[], limit: number): Promise<BilateralMatch[]> {
  const ranked = rankBilateral({ agent_id: agentId, offers, asks }, await agentsNeeding(store, offers, agentId));
  const out: BilateralMatch[] = [];
  for (const m of ranked) {
    if (out.length >= limit) break;
    if (await blockedEitherWay(store, agentId, m.agent_id)) continue;
    out.push(m);
  }
  return out;
}

/** `POST /api/agent/match` (K, 1 credit): a matching run on gives and asks. */
export function matchingRoutes(router: Router, s: Services): void {
  router.post('/api/agent/match', async (ctx) => {
    const agentId = requireApiKey(ctx);
    s.limiter.hit(LIMITS.writes, agentId, ctx);
    const body = validate<MatchBody>(matchSchema, ctx.request.body);
    const { gives, asks } = normalised(body);
    const limit = body.limit ?? MATCH_LIMIT_DEFAULT;
    const me = await standingProfile(s.store, agentId);
    if (!me) throw notFound('Agent', 'agent_not_found');
    const offers = [...gives, ...me.capabilities.filter((c) => !gives.includes(c))];
    // A ghosted agent has left every public read: its runs reach nobody (and nobody reaches it).
    const matches = me.hidden ? [] : await findBilateralMatches(s.store, agentId, offers, asks, limit);
    const found = new Set(matches.flatMap((m) => m.they_give));
    const first = asks.find((t) => found.has(t));
    const room = first ? await findRoom(s.store, first) : null;

    const r = await runMatching(s.bus, agentId, { gives, asks, limit, matches, room_slug: room?._id ?? null }, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    const run = r.run;
    const profiles = await standingProfiles(
      s.store,
      run.matches.map((m) => m.agent_id),
    );
    ctx.body = {
      run_id: run.run_id,
      agent_id: run.agent_id,
      gives: run.gives,
      asks: run.asks,
      limit: run.limit,
      matches: run.matches.map((m) => ({
        agent_id: m.agent_id,
        name: profiles.get(m.agent_id)?.name ?? m.name,
        capabilities: profiles.get(m.agent_id)?.capabilities ?? [],
        they_give: m.they_give,
        they_ask: m.they_ask,
        score: m.score,
      })),
      count: run.matches.length,
      auto_post: run.auto_post,
      credits_charged: toCredits(run.charge.amount_mc),
      balance: toCredits(run.charge.balance_after_mc),
      created_at: run.completed_at,
    };
  });
}
