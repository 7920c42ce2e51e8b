// Agenda 6 backend stored in SQLite (better-sqlite3): the embedded, durable job store.
//
// The file is shared with the embedded event log (another better-sqlite3 connection on the same
// file), so this backend only ever touches its own table (`agenda_jobs` by default) and opens the
// file in WAL mode with synchronous=FULL. While another connection holds the write lock (the event
// log's writer thread, during each commit) a method waits on a timer and runs again, instead of in
// SQLite's busy handler, which would stall the event loop and every request with it.
//
// Semantics follow @agendajs/mongo-backend's MongoJobRepository method by method (queries, sort
// order, 'single' and 'unique' upserts, debounce, counts), with three deliberate differences (the
// third: a unique() query made only of equalities matches the job saved with the same query, by
// index, instead of scanning every job's data; see saveJob):
//  - saveJob() never touches the processor-managed fields (lockedAt, lastRunAt, lastFinishedAt,
//    failedAt, failCount, failReason, progress) of an existing job when the caller leaves them
//    undefined. Agenda's Job.save() strips them "to prevent race conditions between user code and
//    the processor"; the Mongo backend then writes them back as null (so re-running every() on a
//    running job unlocks it), the official Postgres backend leaves them alone. We do the latter.
//  - job `data` is stored as JSON: Dates inside data come back as ISO strings. Every JobParameters
//    date field (nextRunAt, lockedAt, ...) is stored as integer milliseconds and returned as a Date.
//
// Locking is atomic: getNextJobToRun() and lockJob() are single `UPDATE ... WHERE ... RETURNING`
// statements (SQLite takes the write lock before it evaluates the WHERE clause), and the multi-step
// upserts of saveJob() run in BEGIN IMMEDIATE transactions, so any number of Agenda instances, in
// one process or many, can share the file without running a job twice.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { computeJobState, toJobId } from 'agenda';
import type {
  AgendaBackend,
  JobId,
  JobParameters,
  JobRepository,
  JobRepositoryOptions,
  JobsOverview,
  JobsQueryOptions,
  JobsResult,
  JobsSort,
  JobWithState,
  RemoveJobsOptions,
} from 'agenda';

export interface SqliteAgendaBackendOptions {
  /** SQLite file (shared with the event log). Its directory is created when missing. */
  path: string;
  /** How long a method waits for another connection's write lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** Table holding the jobs (default 'agenda_jobs'). */
  table?: string;
  /**
   * SQLite `synchronous` for this connection (default FULL). The service uses NORMAL: every job it
   * schedules is re-derived from the event log at start, so a power cut can only delay a job, and
   * a FULL fsync per job save would stall the event loop on the request path.
   */
  synchronous?: 'FULL' | 'NORMAL';
}

type Statement = Database.Statement<unknown[], unknown>;

/**
 * The repository methods that run statements. Each is read-only, one statement, or one
 * transaction, so when SQLite refuses it as busy nothing has been done and it can simply run again.
 */
const RETRIED_ON_BUSY = [
  'getJobById',
  'queryJobs',
  'getJobsOverview',
  'getDistinctJobNames',
  'getQueueSize',
  'removeJobs',
  'disableJobs',
  'enableJobs',
  'purgeAllJobs',
  'unlockJob',
  'unlockJobs',
  'lockJob',
  'getNextJobToRun',
  'saveJobState',
  'saveJob',
] as const;

function isBusy(error: unknown): boolean {
  return error instanceof Database.SqliteError && (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'));
}

/** One row of the jobs table, exactly as SQLite returns it. */
interface JobRow {
  id: string;
  name: string;
  priority: number;
  nextRunAt: number | null;
  type: string;
  lockedAt: number | null;
  lastFinishedAt: number | null;
  failedAt: number | null;
  failCount: number | null;
  failReason: string | null;
  repeatTimezone: string | null;
  lastRunAt: number | null;
  repeatInterval: string | number | null;
  repeatAt: string | null;
  data: string | null;
  disabled: number | null;
  progress: number | null;
  uniqueQuery: string | null;
  uniqueOpts: string | null;
  debounceStartedAt: number | null;
  lastModifiedBy: string | null;
  fork: number | null;
  startDate: number | null;
  endDate: number | null;
  skipDays: string | null;
}

type Column = Exclude<keyof JobRow, 'id'>;
type SqlValue = string | number | null;

const DATE_COLUMNS = new Set<string>(['nextRunAt', 'lockedAt', 'lastFinishedAt', 'failedAt', 'lastRunAt', 'debounceStartedAt', 'startDate', 'endDate']);
const BOOL_COLUMNS = new Set<string>(['disabled', 'fork']);
const JSON_COLUMNS = new Set<string>(['skipDays', 'uniqueQuery', 'uniqueOpts']);
const PLAIN_COLUMNS = new Set<string>([
  'name',
  'priority',
  'type',
  'failCount',
  'failReason',
  'repeatTimezone',
  'repeatInterval',
  'repeatAt',
  'progress',
  'lastModifiedBy',
]);

/** Fields that only the job processor writes (Agenda's Job.PROCESSOR_MANAGED_FIELDS). */
const PROCESSOR_FIELDS = ['lockedAt', 'lastRunAt', 'lastFinishedAt', 'failedAt', 'failCount', 'failReason', 'progress'] as const;

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// ---------------------------------------------------------------------------------------------
// Value conversion

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function toMs(value: unknown, field: string): number | null {
  if (value === undefined || value === null) return null;
  const ms = value instanceof Date ? value.getTime() : new Date(value as string | number).getTime();
  if (Number.isNaN(ms)) throw new TypeError(`agenda job field ${field}: invalid date ${String(value)}`);
  return ms;
}

function toDate(ms: number | null): Date | undefined {
  return ms === null ? undefined : new Date(ms);
}

function toBool(value: unknown): number | null {
  if (value === true) return 1;
  if (value === false) return 0;
  return null;
}

function fromBool(value: number | null): boolean | undefined {
  return value === null ? undefined : value === 1;
}

function toJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(value);
}

function fromJson<T>(text: string | null): T | undefined {
  return text === null ? undefined : (JSON.parse(text) as T);
}

function toPlain(value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return Number(value);
  return String(value);
}

function columnValue(column: string, value: unknown): SqlValue {
  if (DATE_COLUMNS.has(column)) return toMs(value, column);
  if (BOOL_COLUMNS.has(column)) return toBool(value);
  if (JSON_COLUMNS.has(column)) return toJson(value);
  if (column === 'data') return value === undefined || value === null ? null : JSON.stringify(value);
  return toPlain(value);
}

// ObjectId-shaped ids (24 hex chars: seconds, per-process random, counter): unique across
// processes, roughly time-ordered, and the same shape as the Mongo backend's ids.
const processRandom = randomBytes(5).toString('hex');
let idCounter = randomBytes(3).readUIntBE(0, 3);
function newJobId(): string {
  idCounter = (idCounter + 1) % 0x1000000;
  const seconds = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0');
  return `${seconds}${processRandom}${idCounter.toString(16).padStart(6, '0')}`;
}

function rowToJob<DATA = unknown>(row: JobRow): JobParameters<DATA> {
  return {
    _id: toJobId(row.id),
    name: row.name,
    priority: row.priority,
    nextRunAt: row.nextRunAt === null ? null : new Date(row.nextRunAt),
    type: row.type as JobParameters['type'],
    data: (row.data === null ? null : JSON.parse(row.data)) as DATA,
    lockedAt: toDate(row.lockedAt),
    lastFinishedAt: toDate(row.lastFinishedAt),
    failedAt: toDate(row.failedAt),
    failCount: row.failCount ?? undefined,
    failReason: row.failReason ?? undefined,
    repeatTimezone: row.repeatTimezone ?? undefined,
    lastRunAt: toDate(row.lastRunAt),
    repeatInterval: row.repeatInterval ?? undefined,
    repeatAt: row.repeatAt ?? undefined,
    disabled: fromBool(row.disabled),
    progress: row.progress ?? undefined,
    unique: fromJson<Record<string, unknown>>(row.uniqueQuery),
    uniqueOpts: fromJson<JobParameters['uniqueOpts']>(row.uniqueOpts),
    lastModifiedBy: row.lastModifiedBy ?? undefined,
    fork: fromBool(row.fork),
    debounceStartedAt: toDate(row.debounceStartedAt),
    startDate: toDate(row.startDate),
    endDate: toDate(row.endDate),
    skipDays: fromJson<number[]>(row.skipDays),
  };
}

// ---------------------------------------------------------------------------------------------
// Filters: the subset of MongoDB query semantics that Agenda's repository API exposes
// (equality on columns and on `data` paths, plus simple operators inside `unique`).

class Where {
  readonly parts: string[] = [];
  readonly params: SqlValue[] = [];
  add(sql: string, ...params: SqlValue[]): this {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }
  get empty(): boolean {
    return this.parts.length === 0;
  }
  sql(): string {
    return this.parts.length === 0 ? '1' : this.parts.join(' AND ');
  }
}

type Field =
  | { kind: 'json'; path: string } // a path inside data
  | { kind: 'data' } // the whole data value
  | { kind: 'column'; column: string };

/** A predicate over one field: SQL that is always 0 or 1, never NULL, with its parameters. */
interface Predicate {
  sql: string;
  params: SqlValue[];
}

function jsonPath(segments: string[]): string {
  let path = '$';
  for (const segment of segments) {
    if (segment === '' || segment.includes('"')) throw new Error(`unsupported data path segment "${segment}"`);
    path += `."${segment}"`;
  }
  return path;
}

function fieldFor(key: string): Field {
  if (key === 'data') return { kind: 'data' };
  if (key.startsWith('data.')) return { kind: 'json', path: jsonPath(key.slice(5).split('.')) };
  if (key === '_id') return { kind: 'column', column: 'id' };
  if (key === 'unique') return { kind: 'column', column: 'uniqueQuery' };
  if (DATE_COLUMNS.has(key) || BOOL_COLUMNS.has(key) || PLAIN_COLUMNS.has(key) || key === 'uniqueOpts' || key === 'skipDays') {
    return { kind: 'column', column: key };
  }
  throw new Error(`unsupported job field "${key}" in a filter (use a job field or data.<path>)`);
}

function jsonLiteral(value: unknown): string {
  return JSON.stringify(value instanceof Date ? value.toISOString() : value);
}

function equals(field: Field, value: unknown): Predicate {
  if (field.kind === 'data') {
    if (value === undefined || value === null) return { sql: `(data IS NULL OR data = 'null')`, params: [] };
    return { sql: `IFNULL(data = ?, 0)`, params: [jsonLiteral(value)] };
  }
  if (field.kind === 'json') {
    const p = field.path;
    if (value === undefined || value === null) return { sql: `(json_extract(data, ?) IS NULL)`, params: [p] };
    if (typeof value === 'boolean') return { sql: `IFNULL(json_type(data, ?) = ?, 0)`, params: [p, value ? 'true' : 'false'] };
    if (typeof value === 'number' || typeof value === 'bigint') {
      return {
        sql: `IFNULL(json_type(data, ?) IN ('integer', 'real') AND json_extract(data, ?) = ?, 0)`,
        params: [p, p, Number(value)],
      };
    }
    if (typeof value === 'string' || value instanceof Date) {
      const text = value instanceof Date ? value.toISOString() : value;
      return { sql: `IFNULL(json_type(data, ?) = 'text' AND json_extract(data, ?) = ?, 0)`, params: [p, p, text] };
    }
    return {
      sql: `IFNULL(json_type(data, ?) IN ('object', 'array') AND json_extract(data, ?) = json(?), 0)`,
      params: [p, p, JSON.stringify(value)],
    };
  }
  const column = field.column;
  if (value === undefined || value === null) return { sql: `(${column} IS NULL)`, params: [] };
  return { sql: `IFNULL(${column} = ?, 0)`, params: [column === 'id' ? String(value) : columnValue(column, value)] };
}

function compare(field: Field, op: '<' | '<=' | '>' | '>=', value: unknown): Predicate {
  if (field.kind === 'json') {
    const p = field.path;
    if (typeof value === 'number') {
      return { sql: `IFNULL(json_type(data, ?) IN ('integer', 'real') AND json_extract(data, ?) ${op} ?, 0)`, params: [p, p, value] };
    }
    if (typeof value === 'string' || value instanceof Date) {
      const text = value instanceof Date ? value.toISOString() : value;
      return { sql: `IFNULL(json_type(data, ?) = 'text' AND json_extract(data, ?) ${op} ?, 0)`, params: [p, p, text] };
    }
    throw new Error(`unsupported comparison value ${String(value)}`);
  }
  if (field.kind === 'data') throw new Error('comparison operators on the whole data value are not supported');
  return { sql: `IFNULL(${field.column} ${op} ?, 0)`, params: [columnValue(field.column, value)] };
}

function exists(field: Field): Predicate {
  if (field.kind === 'json') return { sql: `(json_type(data, ?) IS NOT NULL)`, params: [field.path] };
  if (field.kind === 'data') return { sql: `(data IS NOT NULL)`, params: [] };
  return { sql: `(${field.column} IS NOT NULL)`, params: [] };
}

function anyOf(predicates: Predicate[]): Predicate {
  if (predicates.length === 0) return { sql: '0', params: [] };
  return { sql: `(${predicates.map((p) => p.sql).join(' OR ')})`, params: predicates.flatMap((p) => p.params) };
}

function not(p: Predicate): Predicate {
  return { sql: `(NOT ${p.sql})`, params: p.params };
}

const BANNED_OPERATORS = new Set(['$where', '$function', '$accumulator', '$expr']);

function fieldPredicate(field: Field, value: unknown): Predicate[] {
  if (!isPlainObject(value) || !Object.keys(value).some((k) => k.startsWith('$'))) return [equals(field, value)];
  const out: Predicate[] = [];
  for (const [op, operand] of Object.entries(value)) {
    switch (op) {
      case '$eq':
        out.push(equals(field, operand));
        break;
      case '$ne':
        out.push(not(equals(field, operand)));
        break;
      case '$gt':
        out.push(compare(field, '>', operand));
        break;
      case '$gte':
        out.push(compare(field, '>=', operand));
        break;
      case '$lt':
        out.push(compare(field, '<', operand));
        break;
      case '$lte':
        out.push(compare(field, '<=', operand));
        break;
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand)) throw new Error(`${op} needs an array`);
        const any = anyOf(operand.map((v) => equals(field, v)));
        out.push(op === '$in' ? any : not(any));
        break;
      }
      case '$exists':
        out.push(operand ? exists(field) : not(exists(field)));
        break;
      default:
        if (BANNED_OPERATORS.has(op)) throw new Error(`Unsafe operator "${op}" is not allowed in a unique() constraint`);
        throw new Error(`operator "${op}" is not supported by the SQLite agenda backend`);
    }
  }
  return out;
}

/** Mongo's flattenDataFilter: nested plain objects become data.a.b equality paths. */
function addDataFilter(where: Where, data: unknown): void {
  if (data !== null && typeof data === 'object' && !Array.isArray(data) && isPlainObject(data)) {
    const walk = (obj: Record<string, unknown>, prefix: string[]): void => {
      for (const [key, value] of Object.entries(obj)) {
        const path = [...prefix, key];
        if (isPlainObject(value)) walk(value, path);
        else {
          const p = equals({ kind: 'json', path: jsonPath(path) }, value);
          where.add(p.sql, ...p.params);
        }
      }
    };
    walk(data, []);
    return;
  }
  const p = equals({ kind: 'data' }, data);
  where.add(p.sql, ...p.params);
}

function addUniqueFilter(where: Where, unique: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(unique)) {
    if (BANNED_OPERATORS.has(key)) throw new Error(`Unsafe operator "${key}" is not allowed in a unique() constraint`);
    for (const p of fieldPredicate(fieldFor(key), value)) where.add(p.sql, ...p.params);
  }
}

function placeholders(n: number): string {
  return new Array(n).fill('?').join(', ');
}

/** Mongo's buildFilterFromOptions / removeJobs filter. Returns null when no criterion is given. */
function removeFilter(options: RemoveJobsOptions): Where | null {
  const where = new Where();
  if (options.id) where.add('id = ?', String(options.id));
  else if (Array.isArray(options.ids) && options.ids.length > 0) {
    where.add(`id IN (${placeholders(options.ids.length)})`, ...options.ids.map(String));
  }
  if (options.name && typeof options.name === 'string') where.add('name = ?', options.name);
  else if (Array.isArray(options.names) && options.names.some((n) => typeof n === 'string')) {
    const names = options.names.filter((n): n is string => typeof n === 'string');
    where.add(`name IN (${placeholders(names.length)})`, ...names);
  } else if (Array.isArray(options.notNames) && options.notNames.some((n) => typeof n === 'string')) {
    const names = options.notNames.filter((n): n is string => typeof n === 'string');
    where.add(`name NOT IN (${placeholders(names.length)})`, ...names);
  }
  if (options.data !== undefined) addDataFilter(where, options.data);
  return where.empty ? null : where;
}

const SORT_COLUMNS: Record<keyof JobsSort, string> = {
  nextRunAt: 'nextRunAt',
  lastRunAt: 'lastRunAt',
  lastFinishedAt: 'lastFinishedAt',
  priority: 'priority',
  name: 'name',
  data: 'data',
};

/** Mongo's toMongoSort: the given keys in order, default nextRunAt desc, lastRunAt desc. */
function orderBy(sort: JobsSort | undefined): string {
  const parts: string[] = [];
  for (const key of Object.keys(sort ?? {}) as (keyof JobsSort)[]) {
    const dir = sort?.[key];
    const column = SORT_COLUMNS[key];
    if (dir === undefined || !column) continue;
    parts.push(`${column} ${dir === 'asc' ? 'ASC' : 'DESC'}`);
  }
  if (parts.length === 0) parts.push('nextRunAt DESC', 'lastRunAt DESC');
  parts.push('rowid ASC');
  return parts.join(', ');
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

// ---------------------------------------------------------------------------------------------

/** The JobRepository: every method mirrors MongoJobRepository (see the header for the two differences). */
export class SqliteJobRepository implements JobRepository {
  private db: Database.Database | undefined;
  private readonly statements = new Map<string, Statement>();
  private readonly table: string;
  private readonly busyTimeoutMs: number;
  private readonly synchronous: 'FULL' | 'NORMAL';

  constructor(private readonly options: SqliteAgendaBackendOptions) {
    this.table = options.table ?? 'agenda_jobs';
    if (!TABLE_NAME.test(this.table)) throw new Error(`invalid agenda table name "${this.table}"`);
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.synchronous = options.synchronous ?? 'FULL';
    for (const name of RETRIED_ON_BUSY) {
      const method = (this[name] as (...args: unknown[]) => Promise<unknown>).bind(this);
      (this as Record<string, unknown>)[name] = (...args: unknown[]) => this.whenUnlocked(() => method(...args));
    }
  }

  /** Runs a method, and again on a timer while another connection holds the lock (up to busyTimeoutMs). */
  private async whenUnlocked<T>(run: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
      try {
        return await run();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Opens the file and creates the table and indexes. Idempotent: a second call is a no-op. */
  async connect(): Promise<void> {
    if (this.db) return;
    const path = this.options.path;
    if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    try {
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(this.busyTimeoutMs))}`);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${this.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
      const t = this.table;
      db.transaction(() => {
        db.exec(`
          CREATE TABLE IF NOT EXISTS ${t} (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL,
            priority INTEGER NOT NULL DEFAULT 0,
            nextRunAt INTEGER,
            type TEXT NOT NULL DEFAULT 'normal',
            lockedAt INTEGER,
            lastFinishedAt INTEGER,
            failedAt INTEGER,
            failCount INTEGER,
            failReason TEXT,
            repeatTimezone TEXT,
            lastRunAt INTEGER,
            repeatInterval, -- no declared type: keeps numbers as numbers and strings as strings
            repeatAt TEXT,
            data TEXT,
            disabled INTEGER,
            progress REAL,
            uniqueQuery TEXT,
            uniqueOpts TEXT,
            debounceStartedAt INTEGER,
            lastModifiedBy TEXT,
            fork INTEGER,
            startDate INTEGER,
            endDate INTEGER,
            skipDays TEXT
          );
          CREATE INDEX IF NOT EXISTS ${t}_find_next ON ${t} (name, lockedAt, nextRunAt, priority DESC);
          CREATE INDEX IF NOT EXISTS ${t}_next_run ON ${t} (nextRunAt);
          CREATE INDEX IF NOT EXISTS ${t}_unique ON ${t} (name, uniqueQuery);
        `);
      }).immediate();
      // From here on, contention waits on a timer (whenUnlocked), never inside SQLite.
      db.pragma('busy_timeout = 0');
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
  }

  /** Closes the connection. Idempotent. */
  async disconnect(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    this.statements.clear();
    if (db?.open) db.close();
  }

  get connected(): boolean {
    return this.db !== undefined;
  }

  private conn(): Database.Database {
    if (!this.db) throw new Error('SQLite agenda backend is not connected (call connect() first)');
    return this.db;
  }

  private stmt(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.conn().prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private get(sql: string, params: SqlValue[]): JobRow | undefined {
    return this.stmt(sql).get(...params) as JobRow | undefined;
  }

  private all(sql: string, params: SqlValue[]): JobRow[] {
    return this.stmt(sql).all(...params) as JobRow[];
  }

  private run(sql: string, params: SqlValue[]): number {
    return this.stmt(sql).run(...params).changes;
  }

  // ---- reads -------------------------------------------------------------------------------

  async getJobById(id: string): Promise<JobParameters | null> {
    const row = this.get(`SELECT * FROM ${this.table} WHERE id = ?`, [String(id)]);
    return row ? rowToJob(row) : null;
  }

  async queryJobs(options: JobsQueryOptions = {}): Promise<JobsResult> {
    const { name, names, state, id, ids, search, data, includeDisabled = true, sort, skip = 0, limit = 0 } = options;
    const now = new Date();
    const where = new Where();
    // As in Mongo, a search (case-insensitive substring of the name) replaces the name filter.
    if (search && typeof search === 'string') where.add(`name LIKE ? ESCAPE '\\'`, `%${escapeLike(search)}%`);
    else if (name && typeof name === 'string') where.add('name = ?', name);
    else if (Array.isArray(names) && names.some((n) => typeof n === 'string')) {
      const valid = names.filter((n): n is string => typeof n === 'string');
      where.add(`name IN (${placeholders(valid.length)})`, ...valid);
    }
    if (id && typeof id === 'string') where.add('id = ?', id);
    else if (Array.isArray(ids) && ids.some((i) => typeof i === 'string')) {
      const valid = ids.filter((i): i is string => typeof i === 'string');
      where.add(`id IN (${placeholders(valid.length)})`, ...valid);
    }
    if (data !== undefined) addDataFilter(where, data);
    if (!includeDisabled) where.add('disabled IS NOT 1');

    const base = `FROM ${this.table} WHERE ${where.sql()} ORDER BY ${orderBy(sort)}`;
    const withState = (row: JobRow): JobWithState => {
      const job = rowToJob(row) as JobWithState;
      job.state = computeJobState(job, now);
      return job;
    };

    if (!state) {
      const total = (this.stmt(`SELECT COUNT(*) AS n FROM ${this.table} WHERE ${where.sql()}`).get(...where.params) as { n: number }).n;
      const page = limit > 0 || skip > 0;
      const rows = page
        ? this.all(`SELECT * ${base} LIMIT ? OFFSET ?`, [...where.params, limit > 0 ? limit : -1, Math.max(0, skip)])
        : this.all(`SELECT * ${base}`, where.params);
      return { jobs: rows.map(withState), total };
    }

    let jobs = this.all(`SELECT * ${base}`, where.params)
      .map(withState)
      .filter((job) => (state === 'paused' ? job.disabled === true : job.state === state));
    const total = jobs.length;
    if (limit > 0) jobs = jobs.slice(skip, skip + limit);
    else if (skip > 0) jobs = jobs.slice(skip);
    return { jobs, total };
  }

  async getJobsOverview(): Promise<JobsOverview[]> {
    const now = new Date();
    const rows = this.stmt(
      `SELECT name, nextRunAt, lockedAt, lastFinishedAt, failedAt, repeatInterval, disabled FROM ${this.table} ORDER BY name`,
    ).all() as Pick<JobRow, 'name' | 'nextRunAt' | 'lockedAt' | 'lastFinishedAt' | 'failedAt' | 'repeatInterval' | 'disabled'>[];
    const byName = new Map<string, JobsOverview>();
    for (const row of rows) {
      let overview = byName.get(row.name);
      if (!overview) {
        overview = { name: row.name, total: 0, running: 0, scheduled: 0, queued: 0, completed: 0, failed: 0, repeating: 0, paused: 0 };
        byName.set(row.name, overview);
      }
      overview.total++;
      const state = computeJobState(
        {
          name: row.name,
          priority: 0,
          type: 'normal',
          data: undefined,
          nextRunAt: row.nextRunAt === null ? null : new Date(row.nextRunAt),
          lockedAt: toDate(row.lockedAt),
          lastFinishedAt: toDate(row.lastFinishedAt),
          failedAt: toDate(row.failedAt),
          repeatInterval: row.repeatInterval ?? undefined,
        },
        now,
      );
      overview[state]++;
      if (row.disabled === 1) overview.paused++;
    }
    return [...byName.values()];
  }

  async getDistinctJobNames(): Promise<string[]> {
    return (this.stmt(`SELECT DISTINCT name FROM ${this.table} ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
  }

  /** Jobs whose nextRunAt is in the past (locked and disabled ones included, as in Mongo). */
  async getQueueSize(): Promise<number> {
    return (this.stmt(`SELECT COUNT(*) AS n FROM ${this.table} WHERE nextRunAt < ?`).get(Date.now()) as { n: number }).n;
  }

  // ---- bulk changes ------------------------------------------------------------------------

  async removeJobs(options: RemoveJobsOptions): Promise<number> {
    const where = removeFilter(options);
    if (!where) return 0;
    return this.run(`DELETE FROM ${this.table} WHERE ${where.sql()}`, where.params);
  }

  /** Returns how many jobs changed (already-disabled jobs are not counted, like Mongo's modifiedCount). */
  async disableJobs(options: RemoveJobsOptions): Promise<number> {
    const where = removeFilter(options);
    if (!where) return 0;
    return this.run(`UPDATE ${this.table} SET disabled = 1 WHERE ${where.sql()} AND disabled IS NOT 1`, where.params);
  }

  /** Returns how many jobs changed (jobs already enabled with disabled=false are not counted). */
  async enableJobs(options: RemoveJobsOptions): Promise<number> {
    const where = removeFilter(options);
    if (!where) return 0;
    return this.run(`UPDATE ${this.table} SET disabled = 0 WHERE ${where.sql()} AND disabled IS NOT 0`, where.params);
  }

  async purgeAllJobs(): Promise<number> {
    return this.run(`DELETE FROM ${this.table}`, []);
  }

  // ---- locking -----------------------------------------------------------------------------

  /** Only unlocks a job that is not being processed (nextRunAt not null), as in Mongo. */
  async unlockJob(job: JobParameters): Promise<void> {
    if (!job._id) return;
    this.run(`UPDATE ${this.table} SET lockedAt = NULL WHERE id = ? AND nextRunAt IS NOT NULL`, [String(job._id)]);
  }

  /** Unlocks by id whatever nextRunAt is (Agenda.stop() uses it for jobs it locked but did not run). */
  async unlockJobs(jobIds: (JobId | string)[]): Promise<void> {
    if (jobIds.length === 0) return;
    const ids = jobIds.map(String);
    this.run(`UPDATE ${this.table} SET lockedAt = NULL WHERE id IN (${placeholders(ids.length)})`, ids);
  }

  /** Locks this very job if it is unlocked, enabled and still has the same nextRunAt. */
  async lockJob(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<JobParameters | undefined> {
    if (!job._id) return undefined;
    const nextRunAt = toMs(job.nextRunAt, 'nextRunAt');
    const row = this.get(
      `UPDATE ${this.table} SET lockedAt = ?, lastModifiedBy = ?
       WHERE id = ? AND name = ? AND lockedAt IS NULL AND nextRunAt IS ? AND disabled IS NOT 1
       RETURNING *`,
      [Date.now(), options?.lastModifiedBy ?? null, String(job._id), job.name, nextRunAt],
    );
    return row ? rowToJob(row) : undefined;
  }

  /**
   * Finds and locks, in one statement, the first job of this name (by nextRunAt asc, priority desc)
   * that is enabled and either unlocked and due by nextScanAt, or locked before lockDeadline
   * (its lock expired). Each branch is served by the (name, lockedAt, nextRunAt, priority) index.
   */
  async getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    const t = this.table;
    const row = this.get(
      `UPDATE ${t} SET lockedAt = ?, lastModifiedBy = ?
       WHERE id = (
         SELECT id FROM (
           SELECT * FROM (
             SELECT id, nextRunAt, priority, rowid AS seq FROM ${t}
             WHERE name = ? AND lockedAt IS NULL AND nextRunAt <= ? AND disabled IS NOT 1
             ORDER BY nextRunAt ASC, priority DESC, rowid ASC LIMIT 1)
           UNION ALL
           SELECT * FROM (
             SELECT id, nextRunAt, priority, rowid AS seq FROM ${t}
             WHERE name = ? AND lockedAt <= ? AND disabled IS NOT 1
             ORDER BY nextRunAt ASC, priority DESC, rowid ASC LIMIT 1)
         ) ORDER BY nextRunAt ASC, priority DESC, seq ASC LIMIT 1
       )
       RETURNING *`,
      [(now ?? new Date()).getTime(), options?.lastModifiedBy ?? null, jobName, nextScanAt.getTime(), jobName, lockDeadline.getTime()],
    );
    return row ? rowToJob(row) : undefined;
  }

  // ---- saving ------------------------------------------------------------------------------

  /** Writes the fields the processor owns; throws when the job no longer exists. */
  async saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    if (!job._id) throw new Error('Cannot save job state without job ID');
    const changes = this.run(
      `UPDATE ${this.table} SET lockedAt = ?, nextRunAt = ?, lastRunAt = ?, progress = ?, failReason = ?, failCount = ?,
         failedAt = ?, lastFinishedAt = ?, lastModifiedBy = ?
       WHERE id = ? AND name = ?`,
      [
        toMs(job.lockedAt, 'lockedAt'),
        toMs(job.nextRunAt, 'nextRunAt'),
        toMs(job.lastRunAt, 'lastRunAt'),
        job.progress ?? null,
        job.failReason ?? null,
        job.failCount ?? null,
        toMs(job.failedAt, 'failedAt'),
        toMs(job.lastFinishedAt, 'lastFinishedAt'),
        options?.lastModifiedBy ?? null,
        String(job._id),
        job.name,
      ],
    );
    if (changes !== 1) {
      throw new Error(`job ${job._id} (name: ${job.name}) cannot be updated in the database, maybe it does not exist anymore?`);
    }
  }

  /**
   * Insert or update, as MongoJobRepository.saveJob:
   *  - with _id: update that job (same name); a job that no longer exists is returned unchanged;
   *  - type 'single': upsert by (name, type 'single'); a nextRunAt not in the future only applies on insert;
   *  - unique: upsert on the first job matching the unique query (insertOnly: existing job returned
   *    unchanged; debounce: trailing / leading with maxWait);
   *  - otherwise insert.
   */
  async saveJob<DATA = unknown>(job: JobParameters<DATA>, options: JobRepositoryOptions | undefined): Promise<JobParameters<DATA>> {
    const { _id, unique, uniqueOpts } = job;
    const lastModifiedBy = options?.lastModifiedBy ?? null;
    const db = this.conn();

    // User-owned fields are always written (undefined -> NULL, as Mongo's `?? null`).
    const fields: Partial<Record<Column, SqlValue>> = {
      name: job.name,
      priority: job.priority ?? 0,
      nextRunAt: toMs(job.nextRunAt, 'nextRunAt'),
      type: job.type ?? 'normal',
      data: columnValue('data', job.data),
      repeatTimezone: job.repeatTimezone ?? null,
      repeatInterval: job.repeatInterval ?? null,
      repeatAt: job.repeatAt ?? null,
      disabled: toBool(job.disabled),
      debounceStartedAt: toMs(job.debounceStartedAt, 'debounceStartedAt'),
      fork: toBool(job.fork),
      startDate: toMs(job.startDate, 'startDate'),
      endDate: toMs(job.endDate, 'endDate'),
      skipDays: toJson(job.skipDays),
      lastModifiedBy,
    };
    if (unique !== undefined) fields.uniqueQuery = toJson(unique);
    if (uniqueOpts !== undefined) fields.uniqueOpts = toJson(uniqueOpts);
    // Processor-owned fields: only written when given (on insert they default to NULL).
    for (const key of PROCESSOR_FIELDS) {
      if (job[key] !== undefined) fields[key] = columnValue(key, job[key]);
    }

    if (_id) {
      const row = this.update(fields, 'id = ? AND name = ?', [String(_id), job.name]);
      return row ? rowToJob<DATA>(row) : job;
    }

    if (job.type === 'single') {
      return db
        .transaction(() => {
          const now = Date.now();
          const existing = this.get(`SELECT * FROM ${this.table} WHERE name = ? AND type = 'single' ORDER BY rowid LIMIT 1`, [job.name]);
          if (!existing) return rowToJob<DATA>(this.insert(fields));
          const update = { ...fields };
          // A nextRunAt that is already due is "protected": it only applies when inserting.
          const nextRunAt = toMs(job.nextRunAt, 'nextRunAt');
          if (nextRunAt !== null && nextRunAt <= now) delete update.nextRunAt;
          return rowToJob<DATA>(this.updateExisting(update, existing.id));
        })
        .immediate();
    }

    if (unique) {
      // A unique query of plain equalities (every caller in this service) is index-served: it
      // matches the job saved with this same query (uniqueQuery column). Matching every job's
      // JSON against it, as the Mongo backend does, scanned the whole table on each save (a fifth
      // of a registration's CPU once every agent had a grant job). Queries with operators keep
      // the general match.
      const where = new Where().add('name = ?', job.name);
      if (Object.values(unique).some((v) => v !== null && typeof v === 'object' && !Array.isArray(v))) addUniqueFilter(where, unique);
      else {
        addUniqueFilter(new Where(), unique); // still refuses unsafe or unknown fields
        where.add('uniqueQuery = ?', toJson(unique));
      }
      const debounce = uniqueOpts?.debounce;
      return db
        .transaction(() => {
          const now = Date.now();
          const existing = this.get(`SELECT * FROM ${this.table} WHERE ${where.sql()} ORDER BY rowid LIMIT 1`, where.params);
          if (debounce) {
            const update = { ...fields };
            if (existing) {
              const startedAt = existing.debounceStartedAt ?? now;
              if (debounce.strategy === 'leading') {
                update.nextRunAt = existing.nextRunAt;
                update.debounceStartedAt = startedAt;
              } else if (debounce.maxWait && now - startedAt >= debounce.maxWait) {
                update.nextRunAt = now;
                update.debounceStartedAt = null;
              } else {
                update.nextRunAt = now + debounce.delay;
                update.debounceStartedAt = startedAt;
              }
              return rowToJob<DATA>(this.updateExisting(update, existing.id));
            }
            if (debounce.strategy !== 'leading') update.nextRunAt = now + debounce.delay;
            update.debounceStartedAt = now;
            return rowToJob<DATA>(this.insert(update));
          }
          if (existing) {
            if (uniqueOpts?.insertOnly) return rowToJob<DATA>(existing);
            return rowToJob<DATA>(this.updateExisting(fields, existing.id));
          }
          return rowToJob<DATA>(this.insert(fields));
        })
        .immediate();
    }

    return rowToJob<DATA>(this.insert(fields));
  }

  private insert(fields: Partial<Record<Column, SqlValue>>): JobRow {
    const columns = ['id', ...Object.keys(fields)];
    const values = [newJobId(), ...Object.values(fields)] as SqlValue[];
    return this.get(`INSERT INTO ${this.table} (${columns.join(', ')}) VALUES (${placeholders(columns.length)}) RETURNING *`, values) as JobRow; // INSERT ... RETURNING always yields the row
  }

  /** Updates a row read in the same transaction (so it still exists). */
  private updateExisting(fields: Partial<Record<Column, SqlValue>>, id: SqlValue): JobRow {
    const row = this.update(fields, 'id = ?', [id]);
    if (row === undefined) throw new Error(`job ${String(id)} vanished inside its transaction`);
    return row;
  }

  private update(fields: Partial<Record<Column, SqlValue>>, whereSql: string, whereParams: SqlValue[]): JobRow | undefined {
    const columns = Object.keys(fields);
    return this.get(`UPDATE ${this.table} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE ${whereSql} RETURNING *`, [
      ...(Object.values(fields) as SqlValue[]),
      ...whereParams,
    ]);
  }
}

/** Agenda backend on a SQLite file. No notification channel: Agenda polls every `processEvery`. */
export class SqliteAgendaBackend implements AgendaBackend {
  readonly name = 'SQLite';
  readonly repository: SqliteJobRepository;
  readonly notificationChannel = undefined;
  /** The backend opens its own connection, so Agenda.stop()/drain() close it by default. */
  readonly ownsConnection = true;

  constructor(readonly options: SqliteAgendaBackendOptions) {
    this.repository = new SqliteJobRepository(options);
  }

  /** Opens the file and creates the table. Idempotent (Agenda's constructor calls it too). */
  connect(): Promise<void> {
    return this.repository.connect();
  }

  disconnect(): Promise<void> {
    return this.repository.disconnect();
  }
}
