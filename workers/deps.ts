import type { Logger } from 'pino';
import type { SecretBox } from '../commands/agents/secrets.ts';
import type { CommandBus } from '../commands/handler.ts';
import type { PaymentProvider } from '../commands/credits/payments/port.ts';
import type { TierPrices } from '../commands/credits/pricing.ts';
import type { Clock } from '../events/kernel/clock.ts';
import type { Foreground } from '../events/kernel/foreground.ts';
import type { BlobStore } from '../events/store/blobs.ts';
import type { EventLog } from '../events/store/port.ts';
import type { ReadStore } from '../projections/store/port.ts';

/** Read-your-writes: resolves once the read models have applied the log up to `position`. */
export interface ReadModelsWait {
  waitFor(position: number, timeoutMs?: number): Promise<void>;
}

/** The settings the workers read (the composition root's configuration satisfies it). */
export interface WorkerConfig {
  mongodbUrl: string | null;
  shutdownTimeoutMs: number;
  smtpUrl: string | null;
  mailOutboxDir: string;
  publicBaseUrl: string;
  webhookAllowLoopback: boolean;
  /** Monthly tier prices in INR (the renewal orders' amounts). */
  tierPrices: TierPrices;
}

/**
 * Everything the composition root (api/services.ts) can hand a worker. Workers do not import the
 * API layer: each declares the slice it uses as a `Pick` of this, so a test or another process
 * can run it with exactly that.
 */
export interface WorkerDeps {
  config: WorkerConfig;
  clock: Clock;
  logger: Logger;
  log: EventLog;
  store: ReadStore;
  bus: CommandBus;
  runner: ReadModelsWait;
  secrets: SecretBox;
  /** The payment provider the renewal orders are made with (null: payments are off, no renewal is ordered). */
  payments: PaymentProvider | null;
  /** Uploaded images' bytes. */
  blobs: BlobStore;
  /** The embedded SQLite file (the Agenda job store lives beside the event log). */
  sqlitePath: string;
  /** The requests in flight in this process: background work narrows its lanes while there are any (workers/lanes.ts). */
  foreground?: Foreground;
}
