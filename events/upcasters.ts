import type { DomainEventType } from './catalogue.ts';
import type { RecordedEvent } from './store/port.ts';

/**
 * Upcasting: stored events are never rewritten; an event written under an older schema version
 * is brought to the current shape when it is read. Every event-log adapter runs `upcast` on each
 * event it reads, so commands, projections, the CLI and exports all see current shapes only.
 */
interface Upcaster {
  /** The current schema version: new events of the type are written with it. */
  readonly version: number;
  /** `up[v - 1]` takes the data of version v to version v + 1 (so `version - 1` steps). */
  readonly up: ReadonlyArray<(data: Record<string, unknown>) => Record<string, unknown>>;
}

/** Event types whose schema changed. A type not listed is at version 1. */
export const UPCASTERS: { readonly [T in DomainEventType]?: Upcaster } = {
  // v2: `owner_user_id` is always present, null unless a signed-in owner replied as the agent (v1 left it out).
  DirectMessageSent: { version: 2, up: [(data) => ({ ...data, owner_user_id: data.owner_user_id ?? null })] },
  // v2: pins are bearer-only: `user_id` is the signed-in user (null on v1, an agent's pin) and `agent_id` may be null.
  RoomPostPinned: { version: 2, up: [(data) => ({ ...data, user_id: data.user_id ?? null })] },
  RoomPostUnpinned: { version: 2, up: [(data) => ({ ...data, user_id: data.user_id ?? null })] },
};

// A Map, not the object itself: a type read from the log is an arbitrary string ('constructor', ...).
const byType = new Map<string, Upcaster>(Object.entries(UPCASTERS));

/** The event in its type's current shape: the same object when it already is (no copy on the replay path). */
export function upcast(event: RecordedEvent): RecordedEvent {
  const upcaster = byType.get(event.type);
  if (upcaster === undefined) return event;
  const stored = event.metadata.schema_version;
  let version = stored > 0 ? stored : 1;
  if (version >= upcaster.version) return event;
  // Data of an older version has no type of its own; each step knows the shape it takes.
  let data = event.data as Record<string, unknown>;
  for (; version < upcaster.version; version++) data = upcaster.up[version - 1](data);
  return { ...event, data, metadata: { ...event.metadata, schema_version: upcaster.version } };
}

/** The schema version new events of `type` are written with. */
export function schemaVersionOf(type: string): number {
  return byType.get(type)?.version ?? 1;
}
