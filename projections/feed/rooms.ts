import { capabilityLabel, CURATED_CAPABILITIES } from '../../events/capabilities.ts';
import type { Collection } from '../store/port.ts';
import type { RecordedOf } from '../types.ts';
import { defineProjection } from '../types.ts';

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

async function declareCapabilities(rooms: Collection, event: RecordedOf<'AgentRegistered'>): Promise<void> {
  const d = event.data;
  for (const slug of d.capabilities) {
    const curated = (CURATED_CAPABILITIES as readonly string[]).includes(slug);
    // The first agent to declare a custom capability is its room's creator (it may pin there).
    const onInsert = Object.assign({}, roomDefaults(slug), { curated, post_count: 0, created_at: d.registered_at, created_by: curated ? null : d.agent_id });
    if (curated) {
      // Always public, so the new count need not be known: one write, no read.
      await rooms.applyAt(slug, event.position, { $inc: { agent_count: 1 }, $set: { public: true }, $setOnInsert: onInsert });
      continue;
    }
    const current = await rooms.findOne({ _id: slug }, { projection: { agent_count: 1 } });
    const count = ((current?.agent_count as number | undefined) ?? 0) + 1;
    await rooms.applyAt(slug, event.position, {
      $set: { agent_count: count, public: count >= ROOM_PROMOTION_AGENTS },
      $setOnInsert: onInsert,
    });
  }
}

/** Rooms: the ten curated ones always exist; custom capability rooms turn public at 3 agents. */
export const roomsProjection = defineProjection({
  name: 'rooms',
  collections: [{ name: 'rooms', indexes: [{ name: 'public_by_size', keys: { public: 1, agent_count: -1 } }] }],
  handles: ['AgentRegistered', 'PostPublished', 'RoomMerged', 'RoomHidden'],
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
        return declareCapabilities(rooms, event);
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
      case 'RoomMerged': {
        const d = event.data;
        const source = await rooms.findOne({ _id: d.room_slug });
        if (await rooms.applyAt(d.room_slug, event.position, { $set: { merged_into: d.into, merged_at: d.merged_at } })) {
          await rooms.applyAt(d.into, event.position, {
            $addToSet: { merged_from: d.room_slug },
            $inc: { post_count: (source?.post_count as number | undefined) ?? 0 },
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
