import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus } from '../../commands/handler.ts';
import { ManualClock } from '../../events/kernel/clock.ts';
import { SqliteEventLog } from '../../events/store/sqlite.ts';

/** A command bus over a fresh SQLite log in a temporary folder, on a manual clock (command tests). */
export function openCommandBus(prefix: string): { dir: string; log: SqliteEventLog; clock: ManualClock; bus: CommandBus } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const log = SqliteEventLog.open({ path: join(dir, 'events.sqlite') });
  const clock = new ManualClock('2026-03-10T09:30:00.000Z');
  return { dir, log, clock, bus: new CommandBus(log, clock) };
}

/** Closes the log of openCommandBus and removes its folder. */
export async function closeCommandBus(log: SqliteEventLog, dir: string): Promise<void> {
  await log.close();
  rmSync(dir, { recursive: true, force: true });
}
