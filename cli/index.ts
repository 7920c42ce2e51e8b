import { Command } from 'commander';
import cliProgress from 'cli-progress';
import { creditHistory } from '../commands/credits/history.ts';
import { ADMINS_STREAM } from '../events/agents.ts';
import type { SuperAdminGranted } from '../events/agents.ts';
import { randomUUID } from 'node:crypto';
import type { CommandBus } from '../commands/handler.ts';
import type { Clock } from '../events/kernel/clock.ts';
import type { EventLog } from '../events/store/port.ts';
import type { ProjectionRunner } from '../projections/runner.ts';
import { collectionChecksum } from '../projections/store/checksum.ts';
import type { ReadStore } from '../projections/store/port.ts';
import { hideRoom, mergeRoom } from '../commands/feed/rooms.ts';
import { getRoomDoc } from '../queries/feed/rooms.ts';
import { createCommunity, nameCommunityAdmin } from '../commands/communities/actions.ts';

const operator = () => `cli:${process.env.USER ?? 'operator'}`;

/** What the commands use of the stores; the process entry (api/cli.ts) opens them through the composition root. */
export interface CliServices {
  log: EventLog;
  store: ReadStore;
  bus: CommandBus;
  clock: Clock;
  runner: Pick<ProjectionRunner, 'rebuild' | 'waitFor'>;
}

/** Opens the stores for one command; `close` is called when it ends. */
export type ConnectCli = () => Promise<{ services: CliServices; close(): Promise<void> }>;

/** The operator and analyst command line: every command opens the stores, runs, and closes them. */
export function cliProgram(connect: ConnectCli): Command {
  async function withServices<T>(fn: (s: CliServices) => Promise<T>): Promise<T> {
    const { services, close } = await connect();
    try {
      return await fn(services);
    } finally {
      await close();
    }
  }

  const program = new Command();
  program.name('agent-network').description('Operator and analyst command line (embedded stores, or EVENTSTORE_URL / MONGODB_URL)');

  program
    .command('replay')
    .argument('[projection]', 'one projection to rebuild (default: all)')
    .description('rebuild read models from the event log into fresh collections, verify them against the live ones, then swap them in')
    .action(async (projection: string | undefined) => {
      await withServices(async (s) => {
        const head = await s.log.headPosition();
        const bar = new cliProgress.SingleBar(
          { format: '{projection} [{bar}] {percentage}% | {value}/{total} events', hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
        let mismatches = 0;
        let current = '';
        // Projections already verified and swapped: the runner's last progress report for one comes
        // after the swap and must not start the bar again (a running bar keeps a TTY process alive).
        const swapped = new Set<string>();
        try {
          await s.runner.rebuild(projection ? [projection] : null, {
            onProgress: (p) => {
              if (swapped.has(p.projection)) return;
              if (p.projection !== current) {
                if (current) bar.stop();
                current = p.projection;
                bar.start(Math.max(head, 1), 0, { projection: p.projection });
              }
              bar.update(Math.min(p.position, head), { projection: p.projection });
            },
            beforeSwap: async (name, pairs) => {
              bar.update(head, { projection: name });
              bar.stop();
              current = '';
              swapped.add(name);
              for (const [rebuilt, live] of pairs) {
                const a = await collectionChecksum(s.store, rebuilt);
                const b = await collectionChecksum(s.store, live);
                const same = a.sha256 === b.sha256 && a.count === b.count;
                if (!same) mismatches++;
                process.stdout.write(
                  `${same ? 'OK      ' : 'MISMATCH'} ${name}/${live}: rebuilt ${a.count} docs sha256 ${a.sha256.slice(0, 16)} | live ${b.count} docs sha256 ${b.sha256.slice(0, 16)}\n`,
                );
              }
            },
          });
        } finally {
          // Whatever happened, no bar (and no redraw timer) outlives the command.
          bar.stop();
        }
        process.stdout.write(
          `replayed ${head} events; ${mismatches === 0 ? 'all rebuilt read models equal the live ones' : `${mismatches} collection(s) differ`}\n`,
        );
        if (mismatches) process.exitCode = 1;
      });
    });

  program
    .command('events')
    .description('event log tools')
    .command('tail')
    .option('--from <position>', 'start after this global position (default: the last 20 events)')
    .option('--no-follow', 'print and exit instead of following new events')
    .action(async (opts: { from?: string; follow: boolean }) => {
      await withServices(async (s) => {
        const head = await s.log.headPosition();
        const from = opts.from !== undefined ? Number(opts.from) : Math.max(0, head - 20);
        if (!Number.isInteger(from) || from < 0) throw new Error('--from must be a non-negative integer');
        const print = (e: { position: number; stream: string; type: string; metadata: { occurred_at: string }; data: unknown }) =>
          process.stdout.write(`${e.position}\t${e.metadata.occurred_at}\t${e.stream}\t${e.type}\t${JSON.stringify(e.data)}\n`);
        if (!opts.follow) {
          let after = from;
          for (;;) {
            const page = await s.log.readAll({ after, maxCount: 1000 });
            page.forEach(print);
            if (page.length < 1000) return;
            after = page[page.length - 1].position;
          }
        }
        const sub = s.log.subscribeAll(from, (events) => events.forEach(print));
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await sub.close();
      });
    });

  program
    .command('credits')
    .description('credit ledger tools')
    .command('history')
    .argument('<agent_id>')
    .option('--limit <n>', 'transactions to show (newest first)', '50')
    .action(async (agentId: string, opts: { limit: string }) => {
      await withServices(async (s) => {
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new Error('--limit must be a positive integer');
        const rows = await creditHistory(s.log, agentId, limit);
        if (rows.length === 0) {
          process.stdout.write(`no credit history for ${agentId}\n`);
          return;
        }
        for (const t of rows) {
          const sign = t.type === 'debit' ? '-' : '+';
          process.stdout.write(
            `${t.created_at}\t${sign}${t.amount.toFixed(2)}\tbalance ${t.balance_after.toFixed(2)}\t${t.action}\t${JSON.stringify(t.reference)}\t#${t.position}\n`,
          );
        }
      });
    });

  program
    .command('admin')
    .description('administration')
    .command('grant')
    .argument('<email>', 'address that becomes a super admin')
    .action(async (email: string) => {
      const normalised = email.trim().toLowerCase();
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalised)) throw new Error(`not an e-mail address: ${email}`);
      await withServices(async (s) => {
        const now = s.clock.now();
        const event: SuperAdminGranted = { type: 'SuperAdminGranted', data: { email: normalised, granted_at: now.toISOString() } };
        const r = await s.bus.appendRaw(ADMINS_STREAM, [event], 'any', {
          commandId: randomUUID(),
          actor: `cli:${process.env.USER ?? 'operator'}`,
          requestId: null,
          now,
        });
        process.stdout.write(`${normalised} is a super admin (event at position ${r.position})\n`);
      });
    });

  const communities = program.command('communities').description('communities (super admin; the operator running the CLI acts as one)');
  communities
    .command('create')
    .argument('<name>', 'community name')
    .option('--description <text>', 'description', '')
    .option('--closed', 'not open: its public circles stay off the homepage')
    .action(async (name: string, opts: { description: string; closed?: boolean }) => {
      await withServices(async (s) => {
        const now = s.clock.now();
        const r = await createCommunity(
          s.bus,
          { name: name.trim(), description: opts.description.trim(), open: opts.closed !== true, created_by: operator() },
          { commandId: randomUUID(), actor: operator(), requestId: null, now },
        );
        await s.runner.waitFor(r.position);
        process.stdout.write(`community ${r.community_id} created with circle ${r.circle_id}\n`);
      });
    });
  communities
    .command('admin')
    .argument('<community_id>', 'community')
    .argument('<user_id>', 'user who becomes a community admin')
    .action(async (communityId: string, userId: string) => {
      await withServices(async (s) => {
        const now = s.clock.now();
        const r = await nameCommunityAdmin(s.bus, communityId, userId, operator(), { commandId: randomUUID(), actor: operator(), requestId: null, now });
        await s.runner.waitFor(r.position);
        process.stdout.write(`${userId} is a community admin of ${communityId}\n`);
      });
    });

  const rooms = program.command('rooms').description('room administration (super admin; the operator running the CLI acts as one)');

  rooms
    .command('merge')
    .argument('<custom>', 'custom room to fold in')
    .argument('<curated>', 'curated room that receives its posts and agents')
    .action(async (custom: string, curated: string) => {
      await withServices(async (s) => {
        const source = await getRoomDoc(s.store, custom);
        const target = await getRoomDoc(s.store, curated);
        if (!source) throw new Error(`no room '${custom}'`);
        if (source.curated) throw new Error(`'${custom}' is a curated room; only custom rooms can be merged`);
        if (!target || !target.curated) throw new Error(`'${curated}' is not a curated room`);
        const now = s.clock.now();
        const r = await mergeRoom(s.bus, custom, curated, operator(), { commandId: randomUUID(), actor: operator(), requestId: null, now });
        await s.runner.waitFor(r.position);
        process.stdout.write(`room ${custom} merged into ${curated} (event at position ${r.position})\n`);
      });
    });

  rooms
    .command('hide')
    .argument('<slug>', 'room to hide from every public read')
    .action(async (slug: string) => {
      await withServices(async (s) => {
        if (!(await getRoomDoc(s.store, slug))) throw new Error(`no room '${slug}'`);
        const now = s.clock.now();
        const r = await hideRoom(s.bus, slug, operator(), { commandId: randomUUID(), actor: operator(), requestId: null, now });
        if (r.events.length) await s.runner.waitFor(r.position);
        process.stdout.write(r.events.length ? `room ${slug} hidden (event at position ${r.position})\n` : `room ${slug} was already hidden\n`);
      });
    });

  return program;
}
