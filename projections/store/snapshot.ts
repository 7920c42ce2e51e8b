// Read-model snapshots of the embedded store: the in-memory collections written to one file in
// DATA_DIR when the service stops, and read back when it starts, so that a start replays only the
// events appended since instead of the whole log. A snapshot is a cache of what the projections
// made from the log, never a source of truth: it is used only when it is intact (SHA-256 over the
// file), was made by the same projection code (a fingerprint of that code), and ends on an event
// that the log still holds at the same position. Anything else, and the start replays from 0.
//
// File: MAGIC, then frames (u32 little-endian length, then a v8.serialize payload), then the
// SHA-256 of every byte before it. Frame 1 is the header; then per collection one frame with its
// name, index specs, document count and kept index entries (name, multikey flags, count), then its
// documents in frames of up to CHUNK, then each kept index's entries, up to RAW_BYTES of keys at a
// time, as a frame of their keys' lengths and _ids followed by a raw frame (latin1 bytes) of the keys.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, fsyncSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { isStackOverflow, stringifyIteratively } from '../../events/kernel/json.ts';
import type { StoredCollection, StoredIndex } from './memory.ts';
import type { Doc, IndexSpec } from './port.ts';
import { errorCode, isDoc, isIndexSpec, isRecord } from './records.ts';

const MAGIC = Buffer.from('agent-network read models v1\n');
const FORMAT = 1;
const CHUNK = 5000;
/**
 * Below Node's threshold for external strings (about 1 MB): a raw frame read back is then an
 * ordinary heap string, not external memory, which makes V8 collect the whole heap as it grows.
 */
const RAW_BYTES = 900_000;
const HASH_BYTES = 32;
const WRITE_BUFFER = 4 << 20;
/**
 * A document too deep for v8.serialize (its recursion overflows the stack at a few thousand
 * levels) is written as `{[DEEP_DOC]: its JSON text}` (made without recursion) and parsed back on
 * read (V8's JSON.parse does not recurse), so that no stored event can stop a snapshot.
 */
const DEEP_DOC = '\u0000deep-json';

/** A frame's payload for a chunk of documents, wrapping each document too deep for v8.serialize. */
function serializeDocs(docs: Doc[]): Buffer {
  try {
    return serialize(docs);
  } catch (err) {
    if (!isStackOverflow(err)) throw err;
    return serialize(
      docs.map((doc) => {
        try {
          serialize(doc);
          return doc;
        } catch (e) {
          if (!isStackOverflow(e)) throw e;
          return { [DEEP_DOC]: stringifyIteratively(doc) };
        }
      }),
    );
  }
}

/** A document read back from a frame (unwrapping one written as JSON); null when it is not one. */
function readDoc(value: unknown): Doc | null {
  if (!isRecord(value)) return null;
  const text = value[DEEP_DOC];
  const doc: unknown = typeof text === 'string' ? JSON.parse(text) : value;
  return isDoc(doc) ? doc : null;
}

/** What a collection's frame says of it (see writeSnapshot). */
interface CollectionHead {
  name: string;
  indexes: IndexSpec[];
  count: number;
  entries: EntriesHead[];
}

interface EntriesHead {
  name: string;
  multikeyFields: boolean[];
  count: number;
  plainIds: boolean;
}

function isEntriesHead(v: unknown): v is EntriesHead {
  return (
    isRecord(v) &&
    typeof v.name === 'string' &&
    Array.isArray(v.multikeyFields) &&
    v.multikeyFields.every((b) => typeof b === 'boolean') &&
    Number.isSafeInteger(v.count) &&
    typeof v.plainIds === 'boolean'
  );
}

function readCollectionHead(v: unknown): CollectionHead {
  if (
    !isRecord(v) ||
    typeof v.name !== 'string' ||
    !Array.isArray(v.indexes) ||
    !v.indexes.every(isIndexSpec) ||
    typeof v.count !== 'number' ||
    !Number.isSafeInteger(v.count) ||
    !Array.isArray(v.entries) ||
    !v.entries.every(isEntriesHead)
  ) {
    throw new SnapshotRejected('a collection header is malformed');
  }
  return { name: v.name, indexes: v.indexes, count: v.count, entries: v.entries };
}

function readHeader(v: unknown, fingerprint: string): SnapshotHeader {
  const format = isRecord(v) ? v.format : undefined;
  if (!isRecord(v) || format !== FORMAT) throw new SnapshotRejected(`format ${String(format)} is not ${FORMAT}`);
  if (v.fingerprint !== fingerprint) throw new SnapshotRejected('it was made by other projection code');
  const { position, eventId, createdAt, collections, documents } = v;
  if (
    typeof position !== 'number' ||
    !Number.isSafeInteger(position) ||
    position <= 0 ||
    typeof eventId !== 'string' ||
    typeof createdAt !== 'string' ||
    typeof collections !== 'number' ||
    typeof documents !== 'number'
  )
    throw new SnapshotRejected('the header is malformed');
  return { format, fingerprint, position, eventId, createdAt, collections, documents };
}

export type SnapshotCollection = StoredCollection;

export interface SnapshotHeader {
  format: number;
  /** projectionCodeFingerprint() of the code that made the read models. */
  fingerprint: string;
  /** The log position of the last event applied to every collection. */
  position: number;
  /** The id of the event at that position: a log replaced by another is noticed. */
  eventId: string;
  createdAt: string;
  collections: number;
  documents: number;
}

export interface Snapshot {
  header: SnapshotHeader;
  collections: SnapshotCollection[];
}

/** Why a snapshot file was not used (the start then replays the whole log). */
export class SnapshotRejected extends Error {}

const root = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|js|mjs|json)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/**
 * A hash of everything that decides what the projections make of the log: their code and the
 * events' (projections/, events/), the locked dependency versions and the Node.js version. Any
 * change to them makes older snapshots unusable, so a changed projection is always replayed.
 */
export function projectionCodeFingerprint(): string {
  const hash = createHash('sha256');
  hash.update(`node ${process.version}\0format ${FORMAT}\0`);
  const files = [...sourceFiles(join(root, 'projections')), ...sourceFiles(join(root, 'events')), join(root, 'package-lock.json')];
  for (const file of files.map((f) => relative(root, f)).sort()) {
    hash.update(`${file}\0`);
    if (existsSync(join(root, file))) hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/**
 * Entries [from, to) of an index as two frames: a v8 frame with the keys' lengths and the _ids
 * (unless they are plain, then read back from the keys), and a raw frame of the keys themselves
 * (one-byte strings, see updates.ts keyComponent) joined, as latin1 bytes. Read back, the raw frame
 * is one string and each key a slice of it: far faster than an array of strings, and it goes from
 * the file to the heap without a Buffer or an external string per frame (external memory makes V8
 * collect the whole heap again and again as it grows).
 */
function packEntries(e: StoredIndex, from: number, to: number): { meta: [number[], string[] | null]; joined: string } {
  const keys = e.keys.slice(from, to);
  const joined = keys.join('');
  if (/[\u0100-\uffff]/.test(joined)) throw new Error(`index ${e.name}: a key is not a one-byte string`);
  return { meta: [keys.map((k) => k.length), e.ids === null ? null : e.ids.slice(from, to)], joined };
}

function unpackEntries(meta: unknown, joined: string, into: StoredIndex): void {
  const [lengths, ids] = Array.isArray(meta) ? meta : [];
  if (
    !Array.isArray(lengths) ||
    lengths.length === 0 ||
    (into.ids === null) !== (ids === null) ||
    (ids !== null && (!Array.isArray(ids) || ids.length !== lengths.length))
  ) {
    throw new SnapshotRejected('an index frame is malformed');
  }
  let at = 0;
  for (const n of lengths) {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) throw new SnapshotRejected('an index frame is malformed');
    into.keys.push(joined.slice(at, at + n));
    at += n;
  }
  if (at !== joined.length) throw new SnapshotRejected('an index frame is malformed');
  if (into.ids !== null && Array.isArray(ids)) {
    for (const id of ids) {
      if (typeof id !== 'string') throw new SnapshotRejected('an index frame is malformed');
      into.ids.push(id);
    }
  }
}

/**
 * Writes the collections to `path` atomically: a temporary file beside it (mode 0600: read models
 * hold key hashes), flushed to disk, then renamed over the old snapshot. Returns its size in bytes.
 */
export function writeSnapshot(path: string, header: Omit<SnapshotHeader, 'format' | 'collections' | 'documents'>, collections: SnapshotCollection[]): number {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  const hash = createHash('sha256');
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let size = 0;
  const flush = () => {
    if (pendingBytes === 0) return;
    const buf = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    pending = [];
    pendingBytes = 0;
  };
  const put = (buf: Buffer) => {
    hash.update(buf);
    pending.push(buf);
    pendingBytes += buf.length;
    size += buf.length;
    if (pendingBytes >= WRITE_BUFFER) flush();
  };
  const length = (n: number) => {
    const len = Buffer.allocUnsafe(4);
    len.writeUInt32LE(n);
    put(len);
  };
  const framed = (payload: Buffer) => {
    length(payload.length);
    put(payload);
  };
  const frame = (value: unknown) => framed(serialize(value));
  // A raw frame goes from the string to the file (no Buffer of its own).
  const rawFrame = (latin1: string) => {
    length(latin1.length);
    flush();
    hash.update(latin1, 'latin1');
    for (let off = 0; off < latin1.length;) off += writeSync(fd, off === 0 ? latin1 : latin1.slice(off), null, 'latin1');
    size += latin1.length;
  };
  try {
    put(MAGIC);
    const documents = collections.reduce((n, c) => n + c.docs.length, 0);
    frame({ ...header, format: FORMAT, collections: collections.length, documents } satisfies SnapshotHeader);
    for (const c of collections) {
      const entries = c.entries.map((e) => ({ name: e.name, multikeyFields: e.multikeyFields, count: e.keys.length, plainIds: e.ids === null }));
      frame({ name: c.name, indexes: c.indexes, count: c.docs.length, entries });
      for (let i = 0; i < c.docs.length; i += CHUNK) framed(serializeDocs(c.docs.slice(i, i + CHUNK)));
      for (const e of c.entries) {
        for (let i = 0; i < e.keys.length;) {
          let to = i + 1;
          for (let bytes = e.keys[i].length; to < e.keys.length && bytes + e.keys[to].length <= RAW_BYTES; to++) bytes += e.keys[to].length;
          const { meta, joined } = packEntries(e, i, to);
          frame(meta);
          rawFrame(joined);
          i = to;
        }
      }
    }
    const digest = hash.digest();
    pending.push(digest);
    pendingBytes += digest.length;
    size += digest.length;
    flush();
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  // The rename itself is durable once the directory is flushed.
  const dirFd = openSync(dirname(path), 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
  return size;
}

/** Removes the temporary files of snapshot writes that never finished (their process is gone). */
export function removeStaleTemporaries(path: string): void {
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length, -'.tmp'.length));
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) continue;
    rmSync(join(dirname(path), name), { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === 'EPERM';
  }
}

/**
 * The size of a snapshot file and the position its header names, read without checking the rest
 * (what a start's memory estimate needs before it loads anything). Null when there is no file or
 * it does not begin like a snapshot of this format.
 */
export function peekSnapshot(path: string): { bytes: number; position: number } | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const bytes = fstatSync(fd).size;
    const head = Buffer.alloc(MAGIC.length + 4);
    if (readSync(fd, head, 0, head.length, 0) !== head.length || !head.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const len = head.readUInt32LE(MAGIC.length);
    if (len > 1 << 20 || MAGIC.length + 4 + len > bytes) return null;
    const body = Buffer.alloc(len);
    if (readSync(fd, body, 0, len, head.length) !== len) return null;
    const header: unknown = deserialize(body);
    const position = isRecord(header) ? header.position : undefined;
    return isRecord(header) && header.format === FORMAT && typeof position === 'number' && Number.isSafeInteger(position) && position > 0
      ? { bytes, position }
      : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a snapshot file. Null when there is none; SnapshotRejected when it is damaged, of another
 * format, or made by other projection code (`fingerprint`). Nothing of a damaged file is returned:
 * the digest is checked before the collections are handed over.
 */
export function readSnapshot(path: string, fingerprint: string): Snapshot | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return null;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const end = size - HASH_BYTES;
    if (end < MAGIC.length) throw new SnapshotRejected('the file is truncated');
    const hash = createHash('sha256');
    let offset = 0;
    // One buffer for every read, grown as frames need: each frame is copied into the heap
    // (deserialized, or decoded as a string) before the next read reuses it.
    let scratch = Buffer.allocUnsafe(1 << 20);
    const read = (n: number): Buffer => {
      if (n > end - offset) throw new SnapshotRejected('the file is truncated');
      if (n > scratch.length) scratch = Buffer.allocUnsafe(Math.max(n, scratch.length * 2));
      const buf = scratch.subarray(0, n);
      for (let got = 0; got < n;) {
        const r = readSync(fd, buf, got, n - got, offset + got);
        if (r === 0) throw new SnapshotRejected('the file is truncated');
        got += r;
      }
      offset += n;
      hash.update(buf);
      return buf;
    };
    const frame = (): unknown => {
      const len = read(4).readUInt32LE(0);
      try {
        return deserialize(read(len));
      } catch (err) {
        if (err instanceof SnapshotRejected) throw err;
        throw new SnapshotRejected('a frame does not deserialize');
      }
    };
    const rawFrame = (): string => read(read(4).readUInt32LE(0)).toString('latin1');
    if (!read(MAGIC.length).equals(MAGIC)) throw new SnapshotRejected('not a read-model snapshot of this format');
    const header = readHeader(frame(), fingerprint);
    const collections: SnapshotCollection[] = [];
    for (let c = 0; c < header.collections; c++) {
      const head = readCollectionHead(frame());
      const docs: Doc[] = [];
      while (docs.length < head.count) {
        const chunk = frame();
        if (!Array.isArray(chunk) || chunk.length === 0) throw new SnapshotRejected('a document frame is malformed');
        for (const item of chunk) {
          const doc = readDoc(item);
          if (doc === null) throw new SnapshotRejected('a document frame is malformed');
          docs.push(doc);
        }
      }
      if (docs.length !== head.count) throw new SnapshotRejected(`collection ${head.name} holds more documents than its header says`);
      const entries: StoredIndex[] = [];
      for (const e of head.entries) {
        const stored: StoredIndex = { name: e.name, multikeyFields: e.multikeyFields, keys: [], ids: e.plainIds ? null : [] };
        while (stored.keys.length < e.count) {
          const meta = frame();
          unpackEntries(meta, rawFrame(), stored);
        }
        if (stored.keys.length !== e.count) throw new SnapshotRejected(`index ${e.name} of ${head.name} holds more entries than its header says`);
        entries.push(stored);
      }
      collections.push({ name: head.name, indexes: head.indexes, docs, entries });
    }
    if (offset !== end) throw new SnapshotRejected('bytes follow the last collection');
    const digest = Buffer.allocUnsafe(HASH_BYTES);
    readSync(fd, digest, 0, HASH_BYTES, end);
    if (!hash.digest().equals(digest)) throw new SnapshotRejected('its SHA-256 does not match (the file is damaged)');
    return { header, collections };
  } finally {
    closeSync(fd);
  }
}
