import { expect } from 'chai';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secureDataDir } from '../../api/data-dir.ts';
import { waitForMails } from '../helpers/mail.ts';
import { startTestService } from '../helpers/service.ts';
import { png } from '../helpers/images.ts';

// Issue 21, defect 7: DATA_DIR holds owner e-mails (the event log), the server secret, key hashes
// (snapshots), images and mail. It is created 0700 and every file in it is 0600; a DATA_DIR left
// with looser modes (an earlier release) is tightened at start.

const PNG = png();

/** Every entry under `dir` (itself included) with its permission bits, e.g. `events.sqlite 600`. */
function modes(dir: string): string[] {
  const out: string[] = [];
  const visit = (path: string, rel: string) => {
    const st = lstatSync(path);
    out.push(`${rel}${st.isDirectory() ? '/' : ''} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(path).sort()) visit(join(path, name), rel === '.' ? name : `${rel}/${name}`);
  };
  visit(dir, '.');
  return out;
}

const loose = (dir: string) => modes(dir).filter((m) => !/ (600|700)$/.test(m));

function multipart(data: Buffer) {
  const boundary = '----datadirtest';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { rawBody: body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('api: DATA_DIR is private (0700, every file 0600)', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'agent-network-datadir-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('creates DATA_DIR 0700 and writes the log and the read models (with -wal and -shm), the secret, blobs, mail and the snapshot 0600', async () => {
    const dataDir = join(root, 'fresh', 'data');
    // No SECRET_KEY: the server secret is generated into DATA_DIR/secret.key. The SQLite read store's file first.
    const svc = await startTestService({ SECRET_KEY: '', READ_STORE: 'sqlite' }, { dataDir });
    try {
      const email = `datadir.${process.pid}@example.com`;
      const a = await svc.register({ owner_email: email });
      const up = await svc.req('POST', '/api/feed/upload-image', { apiKey: a.api_key, ...multipart(PNG) });
      expect(up.status).to.equal(200);
      expect((await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/request-otp`)).status).to.equal(200);
      await waitForMails(join(dataDir, 'outbox'), email);
      const running = modes(dataDir);
      expect(running).to.include.members([
        './ 700',
        'events.sqlite 600',
        'events.sqlite-wal 600',
        'events.sqlite-shm 600',
        'read-models.sqlite 600',
        'read-models.sqlite-wal 600',
        'read-models.sqlite-shm 600',
        'secret.key 600',
      ]);
      expect(running.some((m) => m.startsWith('blobs/ '))).to.equal(true);
      expect(running.some((m) => m.startsWith('outbox/ '))).to.equal(true);
      expect(loose(dataDir), 'while running').to.deep.equal([]);
    } finally {
      await svc.stop({ keepData: true });
    }
    expect(modes(dataDir)).to.include('read-models.sqlite 600');
    expect(loose(dataDir), 'after a clean stop').to.deep.equal([]);
    // The in-memory read store writes its snapshot 0600 too.
    const memory = await startTestService({ SECRET_KEY: '', READ_STORE: 'memory' }, { dataDir });
    await memory.register();
    await memory.stop({ keepData: true });
    expect(modes(dataDir)).to.include('read-models.snapshot 600');
    expect(loose(dataDir), "after the memory store's clean stop").to.deep.equal([]);
  });

  it('tightens an existing DATA_DIR left with looser modes (0755 folders, 0644 files) at start', async () => {
    const dataDir = join(root, 'existing');
    mkdirSync(join(dataDir, 'blobs'), { recursive: true });
    writeFileSync(join(dataDir, 'blobs', 'old.png'), PNG);
    writeFileSync(join(dataDir, 'notes.txt'), 'anything an operator left here\n');
    chmodSync(join(dataDir, 'blobs', 'old.png'), 0o644);
    chmodSync(join(dataDir, 'notes.txt'), 0o666);
    chmodSync(join(dataDir, 'blobs'), 0o755);
    chmodSync(dataDir, 0o755);
    expect(loose(dataDir)).to.have.length(4);
    const svc = await startTestService({}, { dataDir });
    try {
      expect(loose(dataDir)).to.deep.equal([]);
      expect(modes(dataDir)).to.include.members(['./ 700', 'blobs/ 700', 'blobs/old.png 600', 'notes.txt 600', 'events.sqlite 600']);
      await svc.register();
    } finally {
      await svc.stop({ keepData: true });
    }
    // A database left 0644 by an earlier release (and its -wal/-shm) is tightened too.
    for (const f of readdirSync(dataDir)) if (f.startsWith('events.sqlite')) chmodSync(join(dataDir, f), 0o644);
    const again = await startTestService({}, { dataDir });
    try {
      expect(loose(dataDir)).to.deep.equal([]);
    } finally {
      await again.stop({ keepData: true });
    }
  });

  it('reports what it tightened, and leaves symbolic links alone', () => {
    const dataDir = join(root, 'links');
    mkdirSync(dataDir, { mode: 0o750 });
    const outside = join(root, 'outside.txt');
    writeFileSync(outside, 'x', { mode: 0o644 });
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(dataDir, 'link'));
    const r = secureDataDir(dataDir);
    expect(r).to.deep.equal({ tightened: ['.'], failed: [] });
    expect(lstatSync(outside).mode & 0o777).to.equal(0o644);
  });
});
