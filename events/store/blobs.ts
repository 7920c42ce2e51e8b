import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The blob-store port (uploaded images). The embedded default is a local folder under DATA_DIR;
 * an S3-compatible adapter can implement the same two calls.
 */
export interface BlobStore {
  readonly name: string;
  /** Stores the bytes durably under `key` (a URL-safe identifier); replacing is allowed. */
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | null>;
  /** Removes the bytes under `key` (nothing when there are none). */
  delete(key: string): Promise<void>;
}

const SAFE_KEY = /^[a-z0-9_]{1,64}$/;

export class LocalBlobStore implements BlobStore {
  readonly name = 'local';
  private ready: Promise<unknown> | null = null;
  /** The folder is created on the first upload, so an unused store leaves no trace in DATA_DIR. */
  constructor(private readonly dir: string) {}

  private path(key: string): string {
    if (!SAFE_KEY.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return join(this.dir, key);
  }

  async put(key: string, data: Buffer): Promise<void> {
    const target = this.path(key);
    this.ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    await this.ready;
    const tmp = `${target}.${process.pid}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, target);
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}
