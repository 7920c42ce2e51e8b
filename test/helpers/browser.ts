import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

/** Debian's `chromium` package puts the browser here; playwright-core drives it (no browser download). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots and other browser-test artefacts (git-ignored). */
export const ARTIFACTS = join(process.cwd(), 'test-artifacts');

let installing: Promise<void> | null = null;

/**
 * Makes sure Debian's chromium is installed, once per test process: when CHROMIUM is missing it
 * runs `apt-get update && apt-get install -y --no-install-recommends chromium` (as root, or
 * through sudo when present), with a message first, since it takes a minute or two. Fails with a
 * message saying what to run when it cannot install.
 */
export function ensureChromium(): Promise<void> {
  if (existsSync(CHROMIUM)) return Promise.resolve();
  installing ??= (async () => {
    process.stderr.write(`\n[browser tests] ${CHROMIUM} is missing: installing Debian's chromium package (apt-get, once)...\n`);
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    const sudo = !root && existsSync('/usr/bin/sudo') ? ['sudo', '-n'] : [];
    if (!root && sudo.length === 0)
      throw new Error(`Browser tests need ${CHROMIUM}: run \`sudo apt-get install -y --no-install-recommends chromium\` (or set CHROMIUM_PATH)`);
    const run = (args: string[]) => {
      const [cmd, ...rest] = [...sudo, ...args];
      execFileSync(cmd, rest, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 15 * 60_000 });
    };
    try {
      run(['apt-get', 'update']);
      run(['apt-get', 'install', '-y', '--no-install-recommends', 'chromium']);
    } catch (err) {
      throw new Error(`Installing chromium with apt-get failed (${(err as Error).message}); install it by hand or set CHROMIUM_PATH`, { cause: err });
    }
    if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium, but ${CHROMIUM} is still missing; set CHROMIUM_PATH`);
    process.stderr.write('[browser tests] chromium installed.\n');
  })();
  return installing;
}

/** A headless Chromium (installed first if needed). Close it in `after`. */
export async function launchBrowser(): Promise<Browser> {
  await ensureChromium();
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container has no user namespace for the sandbox; /dev/shm may be tiny.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** Saves a full-page screenshot as test-artifacts/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name.replace(/[^a-z0-9-]+/gi, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
