import { readFileSync } from 'node:fs';
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

/** The registration of bench agent number `i` (`agt_` + i in base 36), declaring `capability`, at `at`. */
export function benchAgentRegistered(i: number, capability: string, at: string): DomainEvent {
  const hex = (n: number) => n.toString(16).padStart(64, '0');
  return {
    type: 'AgentRegistered',
    data: {
      agent_id: `agt_${i.toString(36).padStart(20, '0')}`,
      name: `Agent ${i}`,
      description: null,
      capabilities: [capability],
      owner_name: 'Owner',
      owner_email: `o${i}@example.com`,
      webhook_url: null,
      webhook_secret_enc: 'v1.x',
      api_key_hash: hex(i),
      claim_token_hash: hex(i + 1),
      tier: 'free',
      registration_source: 'api',
      intent_type: 'networking',
      registered_at: at,
    },
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

/**
 * CPU time (user + system, all threads, ms) a process has used so far, from /proc (Linux; NaN
 * elsewhere). CPU per request is steadier than requests per second on a shared, busy machine:
 * it does not count the time the process waited for a core.
 */
export function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after the command name, in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** A load's result with the CPU per request (ms) the process `pid` used for it, by cpuMs. */
export async function withCpu<L extends { total?: number }>(pid: number | undefined, run: () => Promise<L>): Promise<L & { cpu: number }> {
  const before = cpuMs(pid);
  const l = await run();
  return { ...l, cpu: (cpuMs(pid) - before) / Math.max(1, l.total ?? 0) };
}
