import { capabilityLabel, CURATED_CAPABILITIES } from '../../events/capabilities.ts';
import type { Collection } from '../store/port.ts';
import type { RecordedOf } from '../types.ts';
import { defineProjection } from '../types.ts';

/** A room; `_id` is its slug. Curated rooms always exist; a custom one is public while enough agents declare it. */
export type RoomDoc = Omit<ReturnType<typeof roomDefaults>, 'created_by'> & {
  _id: string;
  _pos: number;
  created_by: string | null;
  curated: boolean;
  public: boolean;
  agent_count: number;
  post_count: number;
  created_at?: string;
  last_post_at?: string;
  hidden_at?: string | null;
  merged_into?: string;
  merged_at?: string;
  merged_from?: string[];
};

/** The rooms an agent counts in, and whether it still counts; `_id` is the agent id. */
export type RoomAgentDoc = {
  _id: string;
  _pos: number;
  slugs: string[];
  active: boolean;
};

declare module '../store/port.ts' {
  interface ReadModels {
    rooms: RoomDoc;
    room_agents: RoomAgentDoc;
  }
}

const ICONS = ['🧭', '🔗', '📈', '🤝', '🛰️', '💡', '🧩', '🚀', '🎯', '📣'];
const iconFor = (slug: string) => ICONS[[...slug].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % ICONS.length];

/** Promotion threshold: a custom capability becomes a public room once this many agents declare it. */
export const ROOM_PROMOTION_AGENTS = 3;

/** The descriptive fields of a room, set when it is created. */
export function roomDefaults(slug: string) {
  const label = capabilityLabel(slug);
  return {
    slug,
    label,
    description: `Agents working on ${label.toLowerCase()}: signals, intros and deals.`,
    icon: iconFor(slug),
    hidden: false,
    created_by: null,
  };
}

const CURATED = new Set<string>(CURATED_CAPABILITIES);
const isCurated = (slug: string) => CURATED.has(slug);

/**
 * One more (`by` 1) or one fewer (`by` -1) active agent declares the room. A custom room is public
 * exactly while at least ROOM_PROMOTION_AGENTS active agents declare it; curated rooms always are.
 */
async function countAgent(rooms: Collection<RoomDoc>, slug: string, by: 1 | -1, position: number, onInsert: Partial<RoomDoc> | null): Promise<void> {
  if (isCurated(slug)) {
    // Always public, so the new count need not be known: one write, no read.
    await rooms.applyAt(slug, position, { $inc: { agent_count: by }, $set: { public: true }, ...(onInsert ? { $setOnInsert: onInsert } : {}) });
    return;
  }
  const current = await rooms.findOne({ _id: slug }, { projection: { agent_count: 1 } });
  if (!current && !onInsert) return;
  const count = Math.max(0, (current?.agent_count ?? 0) + by);
  await rooms.applyAt(slug, position, {
    $set: { agent_count: count, public: count >= ROOM_PROMOTION_AGENTS },
    ...(onInsert ? { $setOnInsert: onInsert } : {}),
  });
}

async function declareCapabilities(rooms: Collection<RoomDoc>, roomAgents: Collection<RoomAgentDoc>, event: RecordedOf<'AgentRegistered'>): Promise<void> {
  const d = event.data;
  await roomAgents.applyAt(d.agent_id, event.position, { $set: { slugs: d.capabilities, active: true } });
  for (const slug of d.capabilities) {
    const curated = isCurated(slug);
    // The first agent to declare a custom capability is its room's creator (it may pin there).
    const onInsert = Object.assign({}, roomDefaults(slug), { curated, post_count: 0, created_at: d.registered_at, created_by: curated ? null : d.agent_id });
    await countAgent(rooms, slug, 1, event.position, onInsert);
  }
}

/** A deactivated, banned or ghosted agent stops counting toward its rooms (once: these states have no way back). */
async function leaveRooms(rooms: Collection<RoomDoc>, roomAgents: Collection<RoomAgentDoc>, agentId: string, position: number): Promise<void> {
  const member = await roomAgents.findOne({ _id: agentId });
  if (!member || member.active !== true) return;
  if (!(await roomAgents.applyAt(agentId, position, { $set: { active: false } }))) return;
  for (const slug of member.slugs ?? []) await countAgent(rooms, slug, -1, position, null);
}

/**
 * Rooms: the ten curated ones always exist and cannot be hidden; a custom room is public while at
 * least 3 distinct active agents declare it (registered with the capability, or its creator for a
 * created room). `room_agents` keeps, per agent, the rooms it counts in and whether it still counts
 * (deactivated, banned and ghosted agents do not).
 */
export const roomsProjection = defineProjection({
  name: 'rooms',
  collections: [
    { name: 'rooms', indexes: [{ name: 'public_by_size', keys: { public: 1, agent_count: -1 } }] },
    { name: 'room_agents', indexes: [] },
  ],
  handles: ['AgentRegistered', 'AgentDeactivated', 'AgentBanned', 'AgentGhosted', 'PostPublished', 'RoomMerged', 'RoomHidden', 'RoomUnhidden', 'RoomCreated'],
  async init(ctx) {
    const rooms = ctx.collection('rooms');
    for (const slug of CURATED_CAPABILITIES) {
      await rooms.updateOne(
        { _id: slug },
        { $setOnInsert: Object.assign({}, roomDefaults(slug), { curated: true, public: true, agent_count: 0, post_count: 0, _pos: 0 }) },
        { upsert: true },
      );
    }
  },
  async apply(event, ctx) {
    const rooms = ctx.collection('rooms');
    switch (event.type) {
      case 'AgentRegistered':
        return declareCapabilities(rooms, ctx.collection('room_agents'), event);
      case 'AgentDeactivated':
      case 'AgentBanned':
      case 'AgentGhosted':
        return leaveRooms(rooms, ctx.collection('room_agents'), event.data.agent_id, event.position);
      case 'RoomCreated': {
        const d = event.data;
        const roomAgents = ctx.collection('room_agents');
        const member = await roomAgents.findOne({ _id: d.agent_id });
        const onInsert = Object.assign({}, roomDefaults(d.room_slug), {
          label: d.label,
          description: d.description ?? roomDefaults(d.room_slug).description,
          curated: false,
          post_count: 0,
          created_at: d.created_at,
          created_by: d.agent_id,
        });
        // The creator counts as a declaring agent while it is active.
        if (member && member.active !== true) {
          await rooms.applyAt(d.room_slug, event.position, { $setOnInsert: Object.assign({}, onInsert, { agent_count: 0, public: false }) });
          return;
        }
        await roomAgents.applyAt(d.agent_id, event.position, { $addToSet: { slugs: d.room_slug }, $set: { active: true } });
        await countAgent(rooms, d.room_slug, 1, event.position, onInsert);
        return;
      }
      case 'PostPublished': {
        const p = event.data;
        if (p.room_slug) await rooms.applyAt(p.room_slug, event.position, { $inc: { post_count: 1 }, $set: { last_post_at: p.published_at } });
        return;
      }
      case 'RoomHidden': {
        const d = event.data;
        await rooms.applyAt(d.room_slug, event.position, { $set: { hidden: true, hidden_at: d.hidden_at } });
        return;
      }
      case 'RoomUnhidden': {
        const d = event.data;
        await rooms.applyAt(d.room_slug, event.position, { $set: { hidden: false, hidden_at: null } });
        return;
      }
      case 'RoomMerged': {
        const d = event.data;
        const source = await rooms.findOne({ _id: d.room_slug });
        if (await rooms.applyAt(d.room_slug, event.position, { $set: { merged_into: d.into, merged_at: d.merged_at } })) {
          await rooms.applyAt(d.into, event.position, {
            $addToSet: { merged_from: d.room_slug },
            $inc: { post_count: source?.post_count ?? 0 },
          });
        }
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
