// The rooms and credit-usage projections write each event with as few store operations as
// possible; these tests hold them to the documents of the straightforward read-then-write versions
// they replaced, event sequence by event sequence (redeliveries included).
import { expect } from 'chai';
import { CURATED_CAPABILITIES } from '../../events/capabilities.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { creditUsageProjection } from '../../projections/credits/credit-usage.ts';
import { ROOM_PROMOTION_AGENTS, roomDefaults, roomsProjection } from '../../projections/feed/rooms.ts';
import { collectionChecksum } from '../../projections/store/checksum.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Projection, ProjectionContext } from '../../projections/types.ts';
import { rng } from '../helpers/random.ts';

/** The rooms projection as first written: read the room, then write the new count. */
const referenceRooms: Projection = {
  ...roomsProjection,
  async apply(event, ctx) {
    const rooms = ctx.collection('rooms');
    if (event.type === 'PostPublished') {
      const p = event.data as { room_slug: string | null; published_at: string };
      if (p.room_slug) await rooms.applyAt(p.room_slug, event.position, { $inc: { post_count: 1 }, $set: { last_post_at: p.published_at } });
      return;
    }
    const d = event.data as { agent_id: string; capabilities: string[]; registered_at: string };
    // The rooms each agent counts in (so a deactivated, banned or ghosted agent can stop counting).
    await ctx.collection('room_agents').applyAt(d.agent_id, event.position, { $set: { slugs: d.capabilities, active: true } });
    for (const slug of d.capabilities) {
      const current = await rooms.findOne({ _id: slug });
      const count = ((current?.agent_count as number | undefined) ?? 0) + 1;
      const curated = (CURATED_CAPABILITIES as readonly string[]).includes(slug);
      await rooms.applyAt(slug, event.position, {
        $set: { agent_count: count, public: curated || count >= ROOM_PROMOTION_AGENTS },
        // A custom room's creator is the first agent that declared it (feed issue: pins).
        $setOnInsert: { ...roomDefaults(slug), curated, post_count: 0, created_at: d.registered_at, created_by: curated ? null : d.agent_id },
      });
    }
  },
};

/** Credit usage as first written: agent_id and date set by every event. */
const referenceCreditUsage: Projection = {
  ...creditUsageProjection,
  async apply(event, ctx) {
    const d = event.data as { agent_id: string; charge?: { amount_mc: number } };
    if (!d.charge || d.charge.amount_mc === 0) return;
    const date = event.metadata.occurred_at.slice(0, 10);
    await ctx.collection('credit_usage_daily').applyAt(`${d.agent_id}:${date}`, event.position, {
      $set: { agent_id: d.agent_id, date },
      $inc: { spent_mc: d.charge.amount_mc, count: 1 },
    });
  },
};

function events(seed: number, n: number): RecordedEvent[] {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const slugs = [...CURATED_CAPABILITIES.slice(0, 3), 'custom-a', 'custom-b', 'custom-c'];
  const out: RecordedEvent[] = [];
  for (let position = 1; position <= n; position++) {
    const at = new Date(Date.UTC(2026, 0, 1) + position * 3_600_000).toISOString();
    const metadata = { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at, schema_version: 1 };
    const base = { id: `e${position}`, stream: 's', revision: position, position, metadata };
    if (random() < 0.4) {
      const capabilities = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(slugs));
      out.push({ ...base, type: 'AgentRegistered', data: { agent_id: `a${position}`, capabilities, registered_at: at } });
    } else {
      const charge = random() < 0.9 ? { action: 'post', amount_mc: pick([0, 100, 250]), balance_after_mc: 1000 } : undefined;
      out.push({
        ...base,
        type: 'PostPublished',
        data: { post_id: `p${position}`, agent_id: pick(['a1', 'a2', 'a3']), room_slug: pick([...slugs, null]), published_at: at, charge },
      });
    }
  }
  return out;
}

async function build(projection: Projection, log: RecordedEvent[]) {
  const store = new MemoryReadStore();
  const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
  for (const spec of projection.collections) await store.ensureCollection(spec);
  await projection.init?.(ctx);
  for (const e of log) if (projection.handles.has(e.type)) await projection.apply(e, ctx);
  // At-least-once delivery: a second pass over a stretch of the log changes nothing.
  for (const e of log.slice(log.length >> 1)) if (projection.handles.has(e.type)) await projection.apply(e, ctx);
  return store;
}

describe('projections: single-write updates give the documents of read-then-write', () => {
  for (const [name, projection, reference] of [
    ['rooms', roomsProjection, referenceRooms],
    ['credit_usage', creditUsageProjection, referenceCreditUsage],
  ] as const) {
    it(`${name}: the same documents, fields and field order on random event sequences`, async () => {
      for (const seed of [1, 2, 3]) {
        const log = events(seed, 400);
        const got = await build(projection, log);
        const want = await build(reference, log);
        for (const spec of projection.collections) {
          const a = await got.collection(spec.name).find({}, { sort: { _id: 1 } });
          const b = await want.collection(spec.name).find({}, { sort: { _id: 1 } });
          expect(a.length).to.be.above(5);
          expect(a).to.deep.equal(b);
          expect(a.map((d) => Object.keys(d))).to.deep.equal(b.map((d) => Object.keys(d)));
          expect(await collectionChecksum(got, spec.name)).to.deep.equal(await collectionChecksum(want, spec.name));
        }
      }
    });
  }

  it('rooms: a custom room turns public at the promotion threshold, curated rooms always are', async () => {
    const at = '2026-01-01T00:00:00.000Z';
    const metadata = { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at, schema_version: 1 };
    const log: RecordedEvent[] = [1, 2, 3].map((position) => ({
      id: `e${position}`,
      stream: 's',
      revision: position,
      position,
      metadata,
      type: 'AgentRegistered',
      data: { agent_id: `a${position}`, capabilities: ['custom-x', 'lead-gen'], registered_at: at },
    }));
    const store = await build(roomsProjection, log.slice(0, ROOM_PROMOTION_AGENTS - 1));
    expect(await store.collection('rooms').findOne({ _id: 'custom-x' })).to.include({ agent_count: ROOM_PROMOTION_AGENTS - 1, public: false, curated: false });
    const all = await build(roomsProjection, log.slice(0, ROOM_PROMOTION_AGENTS));
    expect(await all.collection('rooms').findOne({ _id: 'custom-x' })).to.include({ agent_count: ROOM_PROMOTION_AGENTS, public: true });
    expect(await all.collection('rooms').findOne({ _id: 'lead-gen' })).to.include({ agent_count: ROOM_PROMOTION_AGENTS, public: true, curated: true });
  });
});
