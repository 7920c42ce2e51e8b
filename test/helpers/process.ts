import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { request } from './service.ts';

const root = new URL('../..', import.meta.url).pathname;

/** Starts `npm start`'s entry point as a real child process and waits for /health to answer 200. */
export async function bootServerProcess(dataDir: string, port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`server exited early (${exited})`);
    try {
      // 503 `starting` while the read models catch up, connection refused before it listens.
      const r = await request(`http://127.0.0.1:${port}`, 'GET', '/health');
      if (r.status === 200) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('server did not start within 20 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const randomPort = () => 20_000 + Math.floor(Math.random() * 20_000);
export const projectRoot = root;
