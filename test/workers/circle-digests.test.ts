import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../events/kernel/clock.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { defined } from '../helpers/defined.ts';
import { readOutbox, waitForMails } from '../helpers/mail.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';

describe('workers: circle notification digests (injected clock, mail outbox)', function () {
  this.timeout(300_000);
  // 10 March 2026 is a Tuesday; digests are due from 08:00 UTC, weekly ones on Mondays.
  const clock = new ManualClock('2026-03-10T09:30:00.000Z');
  const dataDir = mkdtempSync(join(tmpdir(), 'circle-digests-data-'));
  const outbox = mkdtempSync(join(tmpdir(), 'circle-digests-outbox-'));
  const env = { MAIL_OUTBOX_DIR: outbox, ADMIN_EMAILS: ROOT_EMAIL, SECRET_KEY: SECRET };
  let svc: TestService;
  let daily: User;
  let weekly: User;
  let silent: User;
  let circle_id: string;

  after(async () => {
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outbox, { recursive: true, force: true });
  });

  const run = () => defined(svc.running.workers, 'the workers').runCircleDigests();
  const produced = async () => (await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 })).filter((e) => e.type === 'CircleDigestProduced');
  const mailsTo = (u: User) => readOutbox(outbox).filter((m) => m.to === u.email && /circle digest/.test(m.subject));
  const as = (u: User) => ({ headers: bearer(u.access_token) });
  /** Fresh access tokens after the clock moved past their lifetime. */
  const signIn = async (...users: User[]) => {
    for (const u of users) {
      const r = await svc.req('POST', '/api/auth/login', { body: { email: u.email, password: u.password } });
      expect(r.status, r.text).to.equal(200);
      u.access_token = r.body.access_token as string;
    }
  };
  const postBy = async (u: User, content: string) => {
    const p = await svc.req('POST', '/api/brew-circles/posts', { ...as(u), body: { circle_id, content, intent: 'ask' } });
    expect(p.status, p.text).to.equal(201);
    return p.body.post_id as string;
  };
  const react = async (u: User, postId: string, reaction = 'like') => {
    const r = await svc.req('POST', '/api/brew-circles/reactions', { ...as(u), body: { target_type: 'post', target_id: postId, reaction } });
    expect(r.status, r.text).to.equal(200);
  };

  it('mails each member with unread notifications one digest per period, honours none and weekly, and does not double after a restart', async () => {
    svc = await startTestService(env, { clock, dataDir });
    const root = await signUp(svc, outbox, ROOT_EMAIL);
    const admin = await signUp(svc, outbox);
    [daily, weekly, silent] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
    await svc.req('PATCH', '/api/auth/me', { ...as(weekly), body: { full_name: 'Wendy Weekly' } });
    ({ circle_id } = await communityWith(svc, root, admin, [daily, weekly, silent], 'Digest <Makers>'));
    expect((await svc.req('PUT', '/api/brew-circles/settings/notifications', { ...as(weekly), body: { digest: 'weekly' } })).status).to.equal(200);
    expect((await svc.req('PUT', '/api/brew-circles/settings/notifications', { ...as(silent), body: { digest: 'none' } })).status).to.equal(200);

    // Each member gets reactions on a post of theirs (unread notifications).
    const dailyPost = await postBy(daily, 'Looking for a designer');
    await react(weekly, dailyPost, 'like');
    await react(silent, dailyPost, 'insightful');
    await react(daily, await postBy(weekly, 'Weekly post'));
    await react(daily, await postBy(silent, 'Silent post'));
    // Nothing was mailed before the job ran.
    expect(mailsTo(daily)).to.have.length(0);

    // Tuesday 09:30: the daily member's digest; the weekly one waits for Monday; none gets nothing.
    expect(await run()).to.equal(1);
    const mail = (await waitForMails(outbox, daily.email, 2)).at(-1); // the sign-up code, then the digest
    expect(mailsTo(daily)).to.have.length(1);
    expect(mail?.subject).to.equal('Your daily circle digest: 2 unread notifications');
    expect(mailsTo(daily)[0].text).to.contain('- Reaction from Wendy Weekly in Digest <Makers> (2026-03-10T09:30:00.000Z): like');
    expect(mailsTo(daily)[0].text).to.contain('insightful');
    expect(mailsTo(daily)[0].html).to.contain('Digest &#60;Makers&#62;');
    expect(mailsTo(daily)[0].html).to.not.contain('<Makers>');
    const [first] = await produced();
    expect(first.data).to.deep.include({ user_id: daily.user_id, frequency: 'daily', period: '2026-03-10', unread_count: 2, after_position: 0 });
    expect(first.stream).to.equal(`circle-user-${daily.user_id}`);

    // Again the same day: nothing; after a restart (the process forgot its last run): still nothing.
    expect(await run()).to.equal(null);
    clock.set('2026-03-10T23:00:00.000Z');
    await svc.stop({ keepData: true });
    svc = await startTestService(env, { clock, dataDir });
    expect(await run()).to.equal(0);
    expect(await produced()).to.have.length(1);
    expect(mailsTo(daily)).to.have.length(1);

    // Wednesday 08:00: a new period, but nothing new since the last digest (the old ones are still unread).
    clock.set('2026-03-11T08:00:00.000Z');
    expect(await run()).to.equal(0);
    // Thursday: one new reaction -> a digest of that one only.
    clock.set('2026-03-12T08:05:00.000Z');
    await signIn(daily, weekly, silent);
    await react(silent, dailyPost, 'celebrate');
    expect(await run()).to.equal(1);
    await waitForMails(outbox, daily.email, 3);
    expect(mailsTo(daily)[1].subject).to.equal('Your daily circle digest: 1 unread notification');
    expect(mailsTo(daily)[1].text).to.contain('celebrate').and.to.not.contain(': like');

    // Read notifications are no digest: the daily member reads all, gets another reaction, reads again.
    clock.set('2026-03-13T09:00:00.000Z');
    await signIn(daily, weekly);
    await react(weekly, dailyPost, 'support');
    expect((await svc.req('POST', '/api/brew-circles/notifications/read', { ...as(daily), body: {} })).status).to.equal(200);
    expect(await run()).to.equal(0);

    // Monday 16 March 08:10: the weekly member's digest (everything unread so far); still nothing for none.
    clock.set('2026-03-16T08:10:00.000Z');
    expect(await run()).to.equal(1);
    await waitForMails(outbox, weekly.email, 2);
    expect(mailsTo(weekly)).to.have.length(1);
    expect(mailsTo(weekly)[0].subject).to.equal('Your weekly circle digest: 1 unread notification');
    expect(mailsTo(silent)).to.have.length(0);
    const last = (await produced()).at(-1);
    expect(last?.data).to.deep.include({ user_id: weekly.user_id, frequency: 'weekly', period: '2026-03-16' });
    // Tuesday: the weekly member's period is still this week's.
    clock.set('2026-03-17T08:10:00.000Z');
    await signIn(daily, weekly);
    await react(daily, await postBy(weekly, 'Another weekly post'));
    expect(await run()).to.equal(0);
    expect(mailsTo(weekly)).to.have.length(1);
  });
});
