import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** DATA_DIR and every folder in it: owner only. */
export const DATA_DIR_MODE = 0o700;
/** Every file in DATA_DIR (the event log with owner e-mails, secrets, snapshots, images, mail): owner read and write only. */
export const DATA_FILE_MODE = 0o600;

export interface Tightened {
  /** Paths (relative to DATA_DIR) whose mode was looser and was set to 0700 or 0600. */
  tightened: string[];
  /** Paths whose mode could not be changed (not ours): the start warns about them. */
  failed: string[];
}

/**
 * Creates DATA_DIR with mode 0700 and tightens what is already there: a folder (DATA_DIR itself
 * included) that grants anything to group or others becomes 0700, such a file 0600. Symbolic links
 * are left alone (their targets are not ours to change). Decision (docs/DECISIONS.md "Data
 * directory"): tighten and warn, rather than refuse to start, so an upgrade from a release that
 * created 0644 files fixes itself.
 */
export function secureDataDir(dir: string, logger?: Logger): Tightened {
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  const result: Tightened = { tightened: [], failed: [] };
  const visit = (path: string, rel: string) => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    const wanted = st.isDirectory() ? DATA_DIR_MODE : DATA_FILE_MODE;
    if ((st.mode & 0o077) !== 0) {
      try {
        chmodSync(path, wanted);
        result.tightened.push(rel);
      } catch {
        result.failed.push(rel);
      }
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name), rel === '.' ? name : `${rel}/${name}`);
  };
  visit(dir, '.');
  if (result.tightened.length)
    logger?.warn(
      { data_dir: dir, paths: result.tightened.slice(0, 20), count: result.tightened.length },
      'DATA_DIR entries readable by others were tightened to 0700/0600',
    );
  if (result.failed.length)
    logger?.warn(
      { data_dir: dir, paths: result.failed.slice(0, 20), count: result.failed.length },
      'DATA_DIR entries readable by others could not be tightened (not owned by this user)',
    );
  return result;
}

/**
 * Creates `path` empty with mode 0600 when it does not exist yet, so that SQLite opens a file that
 * only its owner can read (SQLite creates a database 0644 under the usual umask, and gives its
 * -wal and -shm files the database file's mode).
 */
export function ensurePrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', DATA_FILE_MODE));
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
  }
}
