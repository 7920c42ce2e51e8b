// One-projection rebuild benchmark: on the replay benchmark's mixed log, a full replay (every
// projection caught up from 0) against a rebuild of one projection that handles about 5% of the
// events, which reads only its own event types through the log's type index. Same run, same file.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import { fill } from './replay.ts';

const N = Number(process.env.BENCH_REPLAY_EVENTS ?? 500_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface RebuildFigures {
  projection: string;
  share: number;
  fullMs: number;
  rebuildMs: number;
  ratio: number;
}

export async function rebuildBenchmarks(say: (line: string) => void): Promise<RebuildFigures> {
  const dir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-rebuild-'));
  try {
    const path = join(dir, 'mix.sqlite');
    await fill(path, 'mix', N);
    const log = SqliteEventLog.open({ path });
    // Each projection's share of the log, from one pass counting the event types.
    const byType = new Map<string, number>();
    for (let after = 0; ;) {
      const page = await log.readAll({ after, maxCount: 50_000 });
      for (const e of page) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
      if (page.length < 50_000) break;
      after = page[page.length - 1].position;
    }
    const counts = new Map(allProjections.map((p) => [p.name, [...p.handles].reduce((n, t) => n + (byType.get(t) ?? 0), 0)]));
    // The smallest projection handling at least 5% of the log (the issue's case), else the largest.
    const ranked = [...counts.entries()].filter(([, n]) => n > 0).sort((a, b) => a[1] - b[1]);
    const [name, handled] = ranked.find(([, n]) => n / N >= 0.05) ?? ranked[ranked.length - 1];
    say(`Shares of the log: ${ranked.map(([p, n]) => `${p} ${((n / N) * 100).toFixed(1)}%`).join(', ')}.`);
    say('');
    const rounds: Array<{ full: number; one: number; scan: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const store = new MemoryReadStore();
      const runner = new ProjectionRunner(log, store, allProjections);
      let t = performance.now();
      await runner.start();
      const full = performance.now() - t;
      t = performance.now();
      await runner.rebuild([name]);
      const one = performance.now() - t;
      await runner.stop();
      // The same projection caught up alone from 0 by reading the whole log (what a rebuild cost
      // before the type index): every event read and parsed, its types applied.
      const chosen = allProjections.filter((p) => p.name === name);
      const alone = new ProjectionRunner(log, new MemoryReadStore(), chosen);
      t = performance.now();
      await alone.start();
      const scan = performance.now() - t;
      await alone.stop();
      rounds.push({ full, one, scan });
    }
    await log.close();
    const ratios = rounds.map((x) => x.one / x.full);
    const mid = [...rounds].sort((a, b) => a.one / a.full - b.one / b.full)[Math.floor(rounds.length / 2)];
    const figures = { projection: name, share: handled / N, fullMs: mid.full, rebuildMs: mid.one, ratio: mid.one / mid.full };
    say(`## One-projection rebuild (${N.toLocaleString('en')}-event mixed log of the replay benchmark, ${ROUNDS} rounds)`);
    say('');
    say(
      `The smallest projection handling at least 5% of the log: \`${name}\`, ${handled.toLocaleString('en')} events (${(figures.share * 100).toFixed(1)}%). Each round: a full replay (every projection caught up from 0), then a rebuild of \`${name}\` by the same running runner (shadow collections, type-filtered reads, checksum-ready swap), then \`${name}\` alone caught up from 0 by reading the whole log (no type filter) for comparison.`,
    );
    say('');
    say('| round | full replay, ms | one-projection rebuild, ms | ratio | same projection alone, whole log read, ms |');
    say('|---|---|---|---|---|');
    rounds.forEach((x, i) => say(`| ${i + 1} | ${x.full.toFixed(0)} | ${x.one.toFixed(0)} | ${(x.one / x.full).toFixed(3)} | ${x.scan.toFixed(0)} |`));
    say('');
    say(
      `Target: the one-projection rebuild takes at most 0.2 of a full replay: ${figures.ratio <= 0.2 ? 'met' : 'NOT met'} (median round ${figures.ratio.toFixed(3)}; rounds ${ratios.map((x) => x.toFixed(3)).join(', ')}; the whole-log read alone took ${median(rounds.map((x) => x.scan)).toFixed(0)} ms).`,
    );
    say('');
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
