import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryReadStore } from '../../../projections/store/memory.ts';
import { RemoteReadStore, StoreAlreadyServedError, serveReadStore } from '../../../projections/store/remote.ts';
import { readStoreContract } from './contract.ts';

// The embedded store of another process, reached over a Unix socket (here served in this process).
readStoreContract('remote (embedded store over a Unix socket)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'remote-store-'));
  const backing = new MemoryReadStore();
  const served = await serveReadStore(backing, join(dir, 'projector.sock'));
  const store = new RemoteReadStore(served.path);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await served.close();
      await backing.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('remote read store: socket and connection', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'remote-store-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves on a socket only its owner can open (0600), and refuses a second server on a live one', async () => {
    const path = join(dir, 'projector.sock');
    const served = await serveReadStore(new MemoryReadStore(), path);
    try {
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      let refused: unknown;
      try {
        await serveReadStore(new MemoryReadStore(), path);
      } catch (err) {
        refused = err;
      }
      expect(refused).to.be.instanceOf(StoreAlreadyServedError);
    } finally {
      await served.close();
    }
  });

  it('replaces the socket file a crashed server left behind', async () => {
    const path = join(dir, 'projector.sock');
    const first = await serveReadStore(new MemoryReadStore(), path);
    // A crash leaves the file; close() of a Unix socket server removes it, so copy the situation:
    await first.close();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, '');
    const second = await serveReadStore(new MemoryReadStore(), path);
    await second.close();
  });

  it('answers 503 store_unavailable while nothing serves, and reconnects once a server is back', async () => {
    const path = join(dir, 'projector.sock');
    const client = new RemoteReadStore(path);
    let failure: unknown;
    try {
      await client.ping();
    } catch (err) {
      failure = err;
    }
    expect(failure).to.include({ code: 'store_unavailable', status: 503 });
    const backing = new MemoryReadStore();
    await backing.collection('c').insertOne({ _id: 'a', at: new Date('2026-01-02T03:04:05.006Z'), re: /x+/i });
    const served = await serveReadStore(backing, path, { echo: async (...args) => args });
    try {
      const doc = await client.collection('c').findOne({ _id: 'a' });
      expect(doc?.at).to.be.instanceOf(Date);
      expect(doc?.re).to.be.instanceOf(RegExp);
      expect(await client.call('echo', 1, 'two')).to.deep.equal([1, 'two']);
      const err = await client.call('nope').then(
        () => null,
        (e: unknown) => e,
      );
      expect(String(err)).to.include('unknown read store call nope');
    } finally {
      await client.close();
      await served.close();
    }
  });

  it('drops a connection that sends what is not a frame, and keeps serving the others', async () => {
    const path = join(dir, 'projector.sock');
    const served = await serveReadStore(new MemoryReadStore(), path);
    const { connect } = await import('node:net');
    const rogue = connect(path);
    const dropped = new Promise<void>((resolve) => rogue.once('close', () => resolve()));
    rogue.on('error', () => undefined);
    // A length of 3 followed by three bytes that are no V8 serialization.
    rogue.write(Buffer.from([0, 0, 0, 3, 0xff, 0xff, 0xff]));
    await dropped;
    // A well-formed frame that is no request.
    const { serialize } = await import('node:v8');
    const odd = connect(path);
    const oddDropped = new Promise<void>((resolve) => odd.once('close', () => resolve()));
    odd.on('error', () => undefined);
    const body = serialize(42);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length, 0);
    odd.write(Buffer.concat([head, body]));
    await oddDropped;
    const client = new RemoteReadStore(path);
    try {
      await client.ping();
    } finally {
      await client.close();
      await served.close();
    }
  });

  it('fails the calls in flight with store_unavailable when the server goes away', async () => {
    const path = join(dir, 'projector.sock');
    let release: () => void = () => undefined;
    const served = await serveReadStore(new MemoryReadStore(), path, {
      hang: () => new Promise((resolve) => (release = () => resolve(null))),
    });
    const client = new RemoteReadStore(path);
    await client.ping();
    const pending = client.call('hang').then(
      () => null,
      (e: unknown) => e,
    );
    await served.close();
    expect(await pending).to.include({ code: 'store_unavailable' });
    release();
    await client.close();
  });
});
