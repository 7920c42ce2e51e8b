// Type guards for the read store's untyped values (documents, filters, update specs, wire and
// snapshot data): a `typeof` check that lets the code read a value's fields without asserting.
import type { Doc, IndexSpec, SortSpec } from './port.ts';

/** A value read by its string-keyed fields: a document, a filter, an operator's spec. */
export type Obj = Record<string, unknown>;

/** Any non-null object (an array too), read by its own string-keyed fields. */
export function isRecord(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null;
}

/**
 * A value BSON order treats as an object of its own enumerable fields: a non-null object, or a
 * function (compareValues and the index keys rank both as objects).
 */
export function hasFields(v: unknown): v is Obj {
  return (typeof v === 'object' && v !== null) || typeof v === 'function';
}

/** The fields of a value BSON order ranks as an object: none for a symbol. */
export const NO_FIELDS: Readonly<Obj> = Object.freeze({});

/** The `code` of a thrown value (a Node.js system error's, a driver's), if it has one. */
export function errorCode(err: unknown): unknown {
  return isRecord(err) ? err.code : undefined;
}

/** A document as the store keeps it: a record with a string _id. */
export function isDoc(v: unknown): v is Doc {
  return isRecord(v) && typeof v._id === 'string';
}

/** A sort (or index key) spec: each field 1 or -1. */
export function isSortSpec(v: unknown): v is SortSpec {
  if (!isRecord(v)) return false;
  for (const k in v) if (v[k] !== 1 && v[k] !== -1) return false;
  return true;
}

/** An index spec: a name, its keys, and `unique` when set. */
export function isIndexSpec(v: unknown): v is IndexSpec {
  return isRecord(v) && typeof v.name === 'string' && isSortSpec(v.keys) && (v.unique === undefined || typeof v.unique === 'boolean');
}
