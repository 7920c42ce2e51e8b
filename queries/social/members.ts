import MiniSearch from 'minisearch';
import { searchTerms } from '../../events/feed.ts';
import type { Filter, ReadModel, ReadStore } from '../../projections/store/port.ts';

export type MemberDoc = ReadModel<'members'>;
export type IntroDoc = ReadModel<'intros'>;
import type { Cursor } from '../cursor.ts';
import { encodeCursor } from '../cursor.ts';
import { pageBySeq } from './paging.ts';

/** A member as any response shows them: the profile, never an e-mail address. */
export function memberView(d: MemberDoc) {
  return {
    user_id: d._id,
    full_name: d.full_name,
    headline: d.headline ?? null,
    bio: d.bio ?? null,
    industry: d.industry ?? null,
    region: d.region ?? null,
    gives: d.gives ?? [],
    asks: d.asks ?? [],
    agent_count: (d.agent_ids ?? []).length,
    updated_at: d.updated_at ?? null,
  };
}

export async function getMember(store: ReadStore, userId: string): Promise<MemberDoc | null> {
  return store.collection('members').findOne({ _id: userId });
}

const FULL_NAME = { full_name: 1 } as const;
/** A member's full name as their posts sign it, or null when the member has none. */
export async function memberName(store: ReadStore, userId: string): Promise<string | null> {
  const m = await store.collection('members').findOne({ _id: userId }, { projection: FULL_NAME });
  return typeof m?.full_name === 'string' ? m.full_name : null;
}

/** A member the directory may show: discoverable. */
export async function getListedMember(store: ReadStore, userId: string): Promise<MemberDoc | null> {
  const m = await getMember(store, userId);
  return m && m.dir_listed === true ? m : null;
}

/**
 * The member directory (`GET /api/members`): discoverable members, newest profile first, paged by
 * page and limit. With `q`, members having every term of it: the index range of one term (the
 * longest, as the likeliest to be rare; with `industry`, of that term and industry), the other
 * terms checked on those documents; with `industry` alone, that industry's index.
 */
export async function searchMembers(store: ReadStore, opts: { q?: string; industry?: string; skip: number; limit: number; after?: Cursor }) {
  const terms = opts.q ? searchTerms(opts.q, 8).sort((a, b) => b.length - a.length || (a < b ? -1 : 1)) : [];
  let filter: Filter;
  let hint: string;
  if (terms.length > 0) {
    filter = terms.length === 1 ? { dir_terms: terms[0] } : { $and: terms.map((t) => ({ dir_terms: t })) };
    hint = 'dir_terms';
    if (opts.industry) {
      filter.dir_industry = opts.industry;
      hint = 'dir_terms_industry';
    }
  } else if (opts.industry) {
    filter = { dir_industry: opts.industry };
    hint = 'dir_industry';
  } else {
    filter = { dir_listed: true };
    hint = 'dir_all';
  }
  // After a newest-first cursor (the next_cursor of an earlier page): the members before it.
  const page: Filter = opts.after?.older ? { ...filter, seq: { $lt: opts.after.position } } : filter;
  const docs = await store.collection('members').find(page, { sort: { seq: -1 }, skip: opts.after?.older ? 0 : opts.skip, limit: opts.limit + 1, hint });
  const has_more = docs.length > opts.limit;
  const items = has_more ? docs.slice(0, opts.limit) : docs;
  const last = items[items.length - 1];
  const next_cursor = last ? encodeCursor({ position: last.seq, key: last._id, older: true }) : null;
  return { items: items.map(memberView), has_more, next_cursor, filter, hint };
}

const STOPWORDS = new Set(
  'a an and are as at be but by for from has have i in is it looking me my need of on or our someone the to want we who with who can help find people person'.split(
    ' ',
  ),
);

/**
 * Natural-language member search (`POST /api/protocol/match/search`): candidates are the
 * discoverable members with any significant term of the query (term index, at most `perTerm` per
 * term), ranked with MiniSearch (BM25, prefix and fuzzy matching) over name, headline, bio,
 * industry, gives and asks.
 */
export async function matchSearch(store: ReadStore, query: string, limit: number, perTerm = 200) {
  const terms = searchTerms(query, 16).filter((t) => !STOPWORDS.has(t));
  const members = store.collection('members');
  const candidates = new Map<string, MemberDoc>();
  for (const t of terms.slice(0, 8)) {
    for (const d of await members.find({ dir_terms: t }, { sort: { seq: -1 }, limit: perTerm, hint: 'dir_terms' })) candidates.set(d._id, d);
  }
  if (candidates.size === 0) return { terms, results: [] };
  const index = new MiniSearch<{ id: string; name: string; headline: string; bio: string; industry: string; gives: string; asks: string }>({
    fields: ['name', 'headline', 'bio', 'industry', 'gives', 'asks'],
    tokenize: (text) => text.split(/[\s\-_,.;:!?()]+/).filter(Boolean),
    processTerm: (t) => (STOPWORDS.has(t.toLowerCase()) ? null : t.toLowerCase()),
    searchOptions: { prefix: true, fuzzy: 0.2, boost: { gives: 3, headline: 2, asks: 1.5 }, combineWith: 'OR' },
  });
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const list = (v: unknown) => (Array.isArray(v) ? v.join(' ') : '');
  index.addAll(
    [...candidates.values()].map((d) => ({
      id: d._id,
      name: str(d.full_name),
      headline: str(d.headline),
      bio: str(d.bio),
      industry: str(d.industry),
      gives: list(d.gives),
      asks: list(d.asks),
    })),
  );
  const results = index
    .search(query)
    .slice(0, limit)
    .flatMap((h) => {
      const d = candidates.get(String(h.id));
      if (d === undefined) return [];
      return [
        {
          ...memberView(d),
          score: Math.round(h.score * 100) / 100,
          matched_terms: h.terms,
          matched_fields: [...new Set(Object.values(h.match).flat())].sort(),
        },
      ];
    });
  return { terms, results };
}

/**
 * Bilateral matching between an agent's (or anyone's) gives and asks and the members': a member
 * whose asks meet the gives and whose gives meet the asks. Score: 2 per term matched on both sides
 * (a bilateral match), 1 per one-sided term; bilateral matches first. Index-served (gives and asks).
 */
export async function bilateralMembers(store: ReadStore, input: { gives: string[]; asks: string[]; exclude?: string }, limit: number, perTerm = 200) {
  const members = store.collection('members');
  const found = new Map<string, MemberDoc>();
  for (const g of input.gives)
    for (const d of await members.find({ dir_asks: g }, { sort: { seq: -1 }, limit: perTerm, hint: 'dir_asks' })) found.set(d._id, d);
  for (const a of input.asks)
    for (const d of await members.find({ dir_gives: a }, { sort: { seq: -1 }, limit: perTerm, hint: 'dir_gives' })) found.set(d._id, d);
  const scored = [...found.values()]
    .filter((d) => d._id !== input.exclude)
    .map((d) => {
      const theyAsk = (d.asks ?? []).filter((x) => input.gives.includes(x));
      const theyGive = (d.gives ?? []).filter((x) => input.asks.includes(x));
      const bilateral = theyAsk.length > 0 && theyGive.length > 0;
      return {
        member: memberView(d),
        they_give: theyGive,
        they_ask: theyAsk,
        bilateral,
        score: theyAsk.length + theyGive.length + (bilateral ? theyAsk.length + theyGive.length : 0),
      };
    });
  scored.sort((a, b) => Number(b.bilateral) - Number(a.bilateral) || b.score - a.score || (a.member.user_id < b.member.user_id ? -1 : 1));
  return scored.slice(0, limit);
}

/** Builders: discoverable members with a claimed agent, newest first, cursor-paged; filters capability (of their agents) and industry. */
export async function listBuilders(store: ReadStore, opts: { capability?: string; industry?: string; cursor: Cursor | null; limit: number }) {
  let filter: Filter = { builder_listed: true };
  let hint = 'builders';
  if (opts.capability) {
    filter = { builder_caps: opts.capability };
    hint = 'builders_by_cap';
    if (opts.industry) filter.builder_industry = opts.industry;
  } else if (opts.industry) {
    filter = { builder_industry: opts.industry };
    hint = 'builders_by_industry';
  }
  return pageBySeq(store.collection('members'), filter, { ...opts, hint });
}

/** A member's pending introductions (not expired), newest first. */
export async function pendingIntros(store: ReadStore, userId: string, now: Date, limit = 50) {
  const docs = await store.collection('intros').find({ member_id: userId, status: 'pending' }, { sort: { seq: -1 }, limit: limit * 2 });
  return docs.filter((d) => d.expires_at > now.toISOString()).slice(0, limit);
}

export async function getIntro(store: ReadStore, introId: string): Promise<IntroDoc | null> {
  return store.collection('intros').findOne({ _id: introId });
}

/** Whether the agent already has a live pending request to the member. */
export async function hasPendingIntro(store: ReadStore, agentId: string, memberId: string, now: Date): Promise<boolean> {
  const docs = await store.collection('intros').find({ agent_id: agentId, member_id: memberId, status: 'pending' }, { limit: 5 });
  return docs.some((d) => d.expires_at > now.toISOString());
}

export function introView(d: IntroDoc) {
  return {
    intro_id: d._id,
    agent_id: d.agent_id,
    agent_name: d.agent_name,
    member_id: d.member_id,
    reason: d.reason,
    status: d.status,
    match_id: d.match_id ?? null,
    requested_at: d.requested_at,
    expires_at: d.expires_at,
    decided_at: d.decided_at ?? null,
  };
}
