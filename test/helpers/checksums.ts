import { collectionChecksum } from '../../projections/store/checksum.ts';
import type { ReadStore } from '../../projections/store/port.ts';

/** `count:sha256` of each named collection: two read models are equal when these are. */
export async function checksumsOf(store: ReadStore, names: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const c = await collectionChecksum(store, name);
    out[name] = `${c.count}:${c.sha256}`;
  }
  return out;
}
