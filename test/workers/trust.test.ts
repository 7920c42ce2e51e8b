import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveDisputeSigned } from '../../commands/marketplace/contract.ts';
import { trustScores } from '../../commands/marketplace/trust.ts';
import { recomputeTrustRun } from '../../workers/marketplace/trust.ts';
import { ManualClock } from '../../events/kernel/clock.ts';
import { defined } from '../helpers/defined.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import type { Party } from '../api/marketplace-helpers.ts';
import { move, openContract } from '../api/marketplace-helpers.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';
const ADMIN = 'judge@example.com';

describe('workers: the nightly trust job (injected clock)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let requester: Party;
  let provider: Party;
  const clock = new ManualClock('2026-03-10T09:30:00.000Z');
  after(() => svc?.stop());

  const asParty = async (): Promise<Party> => {
    const a = await svc.register();
    return { agent_id: a.agent_id, api_key: a.api_key, token: '' };
  };
  const logged = async (type: string) => (await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 })).filter((e) => e.type === type);
  const nightly = () => defined(svc.running.workers, 'the workers').runNightlyTrust();
  const reputation = async () => (await svc.req('GET', `/api/protocol/agents/${provider.agent_id}/reputation`)).body;

  /** A contract the provider completes with `rating`. */
  const completed = async (rating: number) => {
    const id = await openContract(svc, 'api_key', requester, provider);
    for (const verb of ['accept', 'start', 'deliver']) await move(svc, 'api_key', provider, id, verb);
    await move(svc, 'api_key', requester, id, 'complete', { rating });
  };

  it('runs once per night at 02:00 UTC, not again after a restart, and the score is the formula', async () => {
    svc = await startTestService({ ADMIN_EMAILS: ADMIN }, { clock });
    requester = await asParty();
    provider = await asParty();
    // Nothing to score yet: no run is recorded.
    expect(await nightly()).to.equal(null);

    await completed(5);
    await completed(3);
    // Cancelled after acceptance and cancelled while open: only the first counts as an end.
    const cancelledLate = await openContract(svc, 'api_key', requester, provider);
    await move(svc, 'api_key', provider, cancelledLate, 'accept');
    await move(svc, 'api_key', requester, cancelledLate, 'cancel');
    const cancelledEarly = await openContract(svc, 'api_key', requester, provider);
    await move(svc, 'api_key', provider, cancelledEarly, 'cancel');

    // 09:30 on 10 March: the night of 10 March (its 02:00 has passed) has not run yet.
    const first = await nightly();
    expect(first).to.deep.include({ run_id: 'nightly-2026-03-10', agents: 1, recorded: true });
    // completion 2/3, average rating 4: trust = 4/5 x 100 x 2/3 = 53.3; deal close 2/4.
    let rep = await reputation();
    expect(rep).to.include({ trust_score: 53.3, completion_rate: 0.667, contracts_completed: 2, contracts_rated: 2, average_rating: 4, deal_close_rate: 0.5 });
    expect(rep.trust_score).to.equal(
      trustScores({ agent_id: provider.agent_id, completed: 2, ended: 3, rating_sum: 8, rating_count: 2, responses: 4 }).trust_score,
    );
    expect(rep.trust_computed_at).to.equal('2026-03-10T09:30:00.000Z');
    expect((await svc.req('GET', `/api/protocol/agents/${provider.agent_id}`)).body.trust_score).to.equal(53.3);
    expect((await svc.req('GET', '/api/network/leaderboard?limit=1')).body.items[0].agent_id).to.equal(provider.agent_id);

    // The same night again, and just before the next 02:00: nothing.
    expect(await nightly()).to.equal(null);
    clock.set('2026-03-11T01:59:59.999Z');
    expect(await nightly()).to.equal(null);
    expect(await logged('TrustRecomputeCompleted')).to.have.length(1);

    // A dispute ruled refunded, then 02:00 on 11 March: the next night's run.
    const refunded = await openContract(svc, 'api_key', requester, provider);
    await move(svc, 'api_key', provider, refunded, 'accept');
    await move(svc, 'api_key', requester, refunded, 'dispute');
    // The admin's resolution, through the command the route calls.
    const s = svc.running.services;
    const resolved = await resolveDisputeSigned(
      s.bus,
      s.serviceKey,
      s.log,
      refunded,
      { admin_id: 'usr_admin', outcome: 'refunded', note: 'not delivered' },
      {
        commandId: 'resolve-1',
        actor: 'usr_admin',
        requestId: null,
        now: clock.now(),
      },
    );
    // The job reads the read models: they must include the ruling first (a route would answer only then, too).
    await s.runner.waitFor(resolved.position);
    clock.set('2026-03-11T02:00:00.000Z');
    expect(await nightly()).to.deep.include({ run_id: 'nightly-2026-03-11', agents: 1, recorded: true });
    rep = await reputation();
    // completion 2/4 (refunded counts as not completed), average 4: trust 40.
    expect(rep).to.include({ trust_score: 40, completion_rate: 0.5, contracts_completed: 2, deal_close_rate: 0.4 });

    // A restart during the same night: the job finds the night done, and even a run forced past
    // that check (the read model behind, two processes) appends nothing twice.
    await svc.stop({ keepData: true });
    clock.set('2026-03-11T02:10:00.000Z');
    svc = await startTestService({ ADMIN_EMAILS: ADMIN }, { clock, dataDir: svc.dataDir });
    expect(await nightly()).to.equal(null);
    const forced = await recomputeTrustRun(svc.running.services, { run_id: 'nightly-2026-03-11', night: '2026-03-11' });
    expect(forced?.recorded).to.equal(false);
    expect(await logged('TrustRecomputeCompleted')).to.have.length(2);
    expect(await logged('TrustScoreRecomputed')).to.have.length(2);
  });

  it('recomputes on demand from the admin CLI', async () => {
    const dataDir = svc.dataDir;
    await svc.stop({ keepData: true });
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'api/cli.ts', 'trust', 'recompute'], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
    });
    expect(stdout).to.match(/trust recomputed for 1 agent\(s\), 0 changed \(run manual-/);
    svc = await startTestService({ ADMIN_EMAILS: ADMIN }, { clock, dataDir });
    expect(await logged('TrustRecomputeCompleted')).to.have.length(3);
  });
});
