// The embedded read store of another process, over a local socket. The embedded store lives in the
// projector process's memory; an API (or worker) process of the same data directory reaches it
// through this adapter, which implements the same port (every method is already async). The socket
// is a Unix domain socket in DATA_DIR (mode 0700, the socket 0600): only the data directory's owner
// can connect, as only they can read the log itself.
//
// Frames: a 4-byte big-endian length, then a value in V8's serialization format (structured clone:
// dates, regular expressions and nested documents cross as they are). A request is
// [id, method, args], an answer [id, ok, value-or-error].
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { deserialize, serialize } from 'node:v8';
import { StoreUnavailableError } from '../../events/store/port.ts';
import {
  DuplicateKeyError,
  typedCollection,
  type Collection,
  type CollectionSpec,
  type CountOptions,
  type Doc,
  type DocOf,
  type Filter,
  type FindOptions,
  type QueryPlan,
  type ReadStore,
  type Update,
  type UpdateResult,
} from './port.ts';
import { isRecord } from './records.ts';

type Request = [id: number, method: string, args: unknown[]];
type Answer = [id: number, ok: boolean, value: unknown];
interface WireError {
  name: string;
  message: string;
  code?: unknown;
  status?: unknown;
}

function isRequest(value: unknown): value is Request {
  return Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string' && Array.isArray(value[2]);
}

function isAnswer(value: unknown): value is Answer {
  return Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'boolean';
}

/** The largest frame either side accepts (a find over a large collection can be big). */
const MAX_FRAME = 512 * 1024 * 1024;

/** Splits a byte stream into frames and hands each decoded value to `onValue`. */
function frames(socket: Socket, onValue: (value: unknown) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4) {
      const length = buffered.readUInt32BE(0);
      if (length > MAX_FRAME) {
        socket.destroy(new Error(`read store socket: frame of ${length} bytes refused`));
        return;
      }
      if (buffered.length < 4 + length) return;
      const body = buffered.subarray(4, 4 + length);
      buffered = buffered.subarray(4 + length);
      let value: unknown;
      try {
        value = deserialize(body);
      } catch (err) {
        // Not a frame of this protocol: the connection is dropped, the process stays up.
        socket.destroy(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      onValue(value);
    }
  });
}

function send(socket: Socket, value: unknown): void {
  const body = serialize(value);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  socket.write(Buffer.concat([head, body]));
}

function toWire(err: unknown): WireError {
  if (err instanceof Error) {
    return { name: err.name, message: err.message, code: 'code' in err ? err.code : undefined, status: 'status' in err ? err.status : undefined };
  }
  return { name: 'Error', message: String(err) };
}

/** An error the other process threw, with its `code` and `status` (codes survive the boundary, `instanceof` does not). */
export class RemoteStoreError extends Error {
  constructor(
    wire: WireError,
    readonly code: unknown = wire.code,
    readonly status: unknown = wire.status,
  ) {
    super(wire.message);
    this.name = wire.name;
  }
}

function fromWire(value: unknown): Error {
  const wire: WireError = isRecord(value)
    ? { name: String(value.name), message: String(value.message), code: value.code, status: value.status }
    : { name: 'Error', message: String(value) };
  if (wire.code === 'duplicate_key') return new DuplicateKeyError(wire.message);
  return new RemoteStoreError(wire);
}

/** Extra calls the serving process answers besides the port's (the projector: read-your-writes waits). */
export type ExtraCalls = Record<string, (...args: unknown[]) => Promise<unknown>>;

export interface ServedStore {
  readonly path: string;
  close(): Promise<void>;
}

/** Is a process listening on the socket at `path`? */
function answering(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** Thrown when another live process already serves the read store of this data directory. */
export class StoreAlreadyServedError extends Error {
  constructor(path: string) {
    super(`another process already serves the read store at ${path} (one projector per data directory)`);
    this.name = 'StoreAlreadyServedError';
  }
}

/** Throws StoreAlreadyServedError when a live process answers on the socket at `path` (checked before a long catch-up too). */
export async function assertNotServed(path: string): Promise<void> {
  if (existsSync(path) && (await answering(path))) throw new StoreAlreadyServedError(path);
}

/** The port's calls as the serving process answers them: a method name, its arguments, its answer. */
function portCalls(store: ReadStore) {
  return {
    ping: () => store.ping(),
    ensureCollection: (spec: CollectionSpec) => store.ensureCollection(spec),
    dropCollection: (name: string) => store.dropCollection(name),
    swapCollections: (pairs: Array<[string, string]>) => store.swapCollections(pairs),
    listCollections: () => store.listCollections(),
    findOne: (name: string, filter: Filter, options?: FindOptions) => store.collection(name).findOne(filter, options),
    find: (name: string, filter: Filter, options?: FindOptions) => store.collection(name).find(filter, options),
    count: (name: string, filter?: Filter, options?: CountOptions) => store.collection(name).count(filter, options),
    insertOne: (name: string, doc: Doc) => store.collection(name).insertOne(doc),
    updateOne: (name: string, filter: Filter, update: Update, options?: { upsert?: boolean }) => store.collection(name).updateOne(filter, update, options),
    updateMany: (name: string, filter: Filter, update: Update) => store.collection(name).updateMany(filter, update),
    deleteOne: (name: string, filter: Filter) => store.collection(name).deleteOne(filter),
    deleteMany: (name: string, filter: Filter) => store.collection(name).deleteMany(filter),
    applyAt: (name: string, id: string, position: number, update: Update) => store.collection(name).applyAt(id, position, update),
    explain: (name: string, filter: Filter, options?: FindOptions) => store.collection(name).explain(filter, options),
  };
}
type PortCalls = ReturnType<typeof portCalls>;
type PortMethod = keyof PortCalls;

function isPortMethod(calls: PortCalls, method: string): method is PortMethod {
  return Object.hasOwn(calls, method);
}

/**
 * Serves `store` on the Unix socket at `path`. A socket file left by a crashed process is replaced;
 * one that a live process answers on is not (StoreAlreadyServedError): one projector per data
 * directory, the embedded counterpart of the MongoDB lease.
 */
export async function serveReadStore(store: ReadStore, path: string, extra: ExtraCalls = {}): Promise<ServedStore> {
  await assertNotServed(path);
  if (existsSync(path)) unlinkSync(path);
  const sockets = new Set<Socket>();
  const calls = portCalls(store);
  const call = async (method: string, args: unknown[]): Promise<unknown> => {
    const extraCall = extra[method];
    if (extraCall !== undefined) return extraCall(...args);
    if (!isPortMethod(calls, method)) throw new Error(`unknown read store call ${method}`);
    // The wire carries the arguments the client's typed `port` call sent (RemoteReadStore.port):
    // the serving side takes them on trust, as the client takes the answers.
    const portCall = calls[method] as (...wire: unknown[]) => Promise<unknown>;
    return portCall(...args);
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    frames(socket, (value) => {
      if (!isRequest(value)) {
        socket.destroy();
        return;
      }
      const [id, method, args] = value;
      call(method, args).then(
        (result) => {
          if (!socket.destroyed) send(socket, [id, true, result] satisfies Answer);
        },
        (err: unknown) => {
          if (!socket.destroyed) send(socket, [id, false, toWire(err)] satisfies Answer);
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return {
    path,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

interface Pending {
  /** The connection the call went out on: only its loss fails the call. */
  socket: Socket;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/**
 * The read store served by another process (serveReadStore). One connection, opened on the first
 * call and again after it drops (the projector restarted); calls in flight when it drops fail with
 * StoreUnavailableError (503).
 */
export class RemoteReadStore implements ReadStore {
  readonly name = 'remote';
  #socket: Socket | null = null;
  #connecting: Promise<Socket> | null = null;
  #next = 1;
  readonly #pending = new Map<number, Pending>();
  #closed = false;

  constructor(readonly path: string) {}

  #connect(): Promise<Socket> {
    if (this.#socket !== null && !this.#socket.destroyed) return Promise.resolve(this.#socket);
    this.#connecting ??= new Promise<Socket>((resolve, reject) => {
      const socket = connect(this.path);
      socket.once('connect', () => {
        this.#connecting = null;
        this.#socket = socket;
        socket.off('error', reject);
        socket.on('error', () => socket.destroy());
        resolve(socket);
      });
      socket.once('error', (err) => {
        this.#connecting = null;
        reject(new StoreUnavailableError(`read store at ${this.path} unreachable: ${err.message}`, { cause: err }));
      });
      socket.on('close', () => {
        if (this.#socket === socket) this.#socket = null;
        const lost = new StoreUnavailableError(`read store at ${this.path}: connection lost`);
        for (const [id, p] of this.#pending) {
          if (p.socket !== socket) continue;
          this.#pending.delete(id);
          p.reject(lost);
        }
      });
      frames(socket, (value) => {
        if (!isAnswer(value)) return;
        const [id, ok, result] = value;
        const p = this.#pending.get(id);
        if (p === undefined) return;
        this.#pending.delete(id);
        if (ok) p.resolve(result);
        else p.reject(fromWire(result));
      });
    });
    return this.#connecting;
  }

  /** Calls the port's `method` in the serving process, typed by its signature there (portCalls). */
  async port<M extends PortMethod>(method: M, ...args: Parameters<PortCalls[M]>): Promise<Awaited<ReturnType<PortCalls[M]>>> {
    // The serving process answers with what the same method returned there.
    return (await this.call(method, ...args)) as Awaited<ReturnType<PortCalls[M]>>;
  }

  /** Calls `method` in the serving process (a port method or one of its extra calls). */
  async call(method: string, ...args: unknown[]): Promise<unknown> {
    if (this.#closed) throw new StoreUnavailableError('read store closed');
    const socket = await this.#connect();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { socket, resolve, reject });
      send(socket, [id, method, args] satisfies Request);
    });
  }

  collection<N extends string>(name: N): Collection<DocOf<N>> {
    return typedCollection(new RemoteCollection(this, name));
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    await this.port('ensureCollection', spec);
  }

  async dropCollection(name: string): Promise<void> {
    await this.port('dropCollection', name);
  }

  async swapCollections(pairs: Array<[from: string, to: string]>): Promise<void> {
    await this.port('swapCollections', pairs);
  }

  async listCollections(): Promise<string[]> {
    return this.port('listCollections');
  }

  async ping(): Promise<void> {
    await this.port('ping');
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#socket?.destroy();
    this.#socket = null;
  }
}

class RemoteCollection implements Collection {
  constructor(
    private readonly store: RemoteReadStore,
    readonly name: string,
  ) {}

  async findOne(filter: Filter, options?: FindOptions): Promise<Doc | null> {
    return this.store.port('findOne', this.name, filter, options);
  }

  async find(filter: Filter, options?: FindOptions): Promise<Doc[]> {
    return this.store.port('find', this.name, filter, options);
  }

  async count(filter?: Filter, options?: CountOptions): Promise<number> {
    return this.store.port('count', this.name, filter, options);
  }

  async insertOne(doc: Doc): Promise<void> {
    await this.store.port('insertOne', this.name, doc);
  }

  async updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult> {
    return this.store.port('updateOne', this.name, filter, update, options);
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.store.port('updateMany', this.name, filter, update);
  }

  async deleteOne(filter: Filter): Promise<number> {
    return this.store.port('deleteOne', this.name, filter);
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.store.port('deleteMany', this.name, filter);
  }

  async applyAt(id: string, position: number, update: Update): Promise<boolean> {
    return this.store.port('applyAt', this.name, id, position, update);
  }

  async explain(filter: Filter, options?: FindOptions): Promise<QueryPlan> {
    return this.store.port('explain', this.name, filter, options);
  }
}
