import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';

export const projectRoot = new URL('../..', import.meta.url).pathname;

/** One JSON line of the child's pino log. */
export type LogLine = Record<string, unknown>;

/** `npm start`'s entry point running as a real child process, logging at info on its stdout. */
export interface ServerProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** http://127.0.0.1:<port>, the port the child listens on. */
  readonly url: string;
  /** Its log lines so far. */
  readonly lines: LogLine[];
  line(msg: string): LogLine | undefined;
  /** Resolves with the first line with this `msg`; rejects if the child exits first. */
  waitForLine(msg: string): Promise<LogLine>;
  /** Resolves with the exit code once the child has exited and its output is read. */
  readonly exited: Promise<number | null>;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<number | null>;
}

/** Children still running: killed when the test process exits, so a failed test leaves none behind. */
const live = new Set<ChildProcessByStdio<null, Readable, Readable>>();
/** Children started in their own process group (`npm start`): the whole group is killed. */
const groups = new Set<number>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
});

/** How the server is started: its entry point under node (as `npm start` runs it), or `npm start` itself as the leader of its own process group. */
export type Launcher = 'node' | 'npm start';

class ServerExited extends Error {
  constructor(
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`server exited (${code}) before it was ready${stderr ? `: ${stderr.trim().split('\n')[0]}` : ''}`);
  }
}

function launch(dataDir: string, port: number, env: Record<string, string>, launcher: Launcher = 'node'): ServerProcess {
  const [command, args] = launcher === 'node' ? [process.execPath, ['--import', 'tsx', 'api/server.ts']] : ['npm', ['start', '--silent']];
  const child = spawn(command, args, {
    cwd: projectRoot,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', RATE_LIMIT_SCALE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // npm start leads a process group of its own, as a terminal's foreground job or a systemd unit does.
    detached: launcher === 'npm start',
  });
  live.add(child);
  if (launcher === 'npm start' && child.pid !== undefined) groups.add(child.pid);
  const lines: LogLine[] = [];
  const watchers = new Set<() => void>();
  let closed = false;
  let stderr = '';
  let rest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    for (const p of parts) if (p.startsWith('{')) lines.push(JSON.parse(p) as LogLine);
    for (const watch of [...watchers]) watch();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    process.stderr.write(chunk);
  });
  // 'close', not 'exit': by then every line the child wrote has been read.
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      closed = true;
      live.delete(child);
      if (child.pid !== undefined) groups.delete(child.pid);
      resolve(code);
      for (const watch of [...watchers]) watch();
    }),
  );
  const line = (msg: string) => lines.find((l) => l.msg === msg);
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    lines,
    line,
    exited,
    waitForLine: (msg) =>
      new Promise<LogLine>((resolve, reject) => {
        const watch = () => {
          const found = line(msg);
          if (found === undefined && !closed) return;
          watchers.delete(watch);
          if (found !== undefined) resolve(found);
          else reject(new ServerExited(child.exitCode, stderr));
        };
        watchers.add(watch);
        watch();
      }),
    stop(signal) {
      child.kill(signal);
      return exited;
    },
  };
}

/**
 * Starts the server on a port the system picks (PORT=0) and resolves once it is ready: when it
 * logs 'service listening' with the URL it listens on (after the catch-up, as /health turns 200).
 */
export async function bootServerProcess(dataDir: string, env: Record<string, string> = {}, launcher: Launcher = 'node'): Promise<ServerProcess> {
  const server = launch(dataDir, 0, env, launcher);
  const listening = await server.waitForLine('service listening');
  if (typeof listening.url !== 'string') throw new Error(`'service listening' without a url: ${JSON.stringify(listening)}`);
  return { ...server, url: listening.url };
}

/** A port free at this moment: the system picks it for a listener that is closed at once. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts the server and resolves when its read models begin catching up with the log: it already
 * listens (answering 503 until they have), on a port known before it is ready. The port is free
 * when picked; a start that finds it taken meanwhile (EADDRINUSE) is retried on another one, and
 * the line is logged only after the listen succeeded, so the port is this child's.
 */
export async function startServerProcess(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const server = launch(dataDir, await freePort(), env);
    try {
      await server.waitForLine('read models catching up');
      return server;
    } catch (err) {
      if (!(err instanceof ServerExited && err.stderr.includes('EADDRINUSE') && attempt < 5)) throw err;
    }
  }
}
