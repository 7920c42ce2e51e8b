import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutboxTransport } from '../../workers/humans/mail/transport.ts';

/** The outbox transport (the embedded mail port): one private JSON file per mail, written atomically. */
describe('mail: the outbox transport', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'agent-network-outbox-test-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const mail = (i: number) => ({
    mail_id: `mail_${i}`,
    from: 'no-reply@example.com',
    to: `m${i}@example.com`,
    subject: `S ${i}`,
    text: `T ${i}`,
    html: `<p>H ${i}</p>`,
  });

  it('writes 100 mails sent at once, each whole under its id, in a private folder (0700) as private files (0600)', async () => {
    const dir = join(root, 'outbox');
    const t = new OutboxTransport(dir);
    try {
      const sent = await Promise.all(Array.from({ length: 100 }, (_, i) => t.send(mail(i))));
      expect(sent.map((s) => s.message_id)).to.deep.equal(Array.from({ length: 100 }, (_, i) => `mail_${i}`));
      const files = readdirSync(dir).sort();
      expect(files).to.have.length(100);
      expect(files.every((f) => f.endsWith('.json'))).to.equal(true);
      expect(statSync(dir).mode & 0o777).to.equal(0o700);
      for (const i of [0, 42, 99]) {
        const file = join(dir, `mail_${i}.json`);
        expect(statSync(file).mode & 0o777).to.equal(0o600);
        expect(JSON.parse(readFileSync(file, 'utf8')))
          .to.include(mail(i))
          .and.to.have.property('created_at');
      }
    } finally {
      t.close();
    }
  });

  it('rejects a mail it cannot write (the folder is a file) and writes again once the folder can be made', async () => {
    const dir = join(root, 'blocked');
    writeFileSync(dir, 'not a folder');
    const t = new OutboxTransport(dir);
    try {
      let error: unknown = null;
      await t.send(mail(1)).catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(Error);
      rmSync(dir);
      await t.send(mail(2));
      expect(readdirSync(dir)).to.deep.equal(['mail_2.json']);
    } finally {
      t.close();
    }
  });

  it('writes again after close', async () => {
    const dir = join(root, 'again');
    const t = new OutboxTransport(dir);
    await t.send(mail(1));
    t.close();
    await t.send(mail(2));
    t.close();
    expect(readdirSync(dir).sort()).to.deep.equal(['mail_1.json', 'mail_2.json']);
  });
});
