// The start memory check of the embedded read store: a start its heap cannot hold is refused
// before it loads anything, with the figure and what to do; and the heap the start is given is
// sized from the machine.
import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../api/config.ts';
import { cgroupMemoryLimit, heapLimitFlag, machineMemory } from '../../api/heap-limit.ts';
import { closeServices, openServices } from '../../api/services.ts';
import { DEFAULT_BYTES_PER_EVENT, estimateStartMemory, HEAP_PER_SNAPSHOT_BYTE, StartRefused } from '../../api/start-memory.ts';
import { peekSnapshot, writeSnapshot } from '../../projections/store/snapshot.ts';
import { fill } from '../bench/replay.ts';
import { bootServerProcess, startServerProcess } from '../helpers/process.ts';

const GB = 1e9;
const GiB = 2 ** 30;
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';

describe('start memory check (embedded read store)', () => {
  describe('the estimate', () => {
    it('refuses 10 million events on the default heap, saying how much they need and the heap that would hold them', () => {
      const e = estimateStartMemory({ heapLimit: 4.3 * GB, heapUsed: 0.1 * GB, head: 10_000_000, snapshot: null, machineMemory: 24 * GiB });
      expect(e.fits).to.equal(false);
      expect(e.basis).to.equal('default');
      expect(e.needed).to.equal(10_000_000 * DEFAULT_BYTES_PER_EVENT);
      expect(e.available).to.be.closeTo(4.3 * GB * 0.8 - 0.1 * GB, 1);
      // (0.1 GB in use + 11 GB) / 0.7, in MiB: within the 70% of 24 GiB the machine allows.
      expect(e.suggestedHeapMb).to.equal(Math.ceil((0.1 * GB + 11 * GB) / 0.7 / 2 ** 20));
      expect(e.message).to.include('10000000-event log would need about 11000 MB of heap');
      expect(e.message).to.include('the heap limit of 4300 MB leaves them 3340 MB');
      expect(e.message).to.include(`NODE_OPTIONS=--max-old-space-size=${e.suggestedHeapMb}`);
      expect(e.message).to.include('MONGODB_URL');
      expect(e.message).to.include('START_MEMORY_CHECK=0');
    });

    it("takes this network's own bytes per event from its snapshot, used or not", () => {
      // A posts-heavy network: its 2 GB snapshot of 1 million events means 3.4 KB of heap per event.
      const snapshot = { bytes: 2 * GB, position: 1_000_000 };
      const e = estimateStartMemory({ heapLimit: 16 * GB, heapUsed: 0.1 * GB, head: 3_000_000, snapshot, machineMemory: 24 * GiB });
      expect(e.basis).to.equal('snapshot');
      expect(e.bytesPerEvent).to.equal(Math.ceil((2 * GB * HEAP_PER_SNAPSHOT_BYTE) / 1_000_000));
      expect(e.needed).to.equal(3_000_000 * e.bytesPerEvent);
      expect(e.fits).to.equal(true);
      expect(e.message).to.equal(null);
      // The same network at 10 million events outgrows a 24 GB machine: MongoDB or a larger machine.
      const big = estimateStartMemory({ heapLimit: 16 * GB, heapUsed: 0.1 * GB, head: 10_000_000, snapshot, machineMemory: 24 * GiB });
      expect(big.fits).to.equal(false);
      expect(big.suggestedHeapMb).to.equal(null);
      expect(big.message).to.include('from the 2000 MB snapshot of its first 1000000 events');
      expect(big.message).to.include("This machine's 25770 MB cannot hold them with room to spare: keep the read models in MongoDB (MONGODB_URL)");
      expect(big.message).not.to.include('--max-old-space-size');
    });

    it('uses the benchmark figure while the snapshot covers too few events to tell', () => {
      const e = estimateStartMemory({
        heapLimit: 4.3 * GB,
        heapUsed: 0.1 * GB,
        head: 20_000,
        snapshot: { bytes: 50e6, position: 5_000 },
        machineMemory: 24 * GiB,
      });
      expect(e.basis).to.equal('default');
      expect(e.fits).to.equal(true);
    });

    it('lets 10 million mixed events start on the heap sized from a 24 GB machine', () => {
      const flag = heapLimitFlag(24 * GiB, undefined, 4.3 * GB);
      const mib = Number(/^--max-old-space-size=(\d+)$/.exec(flag ?? '')?.[1]);
      expect(mib).to.equal(Math.floor(24 * 1024 * 0.7));
      const e = estimateStartMemory({ heapLimit: mib * 2 ** 20, heapUsed: 0.1 * GB, head: 10_000_000, snapshot: null, machineMemory: 24 * GiB });
      expect(e.fits).to.equal(true);
    });
  });

  describe('the heap sized from the machine', () => {
    it('is 70% of the memory the process may use, unless NODE_OPTIONS sets it or it would not raise the default', () => {
      expect(heapLimitFlag(16 * GiB, '', 4.3 * GB)).to.equal(`--max-old-space-size=${Math.floor(16 * 1024 * 0.7)}`);
      expect(heapLimitFlag(16 * GiB, '--max-old-space-size=2048', 2 * GB)).to.equal(null);
      expect(heapLimitFlag(16 * GiB, '--enable-source-maps --max-old-space-size 2048', 2 * GB)).to.equal(null);
      expect(heapLimitFlag(16 * GiB, '--max-semi-space-size=64', 4.3 * GB)).to.not.equal(null);
      expect(heapLimitFlag(4 * GiB, undefined, 4.3 * GB)).to.equal(null);
    });

    it("takes a container's memory limit when it is lower than the machine's", () => {
      const files = (map: Record<string, string>) => (path: string) => {
        if (path in map) return map[path];
        throw new Error('ENOENT');
      };
      expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory.max': '8589934592\n' }))).to.equal(8 * GiB);
      expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).to.equal(null);
      expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '4294967296' }))).to.equal(4 * GiB);
      // cgroup v1's "no limit" is 2^63 rounded down to a page.
      expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' }))).to.equal(null);
      expect(cgroupMemoryLimit(files({}))).to.equal(null);
      expect(machineMemory(24 * GiB, 8 * GiB)).to.equal(8 * GiB);
      expect(machineMemory(24 * GiB, null)).to.equal(24 * GiB);
      expect(machineMemory(24 * GiB, 64 * GiB)).to.equal(24 * GiB);
    });
  });

  it("reads a snapshot's size and position without loading it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-network-peek-'));
    try {
      const path = join(dir, 'read-models.snapshot');
      expect(peekSnapshot(path)).to.equal(null);
      const docs = Array.from({ length: 100 }, (_, i) => ({ _id: `d${i}`, n: i }));
      writeSnapshot(path, { fingerprint: 'f'.repeat(64), position: 4242, eventId: 'e1', createdAt: '2026-03-10T09:30:00.000Z' }, [
        { name: 'things', indexes: [], docs, entries: [] },
      ]);
      expect(peekSnapshot(path)).to.deep.equal({ bytes: statSync(path).size, position: 4242 });
      writeFileSync(path, 'not a snapshot at all');
      expect(peekSnapshot(path)).to.equal(null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is on unless START_MEMORY_CHECK=0', () => {
    expect(loadConfig({}).startMemoryCheck).to.equal(true);
    expect(loadConfig({ START_MEMORY_CHECK: '0' }).startMemoryCheck).to.equal(false);
    expect(() => loadConfig({ START_MEMORY_CHECK: 'maybe' })).to.throw(/START_MEMORY_CHECK/);
  });

  describe('a start', function () {
    this.timeout(300_000);
    const EVENTS = 150_000;
    let dataDir: string;

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'agent-network-start-memory-'));
      await fill(join(dataDir, 'events.sqlite'), 'mix', EVENTS);
    });
    after(() => rmSync(dataDir, { recursive: true, force: true }));

    it('that the heap cannot hold is refused before it loads anything, and starts with the check off or a larger heap', async () => {
      const config = loadConfig({ READ_STORE: 'memory', DATA_DIR: dataDir, SECRET_KEY: SECRET });
      const logger = pino({ level: 'silent' });
      // 100 MB of heap leaves the read models 80 MB less the 30 MB in use: not the 165 MB they need.
      const small = () => ({ heap_size_limit: 100e6, used_heap_size: 30e6 });
      let refused: unknown = null;
      try {
        await openServices(config, { logger, heapStatistics: small, machineMemory: 24 * GiB });
      } catch (err) {
        refused = err;
      }
      expect(refused).to.be.instanceOf(StartRefused);
      expect((refused as Error).message).to.include(`${EVENTS}-event log would need about 165 MB of heap`);
      expect((refused as Error).message).to.match(/NODE_OPTIONS=--max-old-space-size=\d+/);

      // The refused start closed the log again: the next one opens it and catches up.
      const anyway = await openServices(
        loadConfig({ READ_STORE: 'memory', DATA_DIR: dataDir, SECRET_KEY: SECRET, START_MEMORY_CHECK: '0', READ_MODEL_SNAPSHOTS: '0' }),
        {
          logger,
          heapStatistics: small,
          saveSnapshot: false,
        },
      );
      expect(anyway.runner.position).to.equal(EVENTS);
      await closeServices(anyway);
      const roomy = await openServices(config, { logger, heapStatistics: () => ({ heap_size_limit: 1e9, used_heap_size: 30e6 }), saveSnapshot: false });
      expect(roomy.runner.position).to.equal(EVENTS);
      await closeServices(roomy);
    });

    it('under npm start gets a heap sized from the machine, and logs its estimate', async () => {
      const fresh = mkdtempSync(join(tmpdir(), 'agent-network-start-heap-'));
      try {
        const server = await bootServerProcess(fresh, { READ_STORE: 'memory' }, 'npm start');
        const line = server.line('start memory estimate');
        await server.stop('SIGTERM');
        expect(line).to.include({ events: 0, bytes_per_event_from: 'benchmark', needed_mb: 0, suggested_heap_mb: null });
        const share = (line?.heap_limit_mb as number) / (line?.machine_mb as number);
        // 70% of the machine's memory, as --max-old-space-size counts it (V8 adds its young generation).
        expect(share).to.be.within(0.7, 0.72);
      } finally {
        rmSync(fresh, { recursive: true, force: true });
      }
    });

    it('as a real process: exits 1 at once with the figure and what to do on stderr', async () => {
      let failure: unknown = null;
      try {
        // 160 MB of heap: the 150,000 events need about 165 MB, more than the limit leaves.
        const server = await startServerProcess(dataDir, { READ_STORE: 'memory', NODE_OPTIONS: '--max-old-space-size=160' });
        await server.stop('SIGKILL');
      } catch (err) {
        failure = err;
      }
      expect(failure, 'the start was refused').to.be.instanceOf(Error);
      const { code, stderr } = failure as Error & { code: number | null; stderr: string };
      expect(code).to.equal(1);
      expect(stderr).to.match(/^start refused: the in-memory read models of this 150000-event log would need about 165 MB of heap/);
      expect(stderr).to.include('the heap limit of');
      expect(stderr).to.match(/NODE_OPTIONS=--max-old-space-size=\d+/);
    });
  });
});
