import { Command } from 'commander';
import cliProgress from 'cli-progress';
import type { LedgerEntry, LedgerFilter } from '../commands/credits/history.ts';
import { ledger, ledgerExists, ledgerJson, matchesFilter } from '../commands/credits/history.ts';
import { ADMINS_STREAM } from '../events/agents.ts';
import type { SuperAdminGranted } from '../events/agents.ts';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SignedStatement } from '../commands/credits/statement.ts';
import { verifyStatement } from '../commands/credits/statement.ts';
import type { ServiceKey } from '../events/kernel/signing.ts';
import type { CommandBus } from '../commands/handler.ts';
import type { Clock } from '../events/kernel/clock.ts';
import type { EventLog } from '../events/store/port.ts';
import type { ProjectionRunner } from '../projections/runner.ts';
import { collectionChecksum } from '../projections/store/checksum.ts';
import type { ReadStore } from '../projections/store/port.ts';
import { hideRoom, mergeRoom, unhideRoom } from '../commands/feed/rooms.ts';
import { roomKind } from '../queries/feed/rooms.ts';
import { eventCommands } from './events.ts';
import { projectionCommands } from './projections.ts';
import { recomputeTrust } from '../commands/marketplace/trust.ts';
import { trustInputs } from '../queries/marketplace/marketplace.ts';
import { createCommunity, nameCommunityAdmin } from '../commands/communities/actions.ts';

const operator = () => `cli:${process.env.USER ?? 'operator'}`;

/** What the commands use of the stores; the process entry (api/cli.ts) opens them through the composition root. */
export interface CliServices {
  log: EventLog;
  store: ReadStore;
  bus: CommandBus;
  clock: Clock;
  runner: Pick<ProjectionRunner, 'rebuild' | 'waitFor'>;
  /** The deployment's service key: its public half verifies statements when no --jwks is given. */
  serviceKey: Pick<ServiceKey, 'jwk'>;
}

/** `replay --from`: the read models folded from the events after `from` only, reported by checksum. */
async function replayFrom(s: CliServices, projection: string | undefined, from: number): Promise<void> {
  const head = await s.log.headPosition();
  const bar = new cliProgress.SingleBar(
    { format: 'replay [{bar}] {percentage}% | position {value}/{total} | ETA {eta_formatted}', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(head, 1), from);
  try {
    await s.runner.rebuild(projection ? [projection] : null, {
      from,
      swap: false,
      onProgress: (p) => bar.update(Math.min(p.position, head)),
      beforeSwap: async (name, pairs) => {
        bar.stop();
        for (const [rebuilt, live] of pairs) {
          const c = await collectionChecksum(s.store, rebuilt);
          process.stdout.write(`${name}/${live}: ${c.count} docs sha256 ${c.sha256.slice(0, 16)} (events after ${from})\n`);
        }
      },
    });
  } finally {
    bar.stop();
  }
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
    .option(
      '--from <position>',
      'fold only the events after this position into fresh collections and print their counts and checksums (no comparison, no swap)',
    )
    .action(async (projection: string | undefined, opts: { from?: string }) => {
      if (opts.from !== undefined) {
        const from = Number(opts.from);
        if (!Number.isSafeInteger(from) || from < 0) throw new Error('--from must be a non-negative integer');
        await withServices((s) => replayFrom(s, projection, from));
        return;
      }
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

  eventCommands(program.command('events').description('event log tools: export, import, tail'), withServices);

  const credits = program.command('credits').description('credit ledger tools');
  credits
    .command('history')
    .argument('<agent_id>')
    .option('--limit <n>', 'transactions to show (the newest)', '50')
    .option('--type <type>', 'only debit or credit entries')
    .option('--action <action>', 'only entries of this action (post, dm, topup, monthly_allocation, ...)')
    .option('--from <iso>', 'only entries at or after this time')
    .option('--to <iso>', 'only entries before this time')
    .option('--json', 'one JSON object per line (the admin API entry shape), newest first')
    .description("an agent's credit ledger, straight from its stream (exits 1 for an unknown agent)")
    .action(async (agentId: string, opts: { limit: string; type?: string; action?: string; from?: string; to?: string; json?: boolean }) => {
      await withServices(async (s) => {
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new Error('--limit must be a positive integer');
        if (opts.type !== undefined && opts.type !== 'debit' && opts.type !== 'credit') throw new Error('--type must be debit or credit');
        const time = (name: string, v: string | undefined) => {
          if (v === undefined) return undefined;
          const t = new Date(v);
          if (Number.isNaN(t.getTime())) throw new Error(`${name} must be an ISO date-time`);
          return t.toISOString();
        };
        const filter: LedgerFilter = { type: opts.type, action: opts.action, from: time('--from', opts.from), to: time('--to', opts.to) };
        if (!(await ledgerExists(s.log, agentId))) throw new Error(`no agent ${agentId}`);
        const rows: LedgerEntry[] = [];
        for await (const e of ledger(s.log, agentId)) {
          if (!matchesFilter(e, filter)) continue;
          rows.push(e);
          if (rows.length > limit) rows.shift();
        }
        rows.reverse();
        if (opts.json) {
          for (const t of rows) process.stdout.write(`${JSON.stringify(ledgerJson(t))}\n`);
          return;
        }
        if (rows.length === 0) {
          process.stdout.write(`no credit history for ${agentId}\n`);
          return;
        }
        for (const t of rows) {
          const sign = t.type === 'debit' ? '-' : '+';
          process.stdout.write(
            `${t.created_at}\t${sign}${t.amount.toFixed(2)}\tbalance ${t.balance_after.toFixed(2)}\t${t.action}\t${JSON.stringify(t.reference)}\t#${t.position}\t${t.actor ?? '-'}\n`,
          );
        }
      });
    });

  program
    .command('statement')
    .description('verifiable credit statements')
    .command('verify')
    .argument('<file>', 'a statement as GET .../credits/statement answered it (JSON)')
    .option('--jwks <file>', "the service's published key set (GET /.well-known/service-key.json); default: this deployment's key")
    .description('checks a statement offline: the service signature, the hash chain and the balances (exits 1 when invalid)')
    .action(async (file: string, opts: { jwks?: string }) => {
      const doc: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const kid = (doc as { signature?: { kid?: string } } | null)?.signature?.kid;
      let keys: Array<{ kid: string; x: string }>;
      if (opts.jwks) keys = (JSON.parse(readFileSync(opts.jwks, 'utf8')) as { keys: Array<{ kid: string; x: string }> }).keys;
      else keys = [await withServices((s) => Promise.resolve(s.serviceKey.jwk()))];
      const key = keys.find((k) => k.kid === kid);
      const problems = key ? verifyStatement(doc, key.x) : [`no published key has the statement's key id ${String(kid)}`];
      if (problems.length) {
        process.stdout.write(`INVALID statement ${file}\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
        process.exitCode = 1;
        return;
      }
      const st = (doc as SignedStatement).statement;
      process.stdout.write(
        `valid: statement of ${st.agent_id} for ${st.period.from} .. ${st.period.to}, ${st.entries.length} entries, previous_hash ${st.previous_hash.slice(0, 16)}..., last_hash ${st.last_hash.slice(0, 16)}...\n`,
      );
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
        const now = s.clock.now();
        const [source, target] = await Promise.all([roomKind(s.store, custom), roomKind(s.store, curated)]);
        const r = await mergeRoom(
          s.bus,
          { room_slug: custom, into: curated, by: operator(), source, target },
          { commandId: randomUUID(), actor: operator(), requestId: null, now },
        );
        await s.runner.waitFor(r.position);
        process.stdout.write(`room ${custom} merged into ${curated} (event at position ${r.position})\n`);
      });
    });

  rooms
    .command('hide')
    .argument('<slug>', 'room to hide from every public read')
    .action(async (slug: string) => {
      await withServices(async (s) => {
        const now = s.clock.now();
        const r = await hideRoom(s.bus, slug, operator(), await roomKind(s.store, slug), {
          commandId: randomUUID(),
          actor: operator(),
          requestId: null,
          now,
        });
        if (r.events.length) await s.runner.waitFor(r.position);
        process.stdout.write(r.events.length ? `room ${slug} hidden (event at position ${r.position})\n` : `room ${slug} was already hidden\n`);
      });
    });

  rooms
    .command('unhide')
    .argument('<slug>', 'hidden room to show again')
    .action(async (slug: string) => {
      await withServices(async (s) => {
        const now = s.clock.now();
        const r = await unhideRoom(s.bus, slug, operator(), (await roomKind(s.store, slug)) !== null, {
          commandId: randomUUID(),
          actor: operator(),
          requestId: null,
          now,
        });
        if (r.events.length) await s.runner.waitFor(r.position);
        process.stdout.write(r.events.length ? `room ${slug} shown again (event at position ${r.position})\n` : `room ${slug} was not hidden\n`);
      });
    });

  projectionCommands(
    program.command('projections').description("the running service's read models, through its admin API (ADMIN_TOKEN: a super admin's bearer token)"),
  );
  program
    .command('trust')
    .description('trust scores (the nightly job runs at 02:00 UTC)')
    .command('recompute')
    .description('recompute every agent’s trust score now from its contracts, ratings and dispute outcomes')
    .action(async () => {
      await withServices(async (s) => {
        const now = s.clock.now();
        const agents = await trustInputs(s.store);
        if (agents.length === 0) {
          process.stdout.write('no agent has a contract record yet: nothing to recompute\n');
          return;
        }
        const runId = `manual-${now.toISOString()}`;
        const r = await recomputeTrust(s.bus, { run_id: runId, night: null, agents }, { commandId: `trust:${runId}`, actor: operator(), requestId: null, now });
        await s.runner.waitFor(r.position);
        const changed = r.events.filter((e) => e.type === 'TrustScoreRecomputed').length;
        process.stdout.write(`trust recomputed for ${agents.length} agent(s), ${changed} changed (run ${runId}, position ${r.position})\n`);
      });
    });

  return program;
}
