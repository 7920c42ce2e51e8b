// The event-sourced write with nothing of the service around it: bare Koa + koa-body, and on POST
// one append of the request body as an event to a new stream of the service's SQLite event log
// (synchronous=FULL, group commit on its writer thread, the background checkpointer), answered
// once the append is acknowledged. No authentication, decider, projection or read-your-writes
// wait. `npm run bench -- circles` and `-- marketplace` measure it beside the service's writes, to
// show what a durable append alone costs on this machine against the bare Koa POST.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveOrderedUuid } from '../../events/kernel/ids.ts';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { serveBare } from './bare-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'agent-network-bare-append-'));
const log = SqliteEventLog.open({ path: join(dir, 'events.sqlite') });
serveBare(
  async (ctx) => {
    // Time-ordered, as the service's event ids and new streams are (deriveOrderedUuid, deriveOrderedId).
    const now = Date.now();
    const id = deriveOrderedUuid(randomUUID(), '', now);
    const at = new Date(now).toISOString();
    const r = await log.append(
      `bench-${id}`,
      [
        {
          id,
          type: 'BenchWritten',
          data: ctx.request.body as Record<string, unknown>,
          metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at, schema_version: 1 },
        },
      ],
      'no_stream',
    );
    ctx.status = 201;
    ctx.body = { ok: true, position: r.position };
  },
  undefined,
  async () => {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  },
);
