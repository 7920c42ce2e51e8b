import Router from '@koa/router';
import type { MatchingReads } from '../../../commands/matching/matching.ts';
import { runMatching } from '../../../commands/matching/matching.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { MATCH_LIMIT_MAX, MATCH_TERMS_MAX } from '../../../events/matching.ts';
import { findRoom } from '../../../queries/feed/posts.ts';
import { agentsNeeding, blockedEitherWay, memberOwnerOf, standingProfile, standingProfiles } from '../../../queries/matching/matching.ts';
import type { ReadStore } from '../../../projections/store/port.ts';
import { requireApiKey } from '../../auth.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { commandContext, settled } from '../util.ts';
import { mount, operations } from '../../operations.ts';
import { PostAgentMatchAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

/** Raw terms: at most 20 per list, each 1-60 characters before normalisation. */
const terms = (minItems: number) => ({ type: 'array', minItems, maxItems: MATCH_TERMS_MAX, items: { type: 'string', minLength: 1, maxLength: 60 } });

interface MatchBody {
  gives: string[];
  asks: string[];
  limit?: number;
}

export const matchSchema = typed<MatchBody>({
  type: 'object',
  additionalProperties: false,
  required: ['gives', 'asks'],
  properties: {
    gives: terms(0),
    asks: terms(1),
    limit: { type: 'integer', minimum: 1, maximum: MATCH_LIMIT_MAX },
  },
});

/** The read models a matching run consults, as the command takes them. */
export function matchingReads(store: ReadStore): MatchingReads {
  return {
    standingProfile: (agentId) => standingProfile(store, agentId),
    agentsNeeding: (terms, exclude) => agentsNeeding(store, terms, exclude),
    blockedEitherWay: (a, b) => blockedEitherWay(store, a, b),
    roomOf: async (term) => (await findRoom(store, term))?._id ?? null,
    memberOwnerOf: (agentId) => memberOwnerOf(store, agentId),
  };
}

/** `POST /api/agent/match` (K, 1 credit): a matching run on gives and asks. */
export const matchingOperations = operations({
  postAgentMatch: {
    method: 'POST',
    path: '/api/agent/match',
    summary: 'Run bilateral matching for your agent (gives and asks)',
    tags: ['matching'],
    auth: 'key',
    responses: ok(PostAgentMatchAnswer),
    body: matchSchema,
    rateLimit: LIMITS.writes,
    cost: 'matching_run',
  },
});

export function matchingRoutes(router: Router, s: Services): void {
  const match = new Router({ prefix: '/api/agent/match' });
  mount(match, matchingOperations.postAgentMatch, async (ctx, input) => {
    const agentId = requireApiKey(ctx);
    const body = input.body;
    const r = await runMatching(s.bus, matchingReads(s.store), agentId, body, commandContext(s, ctx, agentId));
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
        member_match_id: m.member_match_id ?? null,
      })),
      count: run.matches.length,
      auto_post: run.auto_post,
      credits_charged: toCredits(run.charge.amount_mc),
      balance: toCredits(run.charge.balance_after_mc),
      created_at: run.completed_at,
    };
  });
  router.use(match.routes());
}
