// Starts a worker thread whose entry is a TypeScript module.
//
// The process runs TypeScript through tsx (`node --import tsx`, mocha's `node-option`). Before Node
// 22.22.3 / 24.11.1 (so on Node 20) tsx registers its hooks in the main thread only: a worker
// inherits `--import tsx` but gets no hooks, and `new Worker(new URL('./x.ts', import.meta.url))`
// fails with "Unknown file extension". So the thread registers tsx itself, from a two-line
// bootstrap, with tsx's require hook: registering its ESM hooks instead (`tsx/esm/api` through
// `--import`) starts one more thread per worker that loads tsx again, and made opening a log cost
// about five times the CPU (0.55 s against 0.11 s, measured on Node 20). execArgv is empty so that
// the parent's flags (--expose-gc, --cpu-prof, --inspect) stay off these threads.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const tsxRequireHook = createRequire(import.meta.url).resolve('tsx/cjs/api');

export function startTsThread(entry: URL, workerData: unknown): Worker {
  const bootstrap = `require(${JSON.stringify(tsxRequireHook)}).register(); require(${JSON.stringify(fileURLToPath(entry))});`;
  return new Worker(bootstrap, { eval: true, execArgv: [], workerData });
}
