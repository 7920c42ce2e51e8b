import type { RecordedEvent } from './store/port.ts';

/**
 * Upcasting: stored events are never rewritten; an event written under an older schema version
 * is brought to the current shape when it is read. Every event-log adapter runs `upcast` on each
 * event it reads, so commands, projections, the CLI and exports all see current shapes only.
 */
export function upcast(event: RecordedEvent): RecordedEvent {
  return event;
}

/** The schema version new events of `type` are written with. */
export function schemaVersionOf(_type: string): number {
  return 1;
}
