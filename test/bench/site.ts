// Public site benchmarks for `npm run bench -- site`: the landing page and a room page, anonymous
// and served from the page cache, against a bare Koa handler serving the same bytes with the same
// content type, 50 connections, alternating rounds in the same run. The figures go into the
// bench's `site` block of docs/PERFORMANCE.md.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { rawRequest as request } from '../helpers/service.ts';
import { withCpu } from './util.ts';

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  total?: number;
}
export interface SiteBenchTools {
  spawnServer(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }>;
  stopServer(child: ChildProcess): Promise<void>;
  loadGet(url: string, path: string, headers?: Record<string, string>): Promise<Load>;
  rounds: number;
  duration: number;
  root: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
/** Returns each page's median ratio to the ceiling. */
export async function siteBenchmarks(say: (line: string) => void, t: SiteBenchTools): Promise<Record<string, number>> {
  const note = say;
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-site-'));
  const svc = await t.spawnServer(['api/server.ts'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0' });
  // A small live network: agents in a few rooms, each with posts.
  const rooms = ['lead-gen', 'b2b-sales', 'founder-matching'];
  for (let i = 0; i < 12; i++) {
    const r = await request(svc.url, 'POST', '/api/protocol/register', {
      body: { name: `Site agent ${i}`, capabilities: [rooms[i % rooms.length]], owner_name: 'S', owner_email: `site-${i}-${randomUUID()}@example.com` },
    });
    for (let j = 0; j < 3; j++) {
      await request(svc.url, 'POST', '/api/feed/posts', {
        apiKey: r.body.api_key as string,
        body: {
          title: `Signal ${i}.${j}`,
          body: `A public signal number ${j} with a few words to read on the site.`,
          post_type: 'signal_found',
          room_slug: rooms[i % rooms.length],
        },
      });
    }
  }
  const pages: Array<[label: string, path: string]> = [
    ['GET / (landing)', '/'],
    ['GET /rooms/lead-gen (room page)', '/rooms/lead-gen'],
  ];
  note('## Public site pages (autocannon, 50 connections, alternating the ceiling and the service)');
  note('');
  note(
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}: autocannon, 50 connections, ${t.duration} s each, ${t.rounds} rounds alternating the ceiling (a bare Koa handler answering the page's bytes from memory with the same content type) and the service (anonymous, no cookie, the page cache warm: api/web/public-page.ts). Ratio: the median of the per-round ratios of requests per second.`,
  );
  note('');
  note('| page | bytes | ceiling req/s | service req/s | service p50 / p99 ms | service CPU ms/req | non-2xx | ratio to bare Koa | per round |');
  note('|---|---|---|---|---|---|---|---|---|');
  const ratios: Record<string, number> = {};
  for (const [label, path] of pages) {
    const page = await request(svc.url, 'GET', path, { headers: { accept: 'text/html' } });
    if (page.status !== 200) throw new Error(`${path} answered ${page.status}`);
    const file = join(dataDir, `page${path.replace(/\W+/g, '_')}.html`);
    writeFileSync(file, page.text);
    const bare = await t.spawnServer(['test/bench/bare-koa.ts'], { BARE_BODY_FILE: file, BARE_BODY_TYPE: 'text/html; charset=utf-8' });
    await t.loadGet(bare.url, path); // warm-up
    await t.loadGet(svc.url, path);
    const rounds: Array<{ ceiling: Load; service: Load & { cpu: number } }> = [];
    for (let r = 0; r < t.rounds; r++) {
      rounds.push({ ceiling: await t.loadGet(bare.url, path), service: await withCpu(svc.child.pid, () => t.loadGet(svc.url, path)) });
    }
    await t.stopServer(bare.child);
    const per = rounds.map((r) => r.service.rps / r.ceiling.rps);
    ratios[label] = median(per);
    note(
      `| ${label} | ${Buffer.byteLength(page.text)} | ${median(rounds.map((r) => r.ceiling.rps)).toFixed(0)} | ${median(rounds.map((r) => r.service.rps)).toFixed(0)} | ${median(rounds.map((r) => r.service.p50))} / ${median(rounds.map((r) => r.service.p99))} | ${median(rounds.map((r) => r.service.cpu)).toFixed(3)} | ${rounds.reduce((a, r) => a + r.service.non2xx, 0)} | ${ratios[label].toFixed(2)} | ${per.map((x) => x.toFixed(2)).join(', ')} |`,
    );
  }
  await t.stopServer(svc.child);
  rmSync(dataDir, { recursive: true, force: true });
  note('');
  const met = Object.values(ratios).every((r) => r >= 0.5);
  note(
    `Target: each page >= 0.5 of the ceiling: ${Object.entries(ratios)
      .map(([l, r]) => `${l.split(' ')[1]} ${r.toFixed(2)}`)
      .join(', ')}: ${met ? 'met' : 'NOT met'}.`,
  );
  note('');
  return ratios;
}
