import { expect } from 'chai';
import type { DomainEvent } from '../../events/catalogue.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Doc, ReadStore } from '../../projections/store/port.ts';
import { SqliteReadStore } from '../../projections/store/sqlite.ts';
import type { Projection, ProjectionContext } from '../../projections/types.ts';

/** A given event with the stream it was appended to (the stream only matters to a few projections). */
export type Given = DomainEvent | { event: DomainEvent; stream: string };

/** The given events as the log would record them: positions 1, 2, ... and one revision per stream. */
export function recorded(given: Given[], at = '2026-03-10T09:30:00.000Z'): RecordedEvent[] {
  const revisions = new Map<string, number>();
  return given.map((g, i) => {
    const { event, stream } = 'event' in g ? g : { event: g, stream: 'test-1' };
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    const position = i + 1;
    return {
      id: `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`,
      type: event.type,
      data: event.data,
      metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at, schema_version: 1 },
      stream,
      revision,
      position,
    };
  });
}

/**
 * The store projection specs run on: the in-memory one, or with TEST_READ_STORE=sqlite the SQLite
 * one (in memory, no file), which runs the same specs on the embedded default's storage.
 */
function specStore(): ReadStore {
  return process.env.TEST_READ_STORE === 'sqlite' ? new SqliteReadStore(':memory:', { cachedDocs: 8 }) : new MemoryReadStore();
}

/** Applies events as the runner does (only the types each projection handles, in log order). */
export async function applyAll(store: ReadStore, projections: Projection[], events: RecordedEvent[]): Promise<void> {
  const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
  for (const p of projections) for (const spec of p.collections) await store.ensureCollection(spec);
  for (const p of projections) await p.init?.(ctx);
  for (const e of events) for (const p of projections) if (p.handles.has(e.type)) await p.apply(e, ctx);
}

/** Every document of every collection the projections own, sorted by _id (for deep comparison). */
export async function readModels(store: ReadStore, projections: Projection[]): Promise<Record<string, Doc[]>> {
  const out: Record<string, Doc[]> = {};
  for (const p of projections) {
    for (const spec of p.collections) {
      const docs = await store.collection(spec.name).find({});
      out[spec.name] = docs.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    }
  }
  return out;
}

/**
 * Given events, expect documents: the projections run over the in-memory store. `then` also
 * checks the rules every projection must keep: applying the same events again (at-least-once
 * delivery) and replaying them into a fresh store both give the same read model.
 */
export const ProjectionSpecification = {
  for(...projections: Projection[]) {
    return {
      given(events: Given[]) {
        const log = recorded(events);
        const build = async () => {
          const store = specStore();
          await applyAll(store, projections, log);
          return store;
        };
        return {
          /** The read model after the events; `check` receives every collection's documents by name. */
          async then(check: (models: Record<string, Doc[]>) => void): Promise<void> {
            const store = await build();
            const models = await readModels(store, projections);
            check(models);
            await applyAll(store, projections, log);
            expect(await readModels(store, projections), 'the same events applied twice').to.deep.equal(models);
            expect(await readModels(await build(), projections), 'a replay into a fresh store').to.deep.equal(models);
          },
        };
      },
    };
  },
};
