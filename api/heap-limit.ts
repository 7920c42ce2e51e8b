// The heap limit a start gets from the machine. The embedded default keeps its read models in the
// V8 heap, whose default limit (about 4.3 GB) is far below what a machine of 16 GB or more holds:
// `npm start` and the container image run node with the flag this prints, --max-old-space-size
// at MACHINE_HEAP_SHARE of the memory the process may use (the machine's, or its container's
// limit when lower), unless NODE_OPTIONS already sets one. It prints nothing when that would not
// raise the default limit.
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { MACHINE_HEAP_SHARE } from './start-memory.ts';

const CGROUP_LIMITS = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];

/** The container's memory limit (cgroup v2, then v1), bytes; null when there is none. */
export function cgroupMemoryLimit(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): number | null {
  for (const path of CGROUP_LIMITS) {
    let text: string;
    try {
      text = read(path).trim();
    } catch {
      continue;
    }
    if (text === 'max') return null;
    const n = Number(text);
    // cgroup v1 reports "no limit" as a number near 2^63.
    if (Number.isSafeInteger(n) && n > 0) return n;
  }
  return null;
}

/** The memory this process may use: the machine's, or its container's limit when lower (bytes). */
export function machineMemory(total = totalmem(), limit = cgroupMemoryLimit()): number {
  return limit === null ? total : Math.min(limit, total);
}

/** The node flag that sizes the heap from `memory`, or null (NODE_OPTIONS sets one, or it would not raise `defaultLimit`). */
export function heapLimitFlag(memory: number, nodeOptions: string | undefined, defaultLimit: number): string | null {
  if (/(^|\s)--max-old-space-size(=|\s|$)/.test(nodeOptions ?? '')) return null;
  const mib = Math.floor((memory * MACHINE_HEAP_SHARE) / 2 ** 20);
  return mib * 2 ** 20 > defaultLimit ? `--max-old-space-size=${mib}` : null;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const flag = heapLimitFlag(machineMemory(), process.env.NODE_OPTIONS, getHeapStatistics().heap_size_limit);
  if (flag !== null) process.stdout.write(`${flag}\n`);
}
