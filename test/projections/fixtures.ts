// The projection specs build their events with the shared default builders (test/fixtures/events.ts) as they are.
export * from '../fixtures/events.ts';

/** The id `recorded` (test/helpers/projection-spec.ts) gives the event at a log position. */
export const eventId = (position: number) => `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
/** The `occurred_at` `recorded` gives every event. */
export const OCCURRED_AT = '2026-03-10T09:30:00.000Z';

/** The document with this _id, or undefined. */
export const byId = <D extends { _id: string }>(docs: D[] | undefined, id: string): D | undefined => docs?.find((d) => d._id === id);
