// As-of reads with bounded cost. Every as-of read is about one subject (an agent or a contract),
// and the documents it reads belong to that subject (SUBJECT_OF). This index keeps, in its own
// SQLite file, for every subject:
//   - its mentions: the positions of the events of the as-of projections whose data names it in an
//     id field (`agent_id`, `target_agent_id`, `contract_id`, ...): every event that changes one of
//     its documents names it there;
//   - a version every `every` mentions: its documents as they were at that position, folded from
//     the previous version and the mentions since.
// A read at position P then starts from the subject's last version at or before P and folds only
// the subject's mentions after it (fewer than `every`), whatever the log's length. The file is a
// cache derived from the log: deleted, or made by other projection code, it is rebuilt.
import Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { EventLog, RecordedEvent, Subscription } from '../events/store/port.ts';
import { allProjections } from './index.ts';
import { MemoryReadStore } from './store/memory.ts';
import type { Doc } from './store/port.ts';
import { isDoc, isRecord } from './store/records.ts';
import { projectionCodeFingerprint } from './store/snapshot.ts';
import type { Projection, ProjectionContext } from './types.ts';

/** The projections an as-of read may ask for, and the subject each of their documents belongs to. */
export const SUBJECT_OF: Record<string, (doc: Doc) => unknown> = {
  agents: (d) => d._id,
  agent_presence: (d) => d._id,
  trust_stamps: (d) => d.target_agent_id,
  bonds: (d) => d.agent_id,
  contracts: (d) => d._id,
};
export const AS_OF_PROJECTIONS: Projection[] = allProjections.filter((p) => p.collections.every((c) => c.name in SUBJECT_OF));
const AS_OF_TYPES = new Set(AS_OF_PROJECTIONS.flatMap((p) => [...p.handles]));
/** Agent and contract ids. */
const SUBJECT_ID = /^(agt|ctr)_[A-Za-z0-9_-]+$/;

/** The subjects an event names: string values of its top-level `id` and `*_id` fields that are agent or contract ids. */
export function subjectsOf(event: RecordedEvent): string[] {
  const data = event.data;
  if (!isRecord(data)) return [];
  const out = new Set<string>();
  for (const [k, v] of Object.entries(data)) if ((k === 'id' || k.endsWith('_id')) && typeof v === 'string' && SUBJECT_ID.test(v)) out.add(v);
  return [...out];
}

export interface AsOfState {
  store: MemoryReadStore;
  /** Events folded to make it (at most `every` per read). */
  folded: number;
  /** The position of the version it started from (0: none). */
  from: number;
}

export interface AsOfIndexOptions {
  /** A version every this many mentions of a subject: the most events one read folds. */
  every?: number;
  /** Answered states kept, by (projections, subject, position). */
  cacheEntries?: number;
  /** Called before the file is opened (the service makes it owner-only). */
  beforeOpen?: () => void;
}

export class AsOfUnavailable extends Error {}

export class AsOfIndex {
  readonly every: number;
  #db: Database.Database | null = null;
  #sub: Subscription | null = null;
  #position = 0;
  #waiters: Array<{ position: number; resolve: () => void }> = [];
  readonly #cache: LRUCache<string, AsOfState>;
  /** Counters (tests, bench, metrics). */
  readonly stats = { reads: 0, cacheHits: 0, folded: 0, lastFolded: 0, maxFolded: 0, lastFrom: 0, indexed: 0 };

  constructor(
    private readonly log: EventLog,
    private readonly path: string,
    options: AsOfIndexOptions = {},
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.every = options.every ?? 500;
    this.#cache = new LRUCache({ max: options.cacheEntries ?? 256 });
    this.#beforeOpen = options.beforeOpen ?? (() => {});
  }
  readonly #beforeOpen: () => void;

  /** The position the index has read the log to. */
  get position(): number {
    return this.#position;
  }

  #started: Promise<void> | null = null;

  /** Opens the file and follows the log from where it left off (once). */
  start(): Promise<void> {
    this.#started ??= this.#open();
    return this.#started;
  }

  async #open(): Promise<void> {
    this.#beforeOpen();
    const db = new Database(this.path);
    this.#db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS mentions (subject TEXT NOT NULL, pos INTEGER NOT NULL, PRIMARY KEY (subject, pos)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS subjects (subject TEXT PRIMARY KEY, since INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS versions (subject TEXT NOT NULL, pos INTEGER NOT NULL, state TEXT, PRIMARY KEY (subject, pos)) WITHOUT ROWID;`);
    const meta = (key: string) => db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
    const fingerprint = `${projectionCodeFingerprint()}:${this.every}`;
    let position = Number(meta('position') ?? 0);
    // Made by other projection code, or the log at its position is another event: start again.
    const [atPosition] = position > 0 ? await this.log.readAll({ after: position - 1, maxCount: 1 }) : [];
    if (meta('fingerprint') !== fingerprint || (position > 0 && atPosition?.id !== meta('event_id'))) {
      db.exec('DELETE FROM mentions; DELETE FROM subjects; DELETE FROM versions; DELETE FROM meta;');
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('fingerprint', fingerprint);
      position = 0;
    }
    this.#position = position;
    await this.#finishPendingVersions();
    this.#sub = this.log.subscribeAll(position, (events) => this.#apply(events));
  }

  #opened(): Database.Database {
    if (!this.#db) throw new AsOfUnavailable('the as-of index is closed');
    return this.#db;
  }

  async close(): Promise<void> {
    await this.#sub?.close();
    this.#sub = null;
    this.#db?.close();
    this.#db = null;
    this.#started = null;
    for (const w of this.#waiters) w.resolve();
    this.#waiters = [];
  }

  /** Resolves true once the index has read the log up to `position`, false after `timeoutMs`. */
  async reach(position: number, timeoutMs: number): Promise<boolean> {
    await this.start();
    if (this.#position >= position) return true;
    let timer: NodeJS.Timeout | undefined;
    const reached = new Promise<boolean>((resolve) => this.#waiters.push({ position, resolve: () => resolve(true) }));
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([reached, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A store holding the documents of `subjects` in the collections of `projections` as they were at
   * `position` (which the index must have reached). Other documents in it are partial: read only the subjects'.
   */
  async stateAt(projections: Projection[], subjects: readonly string[], position: number): Promise<AsOfState> {
    if (this.#position < position) throw new AsOfUnavailable(`the as-of index is at ${this.#position}, not yet at ${position}`);
    for (const p of projections) for (const c of p.collections) if (!(c.name in SUBJECT_OF)) throw new Error(`as-of: collection ${c.name} has no subject`);
    this.stats.reads++;
    const key = `${projections.map((p) => p.name).join(',')}|${[...new Set(subjects)].sort().join(',')}|${position}`;
    const hit = this.#cache.get(key);
    if (hit) {
      this.stats.cacheHits++;
      this.stats.lastFolded = 0;
      return hit;
    }
    const state = await this.#fold(projections, [...new Set(subjects)], position);
    this.stats.folded += state.folded;
    this.stats.lastFolded = state.folded;
    this.stats.lastFrom = state.from;
    this.stats.maxFolded = Math.max(this.stats.maxFolded, state.folded);
    this.#cache.set(key, state);
    return state;
  }

  /**
   * Each subject's last version at or before `position`, then the events that name any of them
   * after its version, in log order. Every projection write is `applyAt`, which skips an event a
   * document has already seen (its `_pos`), so an event older than one subject's version but named
   * by another changes nothing of the first.
   */
  async #fold(projections: Projection[], subjects: string[], position: number): Promise<AsOfState> {
    const db = this.#opened();
    const store = new MemoryReadStore();
    const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
    for (const p of projections) {
      for (const spec of p.collections) await store.ensureCollection(spec);
      await p.init?.(ctx);
    }
    const latest = db.prepare<[string, number], { pos: number; state: string }>(
      'SELECT pos, state FROM versions WHERE subject = ? AND pos <= ? AND state IS NOT NULL ORDER BY pos DESC LIMIT 1',
    );
    const after = db.prepare<[string, number, number], number>('SELECT pos FROM mentions WHERE subject = ? AND pos > ? AND pos <= ? ORDER BY pos').pluck();
    const all = new Set<number>();
    let from = 0;
    for (const subject of subjects) {
      const version = latest.get(subject, position);
      if (version) {
        from = Math.max(from, version.pos);
        const docs: unknown = JSON.parse(version.state); // #versionState's { collection: documents }
        for (const p of projections) {
          for (const c of p.collections) {
            const saved = isRecord(docs) ? docs[c.name] : undefined;
            if (Array.isArray(saved)) for (const doc of saved) if (isDoc(doc)) await store.collection(c.name).insertOne(doc);
          }
        }
      }
      for (const pos of after.all(subject, version?.pos ?? 0, position)) all.add(pos);
    }
    const positions = [...all].sort((a, b) => a - b);
    for (const pos of positions) {
      const [event] = await this.log.readAll({ after: pos - 1, maxCount: 1 });
      if (event === undefined || event.position !== pos) continue;
      for (const p of projections) if (p.handles.has(event.type)) await p.apply(event, ctx);
    }
    return { store, folded: positions.length, from };
  }

  /** A subject's documents (every as-of collection) at `position`, as a version's state. */
  async #versionState(subject: string, position: number): Promise<string> {
    const { store } = await this.#fold(AS_OF_PROJECTIONS, [subject], position);
    const out: Record<string, Doc[]> = {};
    for (const [name, subjectOf] of Object.entries(SUBJECT_OF)) {
      const docs = (await store.collection(name).find({})).filter((d) => subjectOf(d) === subject);
      if (docs.length > 0) out[name] = docs;
    }
    return JSON.stringify(out);
  }

  async #finishPendingVersions(): Promise<void> {
    const db = this.#opened();
    const pending = db.prepare<[], { subject: string; pos: number }>('SELECT subject, pos FROM versions WHERE state IS NULL ORDER BY pos').all();
    for (const v of pending)
      db.prepare('UPDATE versions SET state = ? WHERE subject = ? AND pos = ?').run(await this.#versionState(v.subject, v.pos), v.subject, v.pos);
  }

  async #apply(events: RecordedEvent[]): Promise<void> {
    const db = this.#db;
    if (!db) return;
    try {
      const mention = db.prepare('INSERT OR IGNORE INTO mentions (subject, pos) VALUES (?, ?)');
      const count = db
        .prepare<[string], number>('INSERT INTO subjects (subject, since) VALUES (?, 1) ON CONFLICT (subject) DO UPDATE SET since = since + 1 RETURNING since')
        .pluck();
      const reset = db.prepare('UPDATE subjects SET since = 0 WHERE subject = ?');
      const pending = db.prepare('INSERT OR IGNORE INTO versions (subject, pos, state) VALUES (?, ?, NULL)');
      const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
      const last = events[events.length - 1];
      this.stats.indexed += events.length;
      // Mentions, and the versions due, in one transaction with the position; the versions' states
      // are folded after it (they read the log) and a start finishes any left pending.
      db.transaction(() => {
        for (const e of events) {
          if (!AS_OF_TYPES.has(e.type)) continue;
          for (const s of subjectsOf(e)) {
            if (mention.run(s, e.position).changes === 0) continue; // already indexed (a redelivery)
            if ((count.get(s) ?? 0) >= this.every) {
              reset.run(s);
              pending.run(s, e.position);
            }
          }
        }
        setMeta.run('position', String(last.position));
        setMeta.run('event_id', last.id);
      })();
      // Readers see the new position once the versions it made due are stored.
      await this.#finishPendingVersions();
      this.#position = last.position;
      this.#waiters = this.#waiters.filter((w) => {
        if (w.position > this.#position) return true;
        w.resolve();
        return false;
      });
    } catch (err) {
      this.onError(err);
      throw err;
    }
  }
}
