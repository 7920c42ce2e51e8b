import { MemoryReadStore } from './memory.ts';
import type { ReadStore } from './port.ts';
import { SqliteReadStore } from './sqlite.ts';

/**
 * MongoDB when a URL is configured, otherwise the embedded store: SQLite in `sqlitePath` (the
 * default), or in memory when `embedded` is 'memory' or no path is given.
 */
export async function openReadStore(config: { mongodbUrl?: string; dbName?: string; embedded?: 'sqlite' | 'memory'; sqlitePath?: string }): Promise<ReadStore> {
  if (config.mongodbUrl) {
    // Loaded only when used: the embedded mode does not pay for the driver.
    const { MongoReadStore } = await import('./mongodb.ts');
    return MongoReadStore.connect(config.mongodbUrl, config.dbName);
  }
  if (config.embedded !== 'memory' && config.sqlitePath !== undefined) return new SqliteReadStore(config.sqlitePath, { checkpointIntervalMs: 50 });
  return new MemoryReadStore();
}
