// The command line's process entry (`npm run cli -- ...`): the composition root opens the stores
// and hands the program (cli/index.ts) the narrow services it uses.
import { pino } from 'pino';
import { cliProgram } from '../cli/index.ts';
import { loadConfig } from './config.ts';
import { closeServices, openServices } from './services.ts';

const program = cliProgram(async () => {
  // The CLI never writes the read-model snapshot or the SQLite read store: the service owns them
  // (it works on a copy of the store's last commit).
  const services = await openServices(loadConfig(), { logger: pino({ level: process.env.LOG_LEVEL ?? 'warn' }), saveSnapshot: false, readModelsCopy: true });
  return { services, close: () => closeServices(services) };
});

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
