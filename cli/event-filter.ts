// The filters shared by `events export` and `events tail`: streams (exact names, or a prefix
// ending in `*`), event types (read through the log's type filter), a position range and a time
// range on metadata.occurred_at. One exported line is one event, as NDJSON.
import type { RecordedEvent } from '../events/store/port.ts';

export interface EventFilterOptions {
  stream?: string[];
  type?: string[];
  /** Exclusive lower bound: events after this position. */
  from?: string;
  /** Inclusive upper bound. */
  to?: string;
  /** Inclusive, ISO time: occurred_at >= since. */
  since?: string;
  /** Exclusive, ISO time: occurred_at < until. */
  until?: string;
}

export interface EventFilter {
  after: number;
  to: number;
  types: string[] | undefined;
  matches(event: RecordedEvent): boolean;
}

function position(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
  return n;
}

function time(value: string | undefined, name: string): number | null {
  if (value === undefined) return null;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`--${name} must be an ISO date or time`);
  return t;
}

export function eventFilter(options: EventFilterOptions): EventFilter {
  const after = position(options.from, 'from', 0);
  const to = position(options.to, 'to', Number.MAX_SAFE_INTEGER);
  const since = time(options.since, 'since');
  const until = time(options.until, 'until');
  const exact = new Set((options.stream ?? []).filter((s) => !s.endsWith('*')));
  const prefixes = (options.stream ?? []).filter((s) => s.endsWith('*')).map((s) => s.slice(0, -1));
  const anyStream = exact.size === 0 && prefixes.length === 0;
  const types = options.type && options.type.length > 0 ? [...new Set(options.type)] : undefined;
  return {
    after,
    to,
    types,
    matches(event) {
      if (event.position <= after || event.position > to) return false;
      if (types && !types.includes(event.type)) return false;
      if (!anyStream && !exact.has(event.stream) && !prefixes.some((p) => event.stream.startsWith(p))) return false;
      if (since !== null || until !== null) {
        const at = Date.parse(event.metadata.occurred_at);
        if (since !== null && at < since) return false;
        if (until !== null && at >= until) return false;
      }
      return true;
    },
  };
}

/** The NDJSON line of one event: id, stream, revision, position, type, data, metadata. */
export function eventLine(e: RecordedEvent): string {
  return `${JSON.stringify({ id: e.id, stream: e.stream, revision: e.revision, position: e.position, type: e.type, data: e.data, metadata: e.metadata })}\n`;
}

/** A commander collector for repeatable options (`--type A --type B`). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
