import type { ReadModel } from '../../projections/store/port.ts';

// Person research and meeting rationale (shared DECISIONS "Generated text"): from profile data
// only, by templates and ranking, offline and deterministic (same profiles, same text).

const label = (slug: string) => slug.replace(/-/g, ' ');
const list = (items: string[]) => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);
const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** A short research brief on a member: who they are, what they offer and seek, and openers to use. */
export function researchPerson(member: ReadModel<'members'>, agents: Array<ReadModel<'agents'>>) {
  const name = str(member.full_name) ?? 'This member';
  const headline = str(member.headline);
  const industry = str(member.industry);
  const region = str(member.region);
  const gives = strs(member.gives);
  const asks = strs(member.asks);
  const caps = [...new Set(agents.flatMap((a) => strs(a.capabilities)))].sort();
  const summary = [
    `${name}${headline ? `, ${headline}` : ''}${industry ? `, works in ${label(industry)}` : ''}${region ? ` (${region})` : ''}.`,
    gives.length ? `Offers ${list(gives.map(label))}.` : null,
    asks.length ? `Looking for ${list(asks.map(label))}.` : null,
    agents.length
      ? `Runs ${agents.length} agent${agents.length === 1 ? '' : 's'}${caps.length ? ` covering ${list(caps.slice(0, 5).map(label))}` : ''}.`
      : null,
  ]
    .filter(Boolean)
    .join(' ');
  const bio = str(member.bio);
  const highlights = [
    headline,
    bio ? (bio.length > 200 ? `${bio.slice(0, 199)}…` : bio) : null,
    ...gives.slice(0, 3).map((g) => `Can help with ${label(g)}`),
  ].filter((x): x is string => Boolean(x));
  const talking_points = [
    ...asks.slice(0, 3).map((a) => `Ask what kind of ${label(a)} would help most right now.`),
    ...gives.slice(0, 2).map((g) => `Ask about their experience with ${label(g)}.`),
  ];
  if (talking_points.length === 0) talking_points.push(`Ask ${name.split(' ')[0]} what they are working on this quarter.`);
  return { user_id: member._id, name, summary, highlights, talking_points, sources: ['profile'] };
}

/**
 * Why the asking side (an agent's capabilities and its owner's gives and asks) should meet a
 * member: complementary terms first (what one offers that the other seeks), then shared interests
 * and industry, each a reason; the score counts them (2 per complementary term, 1 per shared one).
 */
export function whyMeet(me: { name: string; gives: string[]; asks: string[]; industry: string | null }, member: ReadModel<'members'>) {
  const theirGives = strs(member.gives);
  const theirAsks = strs(member.asks);
  const youHelp = theirAsks.filter((a) => me.gives.includes(a));
  const theyHelp = theirGives.filter((g) => me.asks.includes(g));
  const shared = [...new Set([...theirGives.filter((g) => me.gives.includes(g)), ...theirAsks.filter((a) => me.asks.includes(a))])].sort();
  const name = str(member.full_name) ?? 'this member';
  const reasons: string[] = [];
  if (theyHelp.length) reasons.push(`${name} offers ${list(theyHelp.map(label))}, which ${me.name} is looking for.`);
  if (youHelp.length) reasons.push(`${me.name} can offer ${list(youHelp.map(label))}, which ${name} is looking for.`);
  if (shared.length) reasons.push(`You share an interest in ${list(shared.map(label))}.`);
  const industry = str(member.industry);
  if (industry && me.industry === industry) reasons.push(`You both work in ${label(industry)}.`);
  const score = 2 * (youHelp.length + theyHelp.length) + shared.length + (industry && me.industry === industry ? 1 : 0);
  const text = reasons.length
    ? reasons.join(' ')
    : `No overlap on the profiles yet: ${name}'s headline is "${str(member.headline) ?? 'not set'}"; a short intro can find common ground.`;
  return { user_id: member._id, score, bilateral: youHelp.length > 0 && theyHelp.length > 0, they_give: theyHelp, they_ask: youHelp, shared, reasons, text };
}
