import type { RecordedEvent } from '../events/store/port.ts';
import type { Collection, CollectionSpec } from './store/port.ts';

/** Resolves a projection's logical collection names (live ones, or fresh ones during a rebuild). */
export interface ProjectionContext {
  collection(name: string): Collection;
}

export interface Projection {
  name: string;
  collections: CollectionSpec[];
  /** Event types this projection applies; other events only move its checkpoint. */
  handles: ReadonlySet<string>;
  /** Optional seeding that must exist before any event (for instance the curated rooms). */
  init?(ctx: ProjectionContext): Promise<void>;
  apply(event: RecordedEvent, ctx: ProjectionContext): Promise<void>;
}

export const CHECKPOINTS = '_checkpoints';
