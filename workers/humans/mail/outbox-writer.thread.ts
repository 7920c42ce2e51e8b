// The outbox transport's writer thread (workers/humans/mail/transport.ts): each message is one mail
// file, written to a temporary name and renamed into place (a reader never sees half a file), with
// the folder made on first use (0700) and the file private (0600). The synchronous calls cost
// about a quarter of the CPU of the promise-based ones (one FileHandle, four thread-pool round
// trips and their promises per mail), and run here, beside the event loop rather than on it.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

export interface OutboxWrite {
  id: number;
  dir: string;
  file: string;
  data: string;
}
export interface OutboxWritten {
  id: number;
  error?: string;
}

const made = new Set<string>();
const port = parentPort;
if (port === null) throw new Error('outbox-writer.thread.ts runs as a worker thread');
port.on('message', (w: OutboxWrite) => {
  try {
    if (!made.has(w.dir)) {
      mkdirSync(w.dir, { recursive: true, mode: 0o700 });
      made.add(w.dir);
    }
    const tmp = `${w.file}.tmp`;
    writeFileSync(tmp, w.data, { mode: 0o600 });
    renameSync(tmp, w.file);
    port.postMessage({ id: w.id } satisfies OutboxWritten);
  } catch (err) {
    // Someone may have removed the folder: it is made again on the next write.
    made.delete(w.dir);
    port.postMessage({ id: w.id, error: err instanceof Error ? err.message : String(err) } satisfies OutboxWritten);
  }
});
