// `projections status` and `projections rebuild <name>`: the running service's read models through
// its admin routes (the embedded read models live in the service's memory, so the CLI cannot
// rebuild them itself). The base URL comes from --url or SERVICE_URL, the super admin's bearer
// token from ADMIN_TOKEN.
import cliProgress from 'cli-progress';
import type { Command } from 'commander';

interface RebuildStatus {
  projection: string;
  state: 'running' | 'swapped' | 'failed';
  position: number;
  target: number;
  events: number;
  progress: number;
  eta_seconds: number | null;
  comparisons: Array<{ collection: string; rebuilt: { count: number; sha256: string }; live: { count: number; sha256: string }; equal: boolean }>;
  error: string | null;
}

function client(url: string | undefined) {
  const base = (url ?? process.env.SERVICE_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
  const token = process.env.ADMIN_TOKEN;
  if (!token) throw new Error("ADMIN_TOKEN must hold a super admin's bearer token (POST /api/auth/login)");
  return async (method: string, path: string): Promise<unknown> => {
    const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}` } });
    const body = (await r.json().catch(() => null)) as { detail?: string; code?: string } | null;
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${body?.code ?? ''} ${body?.detail ?? ''}`.trim());
    return body;
  };
}

export function projectionCommands(projections: Command, pollMs = 500): void {
  projections
    .command('status')
    .option('--url <base>', 'the service (default SERVICE_URL or http://127.0.0.1:3000)')
    .description('each projection: checkpoint, head, lag in events and seconds, last rebuild')
    .action(async (opts: { url?: string }) => {
      const call = client(opts.url);
      const list = (await call('GET', '/api/admin/projections')) as {
        head: number;
        items: Array<{ name: string; checkpoint: number; lag_events: number; lag_seconds: number; rebuild: RebuildStatus | null }>;
      };
      process.stdout.write(`head ${list.head}\n`);
      for (const p of list.items) {
        process.stdout.write(
          `${p.name}\tcheckpoint ${p.checkpoint}\tlag ${p.lag_events} events ${p.lag_seconds.toFixed(1)} s${p.rebuild ? `\tlast rebuild ${p.rebuild.state}` : ''}\n`,
        );
      }
    });

  projections
    .command('rebuild')
    .argument('<name>', 'the projection to rebuild')
    .option('--url <base>', 'the service (default SERVICE_URL or http://127.0.0.1:3000)')
    .description('rebuild one projection of the running service into a shadow collection, compare checksums and swap it in; a progress bar with ETA')
    .action(async (name: string, opts: { url?: string }) => {
      const call = client(opts.url);
      let status = (await call('POST', `/api/admin/projections/${encodeURIComponent(name)}/rebuild`)) as RebuildStatus;
      const bar = new cliProgress.SingleBar(
        { format: `${name} [{bar}] {percentage}% | position {value}/{total} | {events} events | ETA {eta}s`, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(Math.max(status.target, 1), status.position, { events: status.events, eta: '?' });
      try {
        while (status.state === 'running') {
          await new Promise((resolve) => setTimeout(resolve, pollMs));
          status = (await call('GET', `/api/admin/projections/${encodeURIComponent(name)}/rebuild`)) as RebuildStatus;
          bar.setTotal(Math.max(status.target, 1));
          bar.update(status.position, { events: status.events, eta: status.eta_seconds ?? '?' });
        }
      } finally {
        bar.stop();
      }
      if (status.state === 'failed') throw new Error(`rebuild of ${name} failed: ${status.error ?? 'unknown error'}`);
      for (const c of status.comparisons) {
        process.stdout.write(
          `${c.equal ? 'OK      ' : 'MISMATCH'} ${name}/${c.collection}: rebuilt ${c.rebuilt.count} docs sha256 ${c.rebuilt.sha256.slice(0, 16)} | live ${c.live.count} docs sha256 ${c.live.sha256.slice(0, 16)}\n`,
        );
      }
      const differ = status.comparisons.filter((c) => !c.equal).length;
      process.stdout.write(
        `rebuilt ${name} from ${status.events} events up to position ${status.position} and swapped it in; ${differ === 0 ? 'it equals the live read model' : `${differ} collection(s) differed from the live ones`}\n`,
      );
    });
}
