import type { DomainEvent, DomainEventType, EventOfType } from '../events/catalogue.ts';
import type { RecordedEvent } from '../events/store/port.ts';
import type { Recorded } from '../events/types.ts';
import type { Collection, CollectionSpec, DocOf } from './store/port.ts';

/** Resolves a projection's logical collection names (live ones, or fresh ones during a rebuild). */
export interface ProjectionContext {
  /** The collection `name`, typed by its registered read model (see ReadModels in store/port.ts). */
  collection<N extends string>(name: N): Collection<DocOf<N>>;
}

/** The data of an event of type `T` (what a document copies from it). */
export type DataOf<T extends DomainEventType> = EventOfType<T>['data'];

/** A recorded event of one of the types `T`: a `switch` on `type` narrows `data`. */
export type RecordedOf<T extends DomainEventType> = Recorded<EventOfType<T>>;

/** A projection as the runner holds it: it is handed only events whose type is in `handles`. */
export interface Projection {
  name: string;
  collections: CollectionSpec[];
  /** Event types this projection applies; other events only move its checkpoint. */
  handles: ReadonlySet<string>;
  /** Optional seeding that must exist before any event (for instance the curated rooms). */
  init?(ctx: ProjectionContext): Promise<void>;
  apply(event: Recorded<DomainEvent> | RecordedEvent, ctx: ProjectionContext): Promise<void>;
}

export interface ProjectionDefinition<T extends DomainEventType> {
  name: string;
  collections: CollectionSpec[];
  handles: readonly T[];
  init?(ctx: ProjectionContext): Promise<void>;
  apply(event: RecordedOf<T>, ctx: ProjectionContext): Promise<void>;
}

/**
 * One read model's projection: `handles` lists its event types and `apply` receives exactly those,
 * typed, so its `switch (event.type)` narrows `data` and ends in a `never` check.
 */
export function defineProjection<const T extends DomainEventType>(definition: ProjectionDefinition<T>): Projection {
  return {
    name: definition.name,
    collections: definition.collections,
    handles: new Set<string>(definition.handles),
    ...(definition.init ? { init: definition.init } : {}),
    // The runner calls `apply` only for types in `handles` (see handlerIndex in runner.ts).
    apply: definition.apply,
  };
}

export const CHECKPOINTS = '_checkpoints';
