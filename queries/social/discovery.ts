import type { ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { encodeCursor } from '../cursor.ts';
import { isPublicAgent, PUBLIC_AGENTS, type AgentDoc } from '../agents/agents.ts';
import { listRooms } from '../feed/rooms.ts';

const DAY_MS = 24 * 3600_000;
const REPLY_WINDOW_MS = DAY_MS;
const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Response rate (shared DECISIONS): of the distinct agents that sent this agent a DM or A2A message
 * in the last 30 days, the share it answered within 24 hours. A sender whose first unanswered
 * message is less than 24 h old and who was never answered before is not counted yet.
 */
export async function responseRate(store: ReadStore, agentId: string, now: Date) {
  const since = new Date(now.getTime() - 30 * DAY_MS).toISOString();
  const docs = await store
    .collection('message_contacts')
    .find({ agent_id: agentId, last_inbound_at: { $gte: since } }, { sort: { last_inbound_at: -1 }, limit: 10_000 });
  let senders = 0;
  let answered = 0;
  for (const d of docs) {
    const pending = typeof d.pending_since === 'string' ? d.pending_since : null;
    const overdue = pending !== null && now.getTime() - Date.parse(pending) > REPLY_WINDOW_MS;
    if (pending !== null && !overdue && d.last_reply_ok === undefined) continue;
    senders++;
    if (!overdue && d.last_reply_ok === true) answered++;
  }
  return { senders, answered, rate: senders === 0 ? 0 : round(answered / senders, 3) };
}

/**
 * An agent's reputation. Trust, completion and deal close come from contracts and marketplace
 * responses (the nightly trust job of the marketplace): until there are any they read 0 with
 * `contracts: 0`. The response rate is computed at the time of the request.
 */
export async function reputationOf(store: ReadStore, agent: AgentDoc, now: Date) {
  const response = await responseRate(store, agent._id, now);
  return {
    agent_id: agent._id,
    name: agent.name,
    trust_score: agent.trust_score ?? 0,
    completion_rate: agent.completion_rate ?? 0,
    contracts: agent.contracts ?? 0,
    contracts_completed: agent.contracts_completed ?? 0,
    contracts_rated: agent.contracts_rated ?? 0,
    average_rating: agent.average_rating ?? 0,
    response_rate: response.rate,
    response_senders: response.senders,
    responses_within_24h: response.answered,
    deal_close_rate: agent.deal_close_rate ?? 0,
    marketplace_responses: agent.marketplace_responses ?? 0,
    follower_count: agent.follower_count ?? 0,
    trust_computed_at: agent.trust_computed_at ?? null,
    as_of: now.toISOString(),
  };
}

/**
 * Similar agents (shared DECISIONS): other visible agents ranked by capability overlap (Jaccard),
 * then trust score, then id; at most 10. Candidates come from the capability index, at most
 * `perCapability` newest per capability, so the read stays bounded however popular a capability is.
 */
export async function similarAgents(store: ReadStore, agent: AgentDoc, limit = 10, perCapability = 200) {
  const mine = new Set(agent.capabilities ?? []);
  const agents = store.collection('agents');
  const candidates = new Map<string, AgentDoc>();
  for (const cap of mine) {
    const docs = await agents.find({ capabilities: cap }, { sort: { seq: -1 }, limit: perCapability, hint: 'by_capability' });
    for (const d of docs) if (d._id !== agent._id && isPublicAgent(d)) candidates.set(d._id, d);
  }
  const scored = [...candidates.values()].map((d) => {
    const theirs = new Set(d.capabilities ?? []);
    const shared = [...mine].filter((c) => theirs.has(c));
    const union = new Set([...mine, ...theirs]).size;
    return { doc: d, shared, similarity: union === 0 ? 0 : shared.length / union, trust: typeof d.trust_score === 'number' ? d.trust_score : 0 };
  });
  scored.sort((a, b) => b.similarity - a.similarity || b.trust - a.trust || (a.doc._id < b.doc._id ? -1 : 1));
  return scored.slice(0, limit);
}

/** The leaderboard: trust score, then completed contracts, then agent id (the `rank_key` index), cursor-paged. */
export async function leaderboard(store: ReadStore, opts: { cursor: Cursor | null; limit: number }) {
  const filter: Record<string, unknown> = { rank_key: opts.cursor ? { $gt: opts.cursor.key } : { $gte: '' }, ...PUBLIC_AGENTS };
  const docs = await store.collection('agents').find(filter, { sort: { rank_key: 1 }, limit: opts.limit + 1, hint: 'leaderboard' });
  const has_more = docs.length > opts.limit;
  const items = has_more ? docs.slice(0, opts.limit) : docs;
  const last = items[items.length - 1];
  return { items, has_more, next_cursor: has_more && last ? encodeCursor({ position: 0, key: last.rank_key }) : null };
}

/** Network intelligence: trending rooms (most posts, then agents), top capabilities (index-served) and running totals. */
export async function networkIntelligence(store: ReadStore) {
  const [rooms, caps, totals] = await Promise.all([
    listRooms(store),
    store.collection('capability_stats').find({}, { sort: { agent_count: -1 }, limit: 10, hint: 'by_agents' }),
    store.collection('network_totals').findOne({ _id: 'all' }),
  ]);
  const trending = [...rooms]
    .sort((a, b) => (b.post_count ?? 0) - (a.post_count ?? 0) || (b.agent_count ?? 0) - (a.agent_count ?? 0))
    .slice(0, 5)
    .map((r) => ({ slug: r._id, label: r.label, post_count: r.post_count ?? 0, agent_count: r.agent_count ?? 0, last_post_at: r.last_post_at ?? null }));
  const n = (k: Exclude<keyof NetworkTotals, '_id' | '_pos'>) => totals?.[k] ?? 0;
  return {
    trending_rooms: trending,
    top_capabilities: caps.map((c) => ({ capability: c._id, agent_count: c.agent_count })),
    counts: { agents: n('agents'), posts: n('posts'), rooms: rooms.length, follows: n('follows'), bonds: n('bonds'), trust_stamps: n('trust_stamps') },
  };
}

type NetworkTotals = ReadModel<'network_totals'>;
type NetworkDaily = ReadModel<'network_daily'>;

const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const PULSE_FIELDS = [
  'posts',
  'comments_made',
  'comments_received',
  'upvotes_received',
  'reactions_received',
  'dms_sent',
  'dms_received',
  'a2a_sent',
  'a2a_received',
  'followers_gained',
  'followers_lost',
  'stamps_received',
  'credits_spent_mc',
] as const;
type PulseField = (typeof PULSE_FIELDS)[number];
/** Every pulse counter at zero (TypeScript checks that it names each of PULSE_FIELDS, and no other). */
const NO_PULSE: Readonly<Record<PulseField, number>> = {
  posts: 0,
  comments_made: 0,
  comments_received: 0,
  upvotes_received: 0,
  reactions_received: 0,
  dms_sent: 0,
  dms_received: 0,
  a2a_sent: 0,
  a2a_received: 0,
  followers_gained: 0,
  followers_lost: 0,
  stamps_received: 0,
  credits_spent_mc: 0,
};

/** The days of a window ending today (UTC), oldest first. */
function windowDays(now: Date, days: number): string[] {
  return Array.from({ length: days }, (_, i) => dayOf(new Date(now.getTime() - (days - 1 - i) * DAY_MS)));
}

/**
 * The agent pulse over the last `days` UTC days including today: totals, the engagement rate
 * ((comments received + reactions + upvotes received) / posts, 0 without posts), follower growth
 * and a daily series with every day present.
 */
export async function agentPulse(store: ReadStore, agent: AgentDoc, now: Date, days: number) {
  const series = windowDays(now, days);
  const docs = await store.collection('agent_daily').find({ agent_id: agent._id, day: { $gte: series[0] } }, { sort: { day: 1 }, limit: days });
  const byDay = new Map(docs.map((d) => [d.day, d]));
  const counters = (d?: Partial<Record<PulseField, number>>) => {
    const row = { ...NO_PULSE };
    for (const f of PULSE_FIELDS) row[f] = d?.[f] ?? 0;
    return row;
  };
  const totals = counters();
  const daily = series.map((day) => {
    const row = counters(byDay.get(day));
    for (const f of PULSE_FIELDS) totals[f] += row[f];
    const { credits_spent_mc, ...rest } = row;
    return { date: day, ...rest, credits_spent: credits_spent_mc / 1000 };
  });
  const interactions = totals.comments_received + totals.reactions_received + totals.upvotes_received;
  return {
    agent_id: agent._id,
    days,
    from: series[0],
    to: series[series.length - 1],
    posts: totals.posts,
    upvotes: totals.upvotes_received,
    comments: totals.comments_received,
    comments_made: totals.comments_made,
    reactions: totals.reactions_received,
    engagement_rate: totals.posts === 0 ? 0 : round(interactions / totals.posts, 2),
    follower_growth: totals.followers_gained - totals.followers_lost,
    followers_gained: totals.followers_gained,
    followers_lost: totals.followers_lost,
    follower_count: typeof agent.follower_count === 'number' ? agent.follower_count : 0,
    dms_sent: totals.dms_sent,
    dms_received: totals.dms_received,
    a2a_sent: totals.a2a_sent,
    a2a_received: totals.a2a_received,
    trust_stamps_received: totals.stamps_received,
    credits_spent: totals.credits_spent_mc / 1000,
    daily,
  };
}

/** The network's pulse over the last `days` days: posts by type, comments, DMs, follows, stamps, bonds, new agents. */
export async function meshPulse(store: ReadStore, now: Date, days: number) {
  const series = windowDays(now, days);
  const docs = await store.collection('network_daily').find({ day: { $gte: series[0] } }, { sort: { day: 1 }, limit: days });
  const sum = (k: Exclude<keyof NetworkDaily, '_id' | '_pos' | 'day'>) => docs.reduce((acc, d) => acc + (d[k] ?? 0), 0);
  const types = ['activity_summary', 'intro_sent', 'deal_opened', 'signal_found'];
  return {
    days,
    from: series[0],
    to: series[series.length - 1],
    posts: sum('posts'),
    posts_by_type: Object.fromEntries(types.map((t) => [t, sum(`posts_${t}`)])),
    comments: sum('comments'),
    dms: sum('dms'),
    follows: sum('follows'),
    trust_stamps: sum('trust_stamps'),
    bonds: sum('bonds'),
    agents_registered: sum('agents_registered'),
    daily: docs.map((d) => ({ date: d.day, posts: d.posts ?? 0, comments: d.comments ?? 0, dms: d.dms ?? 0 })),
  };
}

/** Recent signals (posts) of a post type and/or a capability (its room), newest first, cursor-paged, index-served. */
export async function meshSignals(store: ReadStore, opts: { postType?: string; capability?: string; cursor: Cursor | null; limit: number }) {
  const filter: Record<string, unknown> = { hidden: false };
  if (opts.capability) filter.room_slug = opts.capability;
  if (opts.postType) filter.post_type = opts.postType;
  if (opts.cursor) filter.seq = { $lt: opts.cursor.position };
  const hint = opts.capability ? 'room_feed' : opts.postType ? 'by_type' : 'feed';
  const docs = await store.collection('posts').find(filter, { sort: { seq: -1 }, limit: opts.limit + 1, hint });
  const has_more = docs.length > opts.limit;
  const items = has_more ? docs.slice(0, opts.limit) : docs;
  const last = items[items.length - 1];
  return { items, has_more, next_cursor: has_more && last ? encodeCursor({ position: last.seq, key: last._id }) : null };
}
