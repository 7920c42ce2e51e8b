import { createHash } from 'node:crypto';

// Generated text, offline and deterministic (DECISIONS.md "Generated text"): templates filled from
// profile and post data; the variant is chosen by a hash of the inputs, so the same inputs always
// give the same text.

const pick = <T>(options: readonly T[], ...seed: string[]): T => {
  const h = createHash('sha256').update(seed.join('\u0000')).digest();
  return options[h.readUInt32BE(0) % options.length];
};

const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1).trimEnd()}…`);
const human = (slug: string) => slug.replace(/-/g, ' ');
const list = (items: string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);

export interface DraftInput {
  post: { post_id: string; title: string; body: string; agent_name: string; hashtags: string[]; room_slug: string | null };
  agent: { agent_id: string; name: string; capabilities: string[] };
  brief?: string;
}

/** A comment draft (at most 1,000 characters, the comment limit). */
export function draftComment(input: DraftInput): string {
  const { post, agent } = input;
  const caps = agent.capabilities.slice(0, 3).map(human);
  const topic = post.hashtags.length ? `#${post.hashtags[0]}` : post.room_slug ? human(post.room_slug) : `"${clip(post.title, 80)}"`;
  const opening = pick(
    [
      `Thanks for sharing "${clip(post.title, 120)}", ${post.agent_name}.`,
      `Great point in "${clip(post.title, 120)}", ${post.agent_name}.`,
      `"${clip(post.title, 120)}" is a timely one, ${post.agent_name}.`,
    ],
    post.post_id,
    agent.agent_id,
    'open',
  );
  const middle = input.brief?.trim()
    ? `${clip(input.brief.trim().replace(/\s+/g, ' '), 400)}`
    : `From our work on ${list(caps) || 'networking'}, this resonates with what we see around ${topic}.`;
  const close = pick(
    ['Happy to compare notes if useful.', 'What would be the most helpful next step for you?', 'Would an intro to others working on this help?'],
    post.post_id,
    agent.agent_id,
    'close',
  );
  return clip(`${opening} ${middle} ${close}`, 1000);
}

export interface Member {
  user_id: string;
  full_name: string;
  capabilities: string[];
}

/** Three conversation starters for a match, from the other member's profile and the match reason. */
export function openers(matchId: string, me: Member, them: Member, reason: string | null): string[] {
  const first = them.full_name.split(/\s+/)[0] || them.full_name;
  const shared = them.capabilities.filter((c) => me.capabilities.includes(c)).map(human);
  const theirs = them.capabilities.slice(0, 2).map(human);
  const out = [
    reason
      ? `Hi ${first}, we were matched because of ${clip(reason, 120)}. What are you focused on right now?`
      : `Hi ${first}, great to be matched. What are you focused on right now?`,
    shared.length
      ? `We both work on ${list(shared.slice(0, 2))}. What has worked best for you there lately?`
      : theirs.length
        ? `I saw you work on ${list(theirs)}. What kind of partners are you looking for?`
        : `What kind of introductions would be most useful to you this month?`,
    pick(
      [
        `Would a 20-minute call next week make sense?`,
        `Is there someone in your network I could introduce you to?`,
        `What is one problem I might be able to help with?`,
      ],
      matchId,
      me.user_id,
    ),
  ];
  return out;
}

/** Four short replies to the latest message received in a conversation. */
export function quickReplies(matchId: string, lastReceived: { message_id: string; content: string } | null, them: { full_name: string }): string[] {
  const first = them.full_name.split(/\s+/)[0] || them.full_name;
  if (!lastReceived)
    return [`Hi ${first}, nice to meet you!`, 'What are you working on at the moment?', 'Would a short call next week suit you?', 'How can I help?'];
  const text = lastReceived.content.toLowerCase();
  if (text.includes('?')) {
    if (/\b(call|meet|chat|time|when)\b/.test(text))
      return ['Sure, happy to. What time suits you?', 'Yes, let me share a few slots.', 'Could we do it async first?', 'Not this week, but next week works.'];
    return [
      'Good question, let me think and come back to you.',
      'Short answer: yes.',
      'Could you tell me a bit more?',
      `Thanks ${first}, here is what I would suggest:`,
    ];
  }
  if (/\b(thanks|thank you|cheers)\b/.test(text)) return ['You are welcome!', 'Anytime, glad it helped.', 'Let me know how it goes.', 'Happy to help further.'];
  return pick(
    [
      [`Thanks ${first}, that makes sense.`, 'Interesting, tell me more.', 'Shall we set up a quick call?', 'Let me get back to you on this.'],
      [`Got it, thanks ${first}.`, 'That sounds promising.', 'Who else should we involve?', 'What would the next step be?'],
    ],
    matchId,
    lastReceived.message_id,
  );
}
