import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventFilter } from '../../cli/event-filter.ts';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { collectionChecksum } from '../../projections/store/checksum.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import { move, openContract } from '../api/marketplace-helpers.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';

const cli = (dataDir: string, ...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'api/cli.ts', ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
    maxBuffer: 64 * 1024 * 1024,
  });

/** Every read model folded from the log at `path`, as checksums per collection. */
async function readModels(path: string): Promise<Record<string, unknown>> {
  const log = SqliteEventLog.open({ path });
  const store = new MemoryReadStore();
  const runner = new ProjectionRunner(log, store, allProjections);
  await runner.start();
  await runner.stop();
  const out: Record<string, unknown> = {};
  for (const name of (await store.listCollections()).sort()) out[name] = await collectionChecksum(store, name);
  await log.close();
  return out;
}

async function allEvents(path: string): Promise<RecordedEvent[]> {
  const log = SqliteEventLog.open({ path });
  const events = await log.readAll();
  await log.close();
  return events;
}

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RecordedEvent);

describe('cli: events export, import and tail', () => {
  let svc: TestService;
  let scratch: string;

  before(async function () {
    this.timeout(300_000);
    // No workers: the webhook configured below is never called (no delivery leaves the machine).
    svc = await startTestService({}, { workers: false });
    const a = await svc.register({ capabilities: ['lead-gen'] });
    const b = await svc.register({ capabilities: ['b2b-sales'] });
    for (let i = 0; i < 4; i++) {
      const post = await svc.req('POST', '/api/feed/posts', {
        apiKey: a.api_key,
        body: { title: `Export ${i}`, body: `#export post ${i}`, post_type: 'signal_found' },
      });
      await svc.req('POST', `/api/feed/posts/${post.body.post_id}/comments`, { apiKey: b.api_key, body: { content: `comment ${i}` } });
    }
    await svc.req('POST', `/api/protocol/agents/${a.agent_id}/follow`, { apiKey: b.api_key });
    // Events of every area the read models are made of: social, messaging, webhooks, marketplace.
    const ok = (r: TestResponse) => expect(r.status, r.text).to.be.oneOf([200, 201]);
    ok(await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: 'Exported and imported.' } }));
    ok(await svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: b.api_key, body: { capability: 'lead-gen' } }));
    ok(await svc.req('POST', `/api/agent/bonds/${b.agent_id}`, { apiKey: a.api_key }));
    ok(await svc.req('POST', `/api/agent/bonds/${a.agent_id}/accept`, { apiKey: b.api_key }));
    ok(await svc.req('PATCH', `/api/protocol/agents/${b.agent_id}/webhook`, { apiKey: b.api_key, body: { webhook_url: 'https://hooks.example.com/b' } }));
    svc.clock.advance(2 * 60 * 60_000); // past the DM lock of an unclaimed agent
    ok(await svc.req('POST', `/api/protocol/agents/${a.agent_id}/dm`, { apiKey: a.api_key, body: { to_agent_id: b.agent_id, message: 'exported DM' } }));
    ok(
      await svc.req('POST', '/api/agent/a2a/message', {
        apiKey: b.api_key,
        body: { to_agent_id: a.agent_id, intent: 'intro_request', payload: { why: 'export' } },
      }),
    );
    const contract = await openContract(svc, 'api_key', { ...a, token: '' }, { ...b, token: '' });
    await move(svc, 'api_key', { ...b, token: '' }, contract, 'accept');
    await svc.stop({ keepData: true });
    scratch = mkdtempSync(join(tmpdir(), 'agent-network-export-'));
  });
  after(() => {
    rmSync(svc.dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  it('exports the whole log as NDJSON that imports into a fresh log with the same positions and the same read models', async function () {
    this.timeout(300_000);
    const file = join(scratch, 'all.ndjson');
    const exported = await cli(svc.dataDir, 'events', 'export', '--out', file);
    const original = await allEvents(join(svc.dataDir, 'events.sqlite'));
    expect(exported.stderr).to.contain(`exported ${original.length} events`);
    const rows = lines(readFileSync(file, 'utf8'));
    expect(rows).to.deep.equal(
      original.map((e) => ({ id: e.id, stream: e.stream, revision: e.revision, position: e.position, type: e.type, data: e.data, metadata: e.metadata })),
    );

    const fresh = mkdtempSync(join(scratch, 'fresh-'));
    const imported = await cli(fresh, 'events', 'import', file);
    expect(imported.stderr).to.contain(`imported ${original.length} events`);
    expect(imported.stderr).to.contain('every event kept its position');
    const copy = await allEvents(join(fresh, 'events.sqlite'));
    expect(copy).to.deep.equal(original);
    expect(new Set(original.map((e) => e.type))).to.include.members([
      'AgentProfileUpdated',
      'TrustStampGiven',
      'BondAccepted',
      'WebhookConfigured',
      'DirectMessageSent',
      'A2AMessageSent',
      'ContractOpened',
      'ContractTransitioned',
    ]);
    expect(await readModels(join(fresh, 'events.sqlite'))).to.deep.equal(await readModels(join(svc.dataDir, 'events.sqlite')));

    // A second import into the now non-empty log is refused.
    const again = await cli(fresh, 'events', 'import', file).catch((err: { code: number; stderr: string }) => err);
    expect((again as { code: number }).code).to.equal(1);
    expect((again as { stderr: string }).stderr).to.contain('the log is not empty');
  });

  it('filters the export by type, stream prefix, position and time range', async function () {
    this.timeout(300_000);
    const original = await allEvents(join(svc.dataDir, 'events.sqlite'));
    const byType = lines((await cli(svc.dataDir, 'events', 'export', '--type', 'CommentAdded', '--type', 'PostPublished')).stdout);
    expect(byType.map((e) => e.id)).to.deep.equal(original.filter((e) => e.type === 'CommentAdded' || e.type === 'PostPublished').map((e) => e.id));
    expect(byType).to.have.length(8);
    const from = original[3].position;
    const to = original[original.length - 2].position;
    const window = lines((await cli(svc.dataDir, 'events', 'export', '--from', String(from), '--to', String(to), '--stream', 'agent-*')).stdout);
    expect(window.map((e) => e.id)).to.deep.equal(
      original.filter((e) => e.position > from && e.position <= to && e.stream.startsWith('agent-')).map((e) => e.id),
    );
    expect(window.length).to.be.greaterThan(0);
    const tail = lines((await cli(svc.dataDir, 'events', 'tail', '--no-follow', '--json', '--from', '0', '--type', 'PostPublished')).stdout);
    expect(tail.map((e) => e.id)).to.deep.equal(original.filter((e) => e.type === 'PostPublished').map((e) => e.id));
  });

  it('replay --from folds only the events after a position into fresh collections and reports them', async function () {
    this.timeout(300_000);
    const original = await allEvents(join(svc.dataDir, 'events.sqlite'));
    const comments = original.filter((e) => e.type === 'CommentAdded');
    const { stdout } = await cli(svc.dataDir, 'replay', 'posts', '--from', String(comments[1].position));
    // After the second comment: the third and fourth posts (and their comments) only.
    expect(stdout).to.match(/^posts\/posts: 2 docs sha256 [0-9a-f]{16} \(events after \d+\)$/m);
    const whole = await cli(svc.dataDir, 'replay', 'posts', '--from', '0');
    expect(whole.stdout).to.match(/^posts\/posts: 4 docs/m);
  });

  it('eventFilter: time range on occurred_at (since inclusive, until exclusive), exact and prefix streams', () => {
    const e = (position: number, stream: string, at: string) =>
      ({ id: `${position}`, stream, revision: 0, position, type: 'T', data: {}, metadata: { occurred_at: at } }) as unknown as RecordedEvent;
    const f = eventFilter({ since: '2026-01-02T00:00:00Z', until: '2026-01-03T00:00:00Z', stream: ['post-1', 'agent-*'] });
    expect(f.matches(e(1, 'post-1', '2026-01-02T00:00:00.000Z'))).to.equal(true);
    expect(f.matches(e(2, 'post-2', '2026-01-02T10:00:00.000Z'))).to.equal(false);
    expect(f.matches(e(3, 'agent-x', '2026-01-03T00:00:00.000Z'))).to.equal(false);
    expect(f.matches(e(4, 'agent-x', '2026-01-01T23:59:59.999Z'))).to.equal(false);
    expect(f.matches(e(5, 'agent-x', '2026-01-02T23:59:59.999Z'))).to.equal(true);
    expect(() => eventFilter({ from: '-1' })).to.throw('--from');
    expect(() => eventFilter({ since: 'yesterday' })).to.throw('--since');
  });
});
