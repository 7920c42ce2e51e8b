import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../events/catalogue.ts';
import { HOUR } from '../../events/kernel/clock.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { ReadStore } from '../../projections/store/port.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { until } from '../helpers/webhook-receiver.ts';
import { checksumsOf } from '../helpers/checksums.ts';

const MINE = ['match_profiles', 'inbox_events', 'posts', 'agents', 'credit_usage_daily', 'hashtag_daily', 'rooms'];

const checksums = (store: ReadStore) => checksumsOf(store, MINE);

describe('projections: matching read models replay', function () {
  this.timeout(300_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
    const match = async (apiKey: string, gives: string[], asks: string[]) => {
      const r = await svc.req('POST', '/api/agent/match', { apiKey, body: { gives, asks } });
      expect(r.status, r.text).to.equal(200);
      return r.body;
    };
    const a = await svc.register({ name: 'Alpha', capabilities: ['lead-gen'] });
    const b = await svc.register({ name: 'Beta', capabilities: ['b2b-sales'] });
    const c = await svc.register({ name: 'Gamma', capabilities: ['b2b-sales', 'design-ops'] });
    await match(b.api_key, ['data-labeling'], ['lead-gen']);
    await match(c.api_key, [], ['lead-gen', 'investor-connect']);
    expect((await match(a.api_key, ['lead-gen'], ['b2b-sales'])).count).to.equal(2);
    await svc.req('PATCH', '/api/protocol/me', { apiKey: b.api_key, body: { name: 'Beta Renamed' } });
    // A newcomer the scout reports to a and c; then a is rate-limited, c posts.
    const d = await svc.register({ name: 'Delta', capabilities: ['b2b-sales', 'investor-connect'] });
    await until(async () => (await svc.running.services.store.collection('posts').count({ source: 'scout' })) >= 1, 'a scout post');
    svc.clock.advance(5 * HOUR);
    await match(a.api_key, ['lead-gen'], ['b2b-sales', 'investor-connect']);
    // A moderator ghosts d (fresh agents' flags hide nothing, docs/MODERATION.md).
    const { decideModerationItem } = await import('../../commands/feed/moderation.ts');
    const ctx = { commandId: 'mod-d', actor: 'test', requestId: null, now: svc.clock.now() };
    const decided = await decideModerationItem(
      svc.running.services.bus,
      { item_kind: 'agent', item_id: d.agent_id, author_agent_id: d.agent_id },
      'uphold',
      'usr_test',
      'spam',
      ctx,
    );
    await svc.running.services.runner.waitFor(decided.position);
    await match(a.api_key, ['lead-gen'], ['investor-connect']);
  });
  after(async () => {
    await svc.stop();
  });

  it('writes only events that match their JSON Schema, runs and auto-posts of both kinds among them', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    expect(events.filter((e) => e.type === 'MatchingRunCompleted')).to.have.length(5);
    const sources = events.filter((e) => e.type === 'PostPublished').map((e) => (e.data as { source?: string }).source);
    expect(sources).to.include.members(['mixer', 'scout']);
    for (const e of events) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });

  it('keeps standing offers and needs per agent, hides ghosted agents, and records new_match for both sides', async () => {
    const { store } = svc.running.services;
    const profiles = await store.collection('match_profiles').find({ needs: 'lead-gen' });
    expect(profiles.map((p) => p.name).sort()).to.deep.equal(['Beta Renamed', 'Gamma']);
    const beta = profiles.find((p) => p.name === 'Beta Renamed');
    expect(beta?.offers).to.deep.equal(['data-labeling', 'b2b-sales']);
    expect(await store.collection('match_profiles').count({ hidden: true })).to.equal(1);
    expect(await store.collection('inbox_events').count({ event: 'new_match' })).to.be.greaterThan(4);
    const plan = await store.collection('match_profiles').explain({ needs: { $in: ['lead-gen', 'b2b-sales'] } });
    expect(plan.index).to.equal('by_needs');
  });

  it('rebuilds the same read models from the log twice, and applying every event twice changes nothing', async () => {
    const live = await checksums(svc.running.services.store);
    const build = async () => {
      const store = new MemoryReadStore();
      const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
      await runner.start();
      await runner.stop();
      return store;
    };
    const first = await build();
    const second = await build();
    expect(await checksums(first)).to.deep.equal(await checksums(second));
    expect(await checksums(first)).to.deep.equal(live);
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const ctx = { collection: <N extends string>(n: N) => first.collection(n) };
    for (const e of events) for (const p of allProjections) if (p.handles.has(e.type)) await p.apply(e, ctx);
    expect(await checksums(first)).to.deep.equal(live);
  });
});
