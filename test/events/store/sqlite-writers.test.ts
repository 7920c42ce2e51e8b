import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewEvent, RecordedEvent } from '../../../events/store/port.ts';
import { SqliteEventLog } from '../../../events/store/sqlite.ts';

const ev = (n: number): NewEvent => ({
  id: randomUUID(),
  type: 'Tick',
  data: { n },
  metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date(0).toISOString(), schema_version: 1 },
});

describe('SqliteEventLog: other writers on the same file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evlog-writers-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('delivers commits made through another connection to live subscribers, in order, with no gap', async () => {
    const path = join(dir, 'log.sqlite');
    const server = SqliteEventLog.open({ path });
    const cli = SqliteEventLog.open({ path });
    const seen: RecordedEvent[] = [];
    const sub = server.subscribeAll(0, (events) => {
      seen.push(...events);
    });
    try {
      await server.append('s-1', [ev(1)], 'no_stream');
      await cli.append('admins', [ev(2)], 'any'); // e.g. `npm run cli -- admin grant`
      await server.append('s-1', [ev(3)], 0); // our next commit lands after the foreign one
      await cli.append('admins', [ev(4)], 'any'); // noticed by the poll while we are idle
      const deadline = Date.now() + 120_000; // a bound for failure only: the loop ends as soon as all four arrive
      while (seen.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen.map((e) => (e.data as { n: number }).n)).to.deep.equal([1, 2, 3, 4]);
      expect(seen.map((e) => e.position)).to.deep.equal([1, 2, 3, 4]);
    } finally {
      await sub.close();
      await cli.close();
      await server.close();
    }
  });
});
