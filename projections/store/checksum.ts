// A content hash of a read model, independent of the adapter and of field order, so that a
// rebuilt collection can be proven equal to the live one.
import { createHash } from 'node:crypto';
import type { ReadStore } from './port.ts';
import { isRecord } from './records.ts';

/** JSON with object keys sorted recursively (dates as ISO strings, undefined fields dropped). */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      if (!isRecord(value)) return 'null'; // (not null: answered above)
      const toJSON = value.toJSON;
      if (typeof toJSON === 'function') return canonicalJson(toJSON.call(value));
      const obj = value;
      const parts: string[] = [];
      for (const k of Object.keys(obj).sort()) {
        if (obj[k] === undefined) continue;
        parts.push(`${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
      }
      return `{${parts.join(',')}}`;
    }
    case 'undefined':
    case 'function':
    case 'symbol':
    default: // unreachable; TypeScript's return check does not see the cases above as exhaustive
      return 'null';
  }
}

/** Code-point order (the order of MongoDB's binary string comparison), not UTF-16 unit order. */
function compareIds(a: unknown, b: unknown): number {
  const x = String(a);
  const y = String(b);
  if (x === y) return 0;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n;) {
    // i < n, so both strings have a code point there.
    const cx = x.codePointAt(i) ?? 0;
    const cy = y.codePointAt(i) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
    i += cx > 0xffff ? 2 : 1;
  }
  return x.length < y.length ? -1 : 1;
}

/** Count and sha256 of a collection's documents, sorted by _id, each as canonical JSON. */
export async function collectionChecksum(store: ReadStore, name: string): Promise<{ count: number; sha256: string }> {
  const docs = await store.collection(name).find({});
  docs.sort((a, b) => compareIds(a._id, b._id));
  const hash = createHash('sha256');
  for (const doc of docs) hash.update(`${canonicalJson(doc)}\n`);
  return { count: docs.length, sha256: hash.digest('hex') };
}
