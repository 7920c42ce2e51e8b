// Circle benchmarks for `npm run bench -- circles`: a circle post over HTTP against the bare Koa
// POST ceiling (alternating rounds, as the feed write), and a circle's posts page at 100,000 posts
// built through the circle-posts projection and read through the service's query.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { DomainEvent } from '../../events/catalogue.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { circlePostsProjection } from '../../projections/communities/circle-posts.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { ProjectionContext } from '../../projections/types.ts';
import { circlePosts } from '../../queries/communities/circles.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { rawRequest as request } from '../helpers/service.ts';
import { withCpu } from './util.ts';

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  total?: number;
}
export interface BenchTools {
  spawnServer(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }>;
  stopServer(child: ChildProcess): Promise<void>;
  load(url: string, path: string, bodies: () => { body: string; headers?: Record<string, string> }): Promise<Load>;
  rounds: number;
  duration: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const ROOT = 'bench-root@example.com';

async function signUp(url: string, outbox: string, email: string): Promise<string> {
  await request(url, 'POST', '/api/auth/send-verification-otp', { body: { email } });
  const [mail] = await waitForMails(outbox, email);
  const r = await request(url, 'POST', '/api/auth/verify-email-otp', {
    body: { email, otp: codeIn(mail), password: 'bench password 1', full_name: `Bench ${email}` },
  });
  if (r.status !== 200) throw new Error(`sign-up failed: ${r.status} ${r.text}`);
  return r.body.access_token as string;
}

/** Returns the ratio (median of the rounds) and the posts-page median in ms. */
export async function circleBenchmarks(say: (line: string) => void, tools: BenchTools): Promise<{ ratio: number; pageMs: number }> {
  say(`## Circles (autocannon, 50 connections, ${tools.duration} s each, ${tools.rounds} rounds alternating ceiling and service)`);
  const bare = await tools.spawnServer(['test/bench/bare-koa.ts'], {});
  const bareAppend = await tools.spawnServer(['test/bench/bare-append.ts'], {});
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-circles-'));
  const outbox = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-outbox-'));
  const svc = await tools.spawnServer(['api/server.ts'], {
    DATA_DIR: dataDir,
    MAIL_OUTBOX_DIR: outbox,
    ADMIN_EMAILS: ROOT,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_SCALE: '0',
  });
  const root = await signUp(svc.url, outbox, ROOT);
  const auth = (t: string) => ({ authorization: `Bearer ${t}` });
  const community = await request(svc.url, 'POST', '/api/admin/communities', { headers: auth(root), body: { name: 'Bench community' } });
  const circleId = community.body.circles[0].circle_id as string;
  const code = await request(svc.url, 'POST', '/api/admin/community-admin/codes', { headers: auth(root), body: { community_id: community.body.community_id } });
  const tokens: string[] = [];
  for (let i = 0; i < 20; i++) {
    const t = await signUp(svc.url, outbox, `bench-member-${i}@example.com`);
    await request(svc.url, 'POST', '/api/communities/join', { headers: auth(t), body: { code: code.body.code } });
    tokens.push(t);
  }
  const bareBody = () => ({ body: JSON.stringify({ title: 'Bench', body: 'Bench body #tag', post_type: 'signal_found' }) });
  await tools.load(bare.url, '/', bareBody); // warm-up
  await tools.load(bareAppend.url, '/', bareBody);
  let k = 0;
  const post = () => ({
    body: JSON.stringify({ circle_id: circleId, content: `Circle post ${k} about #bench and #load`, intent: 'update' }),
    headers: auth(tokens[k++ % tokens.length] as string),
  });
  // The service is warmed up as the two bare servers are (one unmeasured load of the same length).
  await tools.load(svc.url, '/api/brew-circles/posts', post);
  const rounds: Array<{ ceiling: Load; load: Load; append: Load; ceilingCpu: number; loadCpu: number; appendCpu: number }> = [];
  for (let r = 0; r < tools.rounds; r++) {
    const c = await withCpu(bare.child.pid, () => tools.load(bare.url, '/', bareBody));
    const l = await withCpu(svc.child.pid, () => tools.load(svc.url, '/api/brew-circles/posts', post));
    const a = await withCpu(bareAppend.child.pid, () => tools.load(bareAppend.url, '/', bareBody));
    rounds.push({ ceiling: c, ceilingCpu: c.cpu, load: l, loadCpu: l.cpu, append: a, appendCpu: a.cpu });
  }
  await tools.stopServer(svc.child);
  await tools.stopServer(bareAppend.child);
  await tools.stopServer(bare.child);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(outbox, { recursive: true, force: true });
  const ratios = rounds.map((r) => r.load.rps / r.ceiling.rps);
  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | ratio to bare Koa | per round |');
  say('|---|---|---|---|---|---|---|');
  say(
    `| bare Koa + koa-body POST (ceiling) | ${median(rounds.map((r) => r.ceiling.rps)).toFixed(0)} | ${median(rounds.map((r) => r.ceiling.p50))} | ${median(rounds.map((r) => r.ceiling.p99))} | ${rounds.reduce((a, r) => a + r.ceiling.non2xx, 0)} | 1.00 | ${rounds.map((r) => r.ceiling.rps.toFixed(0)).join(', ')} req/s |`,
  );
  say(
    `| POST /api/brew-circles/posts (bearer, membership check, mentions, synchronous=FULL) | ${median(rounds.map((r) => r.load.rps)).toFixed(0)} | ${median(rounds.map((r) => r.load.p50))} | ${median(rounds.map((r) => r.load.p99))} | ${rounds.reduce((a, r) => a + r.load.non2xx, 0)} | ${median(ratios).toFixed(2)} | ${ratios.map((x) => x.toFixed(2)).join(', ')} |`,
  );
  const appendRatios = rounds.map((r) => r.append.rps / r.ceiling.rps);
  say(
    `| bare Koa + one SQLite event-log append (test/bench/bare-append.ts: synchronous=FULL, nothing else) | ${median(rounds.map((r) => r.append.rps)).toFixed(0)} | ${median(rounds.map((r) => r.append.p50))} | ${median(rounds.map((r) => r.append.p99))} | ${rounds.reduce((a, r) => a + r.append.non2xx, 0)} | ${median(appendRatios).toFixed(2)} | ${appendRatios.map((x) => x.toFixed(2)).join(', ')} |`,
  );
  say('');
  say(
    `The floor of any event-sourced write here, a bare Koa POST doing one durable append and nothing else, is ${median(appendRatios).toFixed(2)} of the bare POST; the circle post reaches ${median(rounds.map((r) => r.load.rps / r.append.rps)).toFixed(2)} of it (median of the rounds).`,
  );
  say('');
  const cpuRatios = rounds.map((r) => r.ceilingCpu / r.loadCpu);
  say(
    `CPU per request (user + system, all threads; steadier than req/s on a busy machine): bare Koa ${median(rounds.map((r) => r.ceilingCpu)).toFixed(3)} ms, bare append ${median(rounds.map((r) => r.appendCpu)).toFixed(3)} ms, circle post ${median(rounds.map((r) => r.loadCpu)).toFixed(3)} ms: ratio ${median(cpuRatios).toFixed(2)} (per round ${cpuRatios.map((x) => x.toFixed(2)).join(', ')}).`,
  );
  say('');

  // A circle's posts page at 100,000 posts (plus 100,000 in other circles), through the projection.
  const store = new MemoryReadStore();
  const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
  for (const spec of circlePostsProjection.collections) await store.ensureCollection(spec);
  const size = 100_000;
  const at = '2026-03-10T09:30:00.000Z';
  const TAGS = ['fintech', 'hiring', 'launch', 'design', 'legal'];
  for (let i = 1; i <= 2 * size; i++) {
    const circle = i % 2 === 0 ? 'crc_bench' : 'crc_other';
    const tag = TAGS[i % TAGS.length] as string;
    const event: DomainEvent = {
      type: 'CirclePostPublished',
      data: {
        post_id: `cpo_${i.toString(36).padStart(20, '0')}`,
        circle_id: circle,
        community_id: 'cmy_bench',
        author_id: `usr_${(i % 500).toString(36).padStart(20, '0')}`,
        author_name: `Member ${i % 500}`,
        content: `Post ${i} about #${tag}`,
        intent: 'update',
        link_url: null,
        hashtags: [tag],
        mentions: [],
        published_at: at,
      },
    };
    const recorded: RecordedEvent = {
      id: `bench-${i}`,
      type: event.type,
      data: event.data,
      metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at, schema_version: 1 },
      stream: 'bench',
      revision: 0,
      position: i,
    };
    await circlePostsProjection.apply(recorded, ctx);
  }
  say(`### A circle's posts page at ${size.toLocaleString('en')} posts in the circle (${(2 * size).toLocaleString('en')} in all; median of 200 runs)`);
  say('');
  say('| query | median ms | p99 ms | examined |');
  say('|---|---|---|---|');
  let first = Number.NaN;
  for (const [label, opts] of [
    ['first page (limit 20)', { skip: 0, limit: 20 }],
    ['page 50 (skip 1,000)', { skip: 1000, limit: 20 }],
    ['by tag, first page', { skip: 0, limit: 20, tag: 'fintech' }],
  ] as const) {
    const times: number[] = [];
    for (let r = 0; r < 200; r++) {
      const t = performance.now();
      await circlePosts(store, 'crc_bench', opts);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const filter = 'tag' in opts ? { tag_keys: `crc_bench|${opts.tag}` } : { live_circle: 'crc_bench' };
    const plan = await store
      .collection('circle_posts')
      .explain(filter, { sort: { seq: -1 }, skip: opts.skip, limit: opts.limit, hint: 'tag' in opts ? 'by_tag' : 'by_circle' });
    say(`| ${label} | ${(times[100] ?? 0).toFixed(3)} | ${(times[198] ?? 0).toFixed(3)} | ${plan.examined} (${plan.index}) |`);
    if (Number.isNaN(first)) first = times[100] ?? Number.NaN;
  }
  say('');
  const ratio = median(ratios);
  say(`- Circle post >= 0.3 of a bare Koa POST: ${ratio >= 0.3 ? 'met' : 'not met'} (${ratio.toFixed(2)}).`);
  say(`- A circle's posts page < 5 ms median at 100,000 posts: ${first < 5 ? 'met' : 'not met'} (${first.toFixed(3)} ms).`);
  say('');
  return { ratio, pageMs: first };
}
