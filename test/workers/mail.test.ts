import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { renderMail } from '../../workers/humans/mail/templates.ts';
import { MAIL_JOB } from '../../workers/humans/mail/worker.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

interface Received {
  to: string[];
  raw: string;
}

/** A real SMTP server in-process; `reject` answers the next n messages with a temporary failure. */
async function smtpServer() {
  const received: Received[] = [];
  const state = { reject: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.reject > 0) {
          state.reject--;
          const err = new Error('try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          callback(err);
          return;
        }
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return { received, state, url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function until<T>(fn: () => T | undefined | null | false, timeoutMs = 120_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The mail's delivery events, once it has been sent (the event follows the SMTP answer). */
async function mailHistory(svc: TestService, mailId: string) {
  const end = Date.now() + 15_000;
  for (;;) {
    const events = await svc.running.services.log.readStream(`mail-${mailId}`);
    if (events.some((e) => e.type === 'MailSent') || Date.now() > end) return events;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The mail jobs of one mail in the service's job store. */
const mailJobs = (svc: TestService, mailId: string) => {
  const workers = svc.running.workers;
  if (!workers) throw new Error('the test service runs no workers');
  return workers.agenda.queryJobs({ name: MAIL_JOB, data: { mail_id: mailId } });
};

/** The mail's jobs once none is left (a job is removed just after its mail is recorded sent), or what is left after the bound. */
async function mailJobsSettled(svc: TestService, mailId: string) {
  for (let i = 0; ; i++) {
    const jobs = await mailJobs(svc, mailId);
    if (jobs.total === 0 || i >= 2000) return jobs;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Undoes quoted-printable soft breaks and escapes, enough to read a code out of a raw message. */
const unQp = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

describe('workers: mail over SMTP (nodemailer) and the outbox', function () {
  this.timeout(300_000);
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  let svc: TestService;

  before(async () => {
    smtp = await smtpServer();
    svc = await startTestService({ SMTP_URL: smtp.url });
  });
  after(async () => {
    await svc.stop();
    await smtp.close();
  });

  it('delivers the sign-up code through a real SMTP server and records MailSent', async () => {
    const email = `smtp.${Date.now()}@example.com`;
    const res = await svc.req('POST', '/api/auth/send-verification-otp', { body: { email } });
    expect(res.status).to.equal(200);
    const msg = await until(() => smtp.received.find((m) => m.to.includes(email)));
    const raw = unQp(msg.raw);
    expect(raw).to.match(/Subject: Your Agent Network sign-up code/);
    const code = /code is: (\d{6})/.exec(raw)?.[1];
    expect(code).to.match(/^\d{6}$/);
    expect(raw).to.match(/Content-Type: text\/html/);
    expect(raw).to.match(/Content-Type: text\/plain/);
    const s = svc.running.services;
    const doc = await s.store.collection('mails').findOne({ to: email });
    expect(doc).to.not.equal(null);
    const outcome = await mailHistory(svc, String(doc?._id));
    expect(outcome.map((e) => e.type)).to.deep.equal(['MailSent']);
    expect(outcome[0].data).to.include({ transport: 'smtp', attempt: 1 });
    // A first attempt that succeeds is made in process: it leaves no job in the job store.
    expect((await mailJobs(svc, String(doc?._id))).total).to.equal(0);
    // The code works with the sign-up endpoint.
    const ok = await svc.req('POST', '/api/auth/verify-email-otp', { body: { email, otp: code, password: 'long-enough-pw', full_name: 'Smtp User' } });
    expect(ok.status, ok.text).to.equal(200);
  });

  it('retries a temporary SMTP failure and records each attempt as an event', async () => {
    smtp.state.reject = 1;
    const email = `retry.${Date.now()}@example.com`;
    await svc.req('POST', '/api/auth/send-verification-otp', { body: { email } });
    await until(() => smtp.received.find((m) => m.to.includes(email)), 120_000);
    const s = svc.running.services;
    const doc = await s.store.collection('mails').findOne({ to: email });
    const history = await mailHistory(svc, String(doc?._id));
    expect(history.map((e) => e.type)).to.deep.equal(['MailSendFailed', 'MailSent']);
    expect(history[0].data).to.include({ attempt: 1, final: false });
    expect(history[1].data).to.include({ attempt: 2 });
    // The retry was the one job: removed once it had sent the mail.
    expect((await mailJobsSettled(svc, String(doc?._id))).total).to.equal(0);
  });
});

describe('mail templates', () => {
  it('escapes every user string in HTML and keeps subjects on one line', () => {
    const m = renderMail('claim_otp', { code: '123456', minutes: 10, agent_name: '<script>alert(1)</script>\r\nBcc: x@evil.test', agent_id: 'agt_1' });
    expect(m.html).to.not.contain('<script>');
    expect(m.html).to.contain('&#60;script&#62;');
    expect(m.subject).to.not.match(/[\r\n]/);
    expect(m.text).to.contain('123456');
    expect(m.html).to.contain('123456');
    const c = renderMail('contract_lifecycle', { contract_id: 'ctr_1', state: 'accepted', title: '"quoted" & <b>', note: "it's" });
    expect(c.html).to.contain('&#34;quoted&#34; &#38; &#60;b&#62;');
  });
});

describe('workers: mail survives failures and restarts', function () {
  this.timeout(300_000);

  it('keeps a mail whose SMTP server is down and delivers it after a restart, recording every attempt', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { waitForMails, codeIn } = await import('../helpers/mail.ts');
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-test-'));
    const outbox = mkdtempSync(join(tmpdir(), 'agent-network-outbox-'));
    const email = `restart.${Date.now()}@example.com`;
    // Port 1: nothing listens, every attempt fails at once.
    const down = await startTestService({ SMTP_URL: 'smtp://127.0.0.1:1' }, { dataDir });
    expect((await down.req('POST', '/api/auth/send-verification-otp', { body: { email } })).status).to.equal(200);
    let doc = await down.running.services.store.collection('mails').findOne({ to: email });
    for (let i = 0; i < 200 && doc?.status !== 'retrying'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      doc = await down.running.services.store.collection('mails').findOne({ to: email });
    }
    expect(doc?.status).to.equal('retrying');
    // The failed first attempt became one retry job, made after attempt 1.
    let jobs = await mailJobs(down, String(doc?._id));
    expect(jobs.total).to.equal(1);
    expect(jobs.jobs[0].data).to.include({ mail_id: doc?._id, after: 1 });
    // The retry (2 s later) fails too: Agenda keeps the one job for the next retry, none is lost or doubled.
    for (let i = 0; i < 2000 && Number(doc?.attempts) < 2; i++) {
      await new Promise((r) => setTimeout(r, 25));
      doc = await down.running.services.store.collection('mails').findOne({ to: email });
    }
    expect(doc).to.include({ status: 'retrying', attempts: 2 });
    jobs = await mailJobs(down, String(doc?._id));
    expect(jobs.total).to.equal(1);
    await down.stop({ keepData: true });

    const up = await startTestService({ MAIL_OUTBOX_DIR: outbox }, { dataDir });
    try {
      const [delivered] = await waitForMails(outbox, email, 1, 120_000);
      const history = await mailHistory(up, String(doc?._id));
      expect(history.map((e) => e.type)).to.deep.equal(['MailSendFailed', 'MailSendFailed', 'MailSent']);
      expect(history[2].data).to.include({ transport: 'outbox', attempt: 3 });
      expect((await mailJobsSettled(up, String(doc?._id))).total).to.equal(0);
      const ok = await up.req('POST', '/api/auth/verify-email-otp', {
        body: { email, otp: codeIn(delivered), password: 'long-enough-pw', full_name: 'Patient User' },
      });
      expect(ok.status, ok.text).to.equal(200);
    } finally {
      await up.stop();
      rmSync(outbox, { recursive: true, force: true });
    }
  });
});
