// Event logs for the replay benchmark: a mixed log of the service's everyday writes, and the
// posts-only worst case. Every generated event is checked against its JSON Schema (the catalogue
// the command layer validates appends with), so replay runs the projections' real code paths.
import { Ajv } from 'ajv';
import { createHash, randomUUID } from 'node:crypto';
import { eventSchemas } from '../../events/catalogue.ts';
import type { NewEvent } from '../../events/store/port.ts';
import { schemaVersionOf } from '../../events/upcasters.ts';

/**
 * The mix, per 100 events: an estimate of a busy day on the network, not a measurement (there is
 * no production traffic yet). Posts are the heaviest event (six read models follow one).
 */
export const MIX: Array<[type: string, per100: number]> = [
  ['AgentRegistered', 2],
  ['PostPublished', 15],
  ['CommentAdded', 12],
  ['PostReactionToggled', 18],
  ['CommentUpvoteToggled', 5],
  ['SignalBoosted', 2],
  ['DirectMessageSent', 10],
  ['AgentHeartbeatReceived', 20],
  ['WebhookDeliveryQueued', 8],
  ['WebhookDeliveryAttempted', 8],
];

/**
 * The scale benchmark's mix (test/bench/scale.ts), per 100 events after its agents are registered:
 * the replay mix's everyday writes (its registrations given to posts) with follows, contracts (each
 * opened, then accepted, started, delivered and completed) and credit top-ups.
 */
export const SCALE_MIX: Array<[type: string, per100: number]> = [
  ['PostPublished', 14],
  ['CommentAdded', 12],
  ['PostReactionToggled', 17],
  ['CommentUpvoteToggled', 5],
  ['SignalBoosted', 2],
  ['DirectMessageSent', 10],
  ['AgentHeartbeatReceived', 17],
  ['WebhookDeliveryQueued', 7],
  ['WebhookDeliveryAttempted', 7],
  ['AgentFollowed', 5],
  ['ContractOpened', 1],
  ['ContractTransitioned', 2],
  ['CreditsToppedUp', 1],
];

const ROOMS = ['lead-gen', 'investor-connect', 'b2b-sales', 'talent-matching', 'founder-matching', null];
const hex = (n: number) => n.toString(16).padStart(64, '0');
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
/** Ids shaped like the service's (prefix and 20 random-looking base32 chars), deterministic per n. */
export const id = (prefix: string, n: number) => {
  const digest = createHash('sha1').update(`${prefix}${n}`).digest();
  let out = `${prefix}_`;
  for (let i = 0; i < 20; i++) out += BASE32[digest[i] & 31];
  return out;
};

export interface GeneratedEvent extends NewEvent {
  stream: string;
}

/** A deterministic generator of `count` events (the same log for the same arguments). */
export function* generateLog(kind: 'mix' | 'posts' | 'scale', count: number, scaleAgents = 100_000): Generator<GeneratedEvent> {
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
  const agents: Array<{ id: string; name: string; balance: number }> = [];
  const posts: Array<{ id: string; author: string; room: string | null }> = [];
  const comments: Array<{ id: string; post: string }> = [];
  const deliveries: Array<{ id: string; agent: string }> = [];
  const contracts: Array<{ id: string; requester: string; provider: string; state: number }> = [];
  let openContract = 0; // the first contract not yet completed
  let follows = 0;
  let topups = 0;
  let n = 0;
  const t0 = 1_780_000_000_000;
  const at = () => new Date(t0 + n * 1000).toISOString();
  const charge = (agent: { balance: number }, action: string, amount: number) => {
    agent.balance = Math.max(0, agent.balance - amount);
    return { action, amount_mc: amount, balance_after_mc: agent.balance };
  };
  const event = (type: string, stream: string, data: Record<string, unknown>): GeneratedEvent => ({
    id: randomUUID(),
    type,
    stream,
    data,
    metadata: { actor: null, request_id: null, correlation_id: null, causation_id: randomUUID(), occurred_at: at(), schema_version: schemaVersionOf(type) },
  });
  const wheel: string[] = [];
  for (const [type, k] of kind === 'scale' ? SCALE_MIX : MIX) for (let i = 0; i < k; i++) wheel.push(type);

  const register = (): GeneratedEvent => {
    const agent = { id: id('agt', agents.length), name: `Agent ${agents.length}`, balance: 1_000_000_000 };
    agents.push(agent);
    return event('AgentRegistered', `agent-${agent.id}`, {
      agent_id: agent.id,
      name: agent.name,
      description: 'A benchmark agent that finds leads and opens deals.',
      capabilities: [pick(['lead-gen', 'b2b-sales', 'investor-connect']), `custom-skill-${agents.length % 50}`],
      owner_name: 'Bench Owner',
      owner_email: `owner-${agents.length}@example.com`,
      webhook_url: null,
      webhook_secret_enc: 'v1.bench',
      api_key_hash: hex(agents.length),
      claim_token_hash: hex(agents.length + 1),
      tier: 'free',
      registration_source: 'api',
      intent_type: 'seeker',
      registered_at: at(),
    });
  };
  const post = (): GeneratedEvent => {
    const author = kind === 'posts' ? agents[n % agents.length] : pick(agents);
    const p = { id: id('pst', posts.length), author: author.id, room: kind === 'posts' ? (n % 3 === 0 ? 'lead-gen' : null) : pick(ROOMS) };
    posts.push(p);
    return event('PostPublished', `agent-${author.id}`, {
      post_id: p.id,
      agent_id: author.id,
      agent_name: author.name,
      title: `Post number ${posts.length}`,
      body: `A realistic body for post ${posts.length} with #bench and #replay hashtags and some text to parse.`,
      post_type: 'signal_found',
      room_slug: p.room,
      hashtags: ['bench', 'replay'],
      published_at: at(),
      charge: charge(author, 'post', 100),
    });
  };

  const startAgents = kind === 'posts' ? 5000 : kind === 'scale' ? scaleAgents : 2000;
  while (n < count) {
    let e: GeneratedEvent;
    if (agents.length < startAgents) e = register();
    else if (kind === 'posts' || posts.length < 100) e = post();
    else {
      const type = wheel[n % wheel.length];
      const actor = pick(agents);
      switch (type) {
        case 'AgentRegistered':
          e = register();
          break;
        case 'PostPublished':
          e = post();
          break;
        case 'CommentAdded': {
          const p = pick(posts);
          const c = { id: id('cmt', comments.length), post: p.id };
          comments.push(c);
          e = event('CommentAdded', `agent-${actor.id}`, {
            comment_id: c.id,
            post_id: p.id,
            agent_id: actor.id,
            agent_name: actor.name,
            parent_comment_id: null,
            reply_to_comment_id: null,
            content: `A thoughtful comment number ${comments.length} on this signal.`,
            post_author_id: p.author,
            post_room_slug: p.room,
            created_at: at(),
            charge: charge(actor, 'comment', 100),
          });
          break;
        }
        case 'PostReactionToggled':
          e = event('PostReactionToggled', `post-${pick(posts).id}`, {
            post_id: pick(posts).id,
            agent_id: actor.id,
            reaction: pick(['like', 'insightful', 'celebrate']),
            active: true,
            toggled_at: at(),
          });
          break;
        case 'CommentUpvoteToggled': {
          const c = comments.length > 0 ? pick(comments) : null;
          if (c === null) {
            e = post();
            break;
          }
          e = event('CommentUpvoteToggled', `comment-${c.id}`, { post_id: c.post, comment_id: c.id, agent_id: actor.id, upvoted: true, toggled_at: at() });
          break;
        }
        case 'SignalBoosted': {
          const p = pick(posts);
          e = event('SignalBoosted', `agent-${actor.id}`, {
            post_id: p.id,
            agent_id: actor.id,
            post_author_id: p.author,
            boosted_at: at(),
            charge: charge(actor, 'boost', 100),
          });
          break;
        }
        case 'DirectMessageSent': {
          const to = pick(agents);
          e = event('DirectMessageSent', `agent-${actor.id}`, {
            dm_id: id('dm', n),
            agent_id: actor.id,
            from_agent_id: actor.id,
            from_agent_name: actor.name,
            to_agent_id: to.id,
            to_user_id: null,
            to_email: null,
            message: 'Hello, would you like an intro to a founder in your space?',
            sent_at: at(),
            charge: charge(actor, 'dm', 250),
            owner_user_id: null,
          });
          break;
        }
        case 'AgentFollowed': {
          // Distinct pairs: the i-th follow is agent i's follow of the agent a fixed stride away.
          const follower = agents[follows % agents.length];
          const followed = agents[(follows + 1 + Math.floor(follows / agents.length) * 7919) % agents.length];
          follows++;
          e = event('AgentFollowed', `follow-${follower.id}:${followed.id}`, { agent_id: follower.id, followed_agent_id: followed.id, followed_at: at() });
          break;
        }
        case 'ContractOpened': {
          const provider = pick(agents);
          const c = { id: id('ctr', contracts.length), requester: actor.id, provider: provider.id, state: 0 };
          contracts.push(c);
          e = event('ContractOpened', `contract-${c.id}`, {
            contract_id: c.id,
            intent_id: id('lst', contracts.length),
            response_id: id('rsp', contracts.length),
            requester_id: c.requester,
            provider_id: c.provider,
            title: `Contract number ${contracts.length}`,
            price: 250,
            pricing_type: 'fixed',
            proposed_price: null,
            listing_position: 1,
            response_position: 1,
            opened_at: at(),
          });
          break;
        }
        case 'ContractTransitioned': {
          const c = contracts[openContract];
          if (c === undefined) {
            e = post();
            break;
          }
          const steps = [
            ['accept', 'open', 'accepted', 'provider'],
            ['start', 'accepted', 'in_progress', 'provider'],
            ['deliver', 'in_progress', 'delivered', 'provider'],
            ['complete', 'delivered', 'completed', 'requester'],
          ] as const;
          const [action, from, to, role] = steps[c.state];
          c.state++;
          if (c.state === steps.length) openContract++;
          e = event('ContractTransitioned', `contract-${c.id}`, {
            contract_id: c.id,
            requester_id: c.requester,
            provider_id: c.provider,
            action,
            from,
            to,
            actor_id: role === 'provider' ? c.provider : c.requester,
            actor_role: role,
            note: null,
            rating: action === 'complete' ? 5 : null,
            at: at(),
          });
          break;
        }
        case 'CreditsToppedUp': {
          actor.balance += 50_000;
          topups++;
          e = event('CreditsToppedUp', `payment-order-ord_${topups}`, {
            agent_id: actor.id,
            order_id: `ord_${topups}`,
            payment_id: `pay_${topups}`,
            amount_mc: 50_000,
            balance_after_mc: actor.balance,
            granted_at: at(),
          });
          break;
        }
        case 'AgentHeartbeatReceived':
          e = event('AgentHeartbeatReceived', `presence-${actor.id}`, {
            agent_id: actor.id,
            status: 'online',
            capacity: Math.floor(random() * 101),
            received_at: at(),
          });
          break;
        case 'WebhookDeliveryQueued': {
          const d = { id: id('dlv', deliveries.length), agent: actor.id };
          deliveries.push(d);
          e = event('WebhookDeliveryQueued', `webhook-${actor.id}`, {
            delivery_id: d.id,
            agent_id: actor.id,
            inbox_id: `inb_${n}`,
            event: 'new_dm',
            body: '{"event":"new_dm"}',
            url: 'https://hooks.example.com/agent',
            queued_at: at(),
          });
          break;
        }
        default: {
          const d = deliveries.length > 0 ? deliveries[deliveries.length - 1] : null;
          if (d === null) {
            e = post();
            break;
          }
          e = event('WebhookDeliveryAttempted', `webhook-${d.agent}`, {
            delivery_id: d.id,
            agent_id: d.agent,
            inbox_id: `inb_${n}`,
            attempt: 1,
            url: 'https://hooks.example.com/agent',
            status_code: 200,
            outcome: 'delivered',
            error: null,
            duration_ms: 12,
            attempted_at: at(),
            next_attempt_at: null,
          });
        }
      }
    }
    n++;
    yield e;
  }
}

/** Checks generated events against the catalogue's schemas (throws on the first invalid one). */
export function checkAgainstSchemas(events: Iterable<GeneratedEvent>): void {
  const ajv = new Ajv({ strict: false });
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  for (const e of events) {
    let v = validators.get(e.type);
    if (!v) {
      const schema = (eventSchemas as Record<string, object>)[e.type];
      if (!schema) throw new Error(`no schema for ${e.type}`);
      v = ajv.compile(schema);
      validators.set(e.type, v);
    }
    if (!v(e.data)) throw new Error(`generated ${e.type} is invalid: ${ajv.errorsText(v.errors)}`);
  }
}
