import type { DomainEvent } from '../../events/catalogue.ts';
import type { RecordedEvent } from '../../events/store/port.ts';

/** A domain event as the log would record it at `position` (benchmarks feed projections directly). */
export function recorded(event: DomainEvent, position: number, at: string): RecordedEvent {
  return {
    id: `bench-${position}`,
    type: event.type,
    data: event.data,
    metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at, schema_version: 1 },
    stream: 'bench',
    revision: 0,
    position,
  };
}

/** Median and p99 (ms) of `runs` sequential calls. */
export async function timed(runs: number, fn: () => Promise<unknown>): Promise<{ median: number; p99: number }> {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(runs / 2)] ?? 0, p99: times[Math.floor(runs * 0.99)] ?? 0 };
}
