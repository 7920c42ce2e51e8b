import { nightOf, recomputeTrust } from '../../commands/marketplace/trust.ts';
import { latestNightlyRun, trustInputs } from '../../queries/marketplace/marketplace.ts';
import type { WorkerDeps } from '../deps.ts';

/** What the trust job uses of the composition root. */
export type TrustDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'runner' | 'store'>;

export const TRUST_JOB = 'marketplace.trust-nightly';

export interface TrustRun {
  run_id: string;
  /** Agents whose scores changed (TrustScoreRecomputed events). */
  agents: number;
  /** False when the run had already happened (nothing appended). */
  recorded: boolean;
}

/**
 * One recomputation of every agent with a contract record: `run_id` names it, and its command id
 * derives from it, so running it twice (a restart, two processes) appends it once.
 */
export async function recomputeTrustRun(s: TrustDeps, run: { run_id: string; night: string | null }): Promise<TrustRun | null> {
  const agents = await trustInputs(s.store);
  // Nothing to score: no run is recorded (a network without contracts writes nothing at night).
  if (agents.length === 0) return null;
  const now = s.clock.now();
  const r = await recomputeTrust(s.bus, { ...run, agents }, { commandId: `trust:${run.run_id}`, actor: 'system:trust', requestId: null, now });
  if (r.events.length) await s.runner.waitFor(r.position);
  return { run_id: run.run_id, agents: r.events.filter((e) => e.type === 'TrustScoreRecomputed').length, recorded: r.events.length > 0 && !r.duplicate };
}

/**
 * The nightly job's body (shared DECISIONS: 02:00 UTC): runs the night of the injected clock's
 * `now` (the date of the latest 02:00 UTC) unless that night already ran. The job fires every 5
 * minutes, so the run starts at most 5 minutes after 02:00, or at the first check after a start.
 */
export async function runNightlyTrust(s: TrustDeps): Promise<TrustRun | null> {
  const night = nightOf(s.clock.now());
  const last = await latestNightlyRun(s.store);
  if (last && typeof last.night === 'string' && last.night >= night) return null;
  return recomputeTrustRun(s, { run_id: `nightly-${night}`, night });
}
