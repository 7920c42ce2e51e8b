// `events export`, `events import` and `events tail`: the log with its metadata as NDJSON, for
// analysts and for moving a log between stores.
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import type { EventLog, EventMetadata, RecordedEvent } from '../events/store/port.ts';
import { collect, eventFilter, eventLine, type EventFilterOptions } from './event-filter.ts';

const PAGE = 5000;

type WithLog = <T>(fn: (s: { log: EventLog }) => Promise<T>) => Promise<T>;

function progressBar(label: string) {
  // On stderr (cli-progress' default), so an export to stdout stays clean NDJSON; drawn only on a terminal.
  return new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}% | position {value}/{total} | {events} events | ETA {eta_formatted}`, hideCursor: true, noTTYOutput: false },
    cliProgress.Presets.shades_classic,
  );
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** Every event the filter matches, page by page (the type filter is the log's own). */
export async function* filteredEvents(log: EventLog, options: EventFilterOptions, head: number): AsyncGenerator<RecordedEvent[]> {
  const filter = eventFilter(options);
  const end = Math.min(filter.to, head);
  let after = filter.after;
  while (after < end) {
    const page = await log.readAll({ after, maxCount: PAGE, types: filter.types });
    if (page.length === 0) return;
    after = page[page.length - 1].position;
    const matching = page.filter((e) => filter.matches(e) && e.position <= end);
    if (matching.length > 0) yield matching;
    if (page.length < PAGE) return;
  }
}

/** Reads an NDJSON export and appends every event, in file order, with its id, stream and revision. */
export async function importEvents(log: EventLog, lines: AsyncIterable<string>, onProgress?: (count: number, position: number) => void) {
  let count = 0;
  let moved = 0;
  let pending: Array<Promise<unknown>> = [];
  let last = 0;
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const e = JSON.parse(line) as RecordedEvent;
    if (typeof e.id !== 'string' || typeof e.stream !== 'string' || typeof e.type !== 'string' || !Number.isInteger(e.revision)) {
      throw new Error(`line ${count + 1} is not an exported event`);
    }
    const expected = e.revision === 0 ? 'no_stream' : e.revision - 1;
    // Appends made in one turn are committed in call order (one group commit on the embedded log):
    // positions follow the file's order.
    pending.push(
      log.append(e.stream, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata as EventMetadata }], expected).then((r) => {
        if (typeof e.position === 'number' && r.position !== e.position) moved++;
        last = Math.max(last, r.position);
      }),
    );
    count++;
    // Only the embedded log commits in call order; elsewhere each append waits for the one before.
    if (pending.length >= (log.name === 'sqlite' ? 1000 : 1)) {
      await Promise.all(pending);
      pending = [];
      onProgress?.(count, last);
    }
  }
  await Promise.all(pending);
  onProgress?.(count, last);
  return { count, moved, head: last };
}

export function eventCommands(events: Command, withServices: WithLog): void {
  const filters = (c: Command) =>
    c
      .option('--stream <name>', 'only this stream; a trailing * matches a prefix (repeatable)', collect)
      .option('--type <type>', 'only this event type (repeatable)', collect)
      .option('--from <position>', 'only events after this position')
      .option('--to <position>', 'only events up to this position (inclusive)')
      .option('--since <time>', 'only events that occurred at or after this ISO time')
      .option('--until <time>', 'only events that occurred before this ISO time');

  filters(events.command('export'))
    .description('write events as NDJSON (id, stream, revision, position, type, data, metadata), with a progress bar on stderr')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (opts: EventFilterOptions & { out?: string }) => {
      await withServices(async (s) => {
        const head = await s.log.headPosition();
        const out: Writable = opts.out ? createWriteStream(opts.out, { flags: 'wx' }) : process.stdout;
        const bar = progressBar('export');
        bar.start(Math.max(head, 1), Number(opts.from ?? 0), { events: 0 });
        let n = 0;
        try {
          for await (const page of filteredEvents(s.log, opts, head)) {
            for (const e of page) await write(out, eventLine(e));
            n += page.length;
            bar.update(page[page.length - 1].position, { events: n });
          }
          bar.update(Math.max(head, 1), { events: n });
        } finally {
          bar.stop();
        }
        if (opts.out) {
          out.end();
          await once(out, 'finish');
        }
        process.stderr.write(`exported ${n} events (log head ${head})\n`);
      });
    });

  events
    .command('import')
    .argument('<file>', 'an NDJSON export (events export)')
    .description('append every event of an export to a fresh (empty) log, keeping ids, streams and revisions')
    .action(async (file: string) => {
      await withServices(async (s) => {
        if ((await s.log.headPosition()) > 0) throw new Error('the log is not empty: import only into a fresh log (a new DATA_DIR or EventStoreDB database)');
        const bar = progressBar('import');
        bar.start(1, 0, { events: 0 });
        try {
          const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
          const result = await importEvents(s.log, lines, (count, position) => {
            bar.setTotal(Math.max(position, 1));
            bar.update(position, { events: count });
          });
          bar.stop();
          process.stderr.write(
            `imported ${result.count} events (head ${result.head})${result.moved ? `; ${result.moved} got another position than in the export` : '; every event kept its position'}\n`,
          );
        } finally {
          bar.stop();
        }
      });
    });

  filters(events.command('tail'))
    .description('print events (default: the last 20), then follow new ones')
    .option('--no-follow', 'print and exit instead of following new events')
    .option('--json', 'NDJSON lines as events export writes them')
    .action(async (opts: EventFilterOptions & { follow: boolean; json?: boolean }) => {
      await withServices(async (s) => {
        const head = await s.log.headPosition();
        const from = opts.from ?? String(Math.max(0, head - 20));
        const print = (e: RecordedEvent) =>
          process.stdout.write(opts.json ? eventLine(e) : `${e.position}\t${e.metadata.occurred_at}\t${e.stream}\t${e.type}\t${JSON.stringify(e.data)}\n`);
        const filter = eventFilter({ ...opts, from });
        if (!opts.follow) {
          for await (const page of filteredEvents(s.log, { ...opts, from }, head)) page.forEach(print);
          return;
        }
        const sub = s.log.subscribeAll(filter.after, (batch) => {
          for (const e of batch) if (filter.matches(e)) print(e);
        });
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await sub.close();
      });
    });
}
