import { MemoryReadStore } from './memory.ts';
import type { ReadStore } from './port.ts';

/** MongoDB when a URL is configured, otherwise the embedded in-memory store. */
export async function openReadStore(config: { mongodbUrl?: string; dbName?: string }): Promise<ReadStore> {
  if (config.mongodbUrl) {
    // Loaded only when used: the embedded mode does not pay for the driver.
    const { MongoReadStore } = await import('./mongodb.ts');
    return MongoReadStore.connect(config.mongodbUrl, config.dbName);
  }
  return new MemoryReadStore();
}
