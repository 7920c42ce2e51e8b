import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OUTBOX_FILE, OutboxTransport } from '../../workers/humans/mail/transport.ts';
import { readOutbox } from '../helpers/mail.ts';

/** The outbox transport (the embedded mail port): one line of JSON per mail in a private outbox.jsonl. */
describe('mail: the outbox transport', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'agent-network-outbox-test-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const mail = (i: number) => ({
    mail_id: `mail_${i}`,
    from: 'no-reply@example.com',
    to: `m${i}@example.com`,
    subject: `S ${i}`,
    text: `T ${i}\nsecond line "quoted"`,
    html: `<p>H ${i}</p>`,
  });
  const lines = (dir: string) => readFileSync(join(dir, OUTBOX_FILE), 'utf8').split('\n');

  it('writes 100 mails sent at once, each one whole line under its id, in a private folder (0700) and file (0600)', async () => {
    const dir = join(root, 'outbox');
    const t = new OutboxTransport(dir);
    const sent = await Promise.all(Array.from({ length: 100 }, (_, i) => t.send(mail(i))));
    expect(sent.map((s) => s.message_id)).to.deep.equal(Array.from({ length: 100 }, (_, i) => `mail_${i}`));
    const written = lines(dir);
    expect(written).to.have.length(101);
    expect(written[100]).to.equal('');
    expect(statSync(dir).mode & 0o777).to.equal(0o700);
    expect(statSync(join(dir, OUTBOX_FILE)).mode & 0o777).to.equal(0o600);
    written.slice(0, 100).forEach((line, i) => expect(JSON.parse(line)).to.include(mail(i)).and.to.have.property('created_at'));
  });

  it('appends mails sent one after another, in the order sent', async () => {
    const dir = join(root, 'outbox');
    const t = new OutboxTransport(dir);
    for (let i = 0; i < 5; i++) await t.send(mail(i));
    expect(readOutbox(dir).map((m) => m.mail_id)).to.deep.equal(['mail_0', 'mail_1', 'mail_2', 'mail_3', 'mail_4']);
  });

  it('rejects a mail it cannot write (the folder is a file) and writes again once the folder can be made', async () => {
    const dir = join(root, 'blocked');
    writeFileSync(dir, 'not a folder');
    const t = new OutboxTransport(dir);
    let error: unknown = null;
    await t.send(mail(1)).catch((err: unknown) => (error = err));
    expect(error).to.be.instanceOf(Error);
    rmSync(dir);
    await t.send(mail(2));
    expect(readOutbox(dir).map((m) => m.mail_id)).to.deep.equal(['mail_2']);
  });

  it('makes the folder again when it was removed, and writes after close', async () => {
    const dir = join(root, 'again');
    const t = new OutboxTransport(dir);
    await t.send(mail(1));
    rmSync(dir, { recursive: true });
    await t.send(mail(2));
    t.close();
    await t.send(mail(3));
    expect(readOutbox(dir).map((m) => m.mail_id)).to.deep.equal(['mail_2', 'mail_3']);
  });

  it("the readers' helper skips a last line still being written and lists a re-sent mail once", async () => {
    const dir = join(root, 'partial');
    const t = new OutboxTransport(dir);
    await t.send(mail(1));
    await t.send(mail(2));
    await t.send(mail(1));
    writeFileSync(join(dir, OUTBOX_FILE), '{"mail_id":"mail_9","to":', { flag: 'a' });
    expect(readOutbox(dir).map((m) => m.mail_id)).to.deep.equal(['mail_1', 'mail_2']);
  });
});
