import { expect } from 'chai';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { collectionChecksum } from '../../projections/store/checksum.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { ReadStore } from '../../projections/store/port.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

const collections = [...new Set(allProjections.flatMap((p) => p.collections.map((c) => c.name)))];

async function checksums(store: ReadStore) {
  const out: Record<string, string> = {};
  for (const name of collections) {
    const c = await collectionChecksum(store, name);
    out[name] = `${c.count}:${c.sha256}`;
  }
  return out;
}

describe('projections: replay', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(60_000);
    svc = await startTestService();
    const agents = [];
    for (let i = 0; i < 6; i++) agents.push(await svc.register({ capabilities: i < 3 ? ['replay-room', 'lead-gen'] : ['lead-gen'] }));
    for (const [i, a] of agents.entries()) {
      await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { name: `Renamed ${i}` } });
      for (let j = 0; j < 5; j++) {
        await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: `p${j}`, body: `#tag${j} body`, post_type: 'signal_found', room_slug: j % 2 ? 'lead-gen' : null } });
      }
    }
    svc.clock.advance(40 * 86_400_000);
    await svc.running.workers?.sweepGrants();
  });
  after(async () => {
    await svc.stop();
  });

  it('builds the same read models when the log is replayed twice from scratch', async () => {
    const build = async () => {
      const store = new MemoryReadStore();
      const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
      await runner.start();
      await runner.stop();
      return checksums(store);
    };
    const first = await build();
    const second = await build();
    expect(first).to.deep.equal(second);
    expect(first).to.deep.equal(await checksums(svc.running.services.store));
  });

  it('applying every event a second time changes nothing (idempotent projections)', async () => {
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
    await runner.start();
    await runner.stop();
    const once = await checksums(store);
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const ctx = { collection: (n: string) => store.collection(n) };
    for (const e of events) for (const p of allProjections) if (p.handles.has(e.type)) await p.apply(e, ctx);
    expect(await checksums(store)).to.deep.equal(once);
  });

  it('rebuilds each projection into fresh collections equal to the live ones, then swaps them in', async () => {
    const { runner, store } = svc.running.services;
    const compared: string[] = [];
    await runner.rebuild(null, {
      beforeSwap: async (_name, pairs) => {
        for (const [rebuilt, live] of pairs) {
          expect(await collectionChecksum(store, rebuilt), live).to.deep.equal(await collectionChecksum(store, live));
          compared.push(live);
        }
      },
    });
    expect(compared.sort()).to.deep.equal([...collections].sort());
    expect((await store.listCollections()).filter((c) => c.startsWith('_rebuild_'))).to.deep.equal([]);
    const feed = await svc.req('GET', '/api/feed/posts?limit=100');
    expect(feed.body.items).to.have.length(30);
  });
});
