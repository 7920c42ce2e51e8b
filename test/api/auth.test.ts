import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { hkdfSync } from 'node:crypto';
import { codeIn, readOutbox, waitForMails } from '../helpers/mail.ts';
import { until } from '../helpers/webhook-receiver.ts';
import { freshEmail, signUp } from '../helpers/users.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: human sign-in', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'boss@example.com' })));
  after(() => stopWithOutbox(svc, outbox));

  it('signs up with the code from the outbox, logs in, rotates refresh tokens and revokes the family on reuse', async () => {
    const email = freshEmail();
    const sent = await svc.req('POST', '/api/auth/send-verification-otp', { body: { email } });
    expect(sent.status).to.equal(200);
    const [mail] = await waitForMails(outbox, email);
    expect(mail.subject).to.match(/sign-up code/);
    expect(mail.html).to.contain(codeIn(mail));
    const signup = await svc.req('POST', '/api/auth/verify-email-otp', {
      body: { email, otp: codeIn(mail), password: 'hunter2hunter2', full_name: 'Grace <b>Hopper</b>' },
    });
    expect(signup.status, signup.text).to.equal(200);
    expect(signup.body).to.include({ token_type: 'bearer', expires_in: 900 });
    expect(signup.body.user_id).to.match(/^usr_/);

    const me = await svc.req('GET', '/api/auth/me', { headers: bearer(signup.body.access_token) });
    expect(me.status).to.equal(200);
    expect(me.body).to.include({ user_id: signup.body.user_id, email, full_name: 'Grace <b>Hopper</b>' });
    expect(me.body.roles).to.deep.equal(['member']);
    expect(me.body.agents).to.deep.equal([]);

    const wrong = await svc.req('POST', '/api/auth/login', { body: { email, password: 'not-the-password' } });
    expect(wrong.status).to.equal(401);
    const unknown = await svc.req('POST', '/api/auth/login', { body: { email: freshEmail(), password: 'not-the-password' } });
    expect(unknown.status).to.equal(401);
    // The same answer for an unknown address (only the request's own id differs).
    expect({ ...unknown.body, request_id: undefined }).to.deep.equal({ ...wrong.body, request_id: undefined });

    const login = await svc.req('POST', '/api/auth/login', { body: { email: email.toUpperCase(), password: 'hunter2hunter2' } });
    expect(login.status, login.text).to.equal(200);
    const r1 = login.body.refresh_token as string;
    const rotated = await svc.req('POST', '/api/auth/refresh', { body: { refresh_token: r1 } });
    expect(rotated.status, rotated.text).to.equal(200);
    const r2 = rotated.body.refresh_token as string;
    expect(r2).to.not.equal(r1);
    expect((await svc.req('GET', '/api/auth/me', { headers: bearer(rotated.body.access_token) })).status).to.equal(200);

    // r1 was rotated away: presenting it again revokes the whole family, r2 included.
    const reuse = await svc.req('POST', '/api/auth/refresh', { body: { refresh_token: r1 } });
    expect(reuse.status).to.equal(401);
    expect(reuse.body.code).to.equal('refresh_token_reused');
    expect(reuse.headers['www-authenticate']).to.be.a('string');
    const afterReuse = await svc.req('POST', '/api/auth/refresh', { body: { refresh_token: r2 } });
    expect(afterReuse.status).to.equal(401);

    // Another session of the same user is not affected.
    const other = await svc.req('POST', '/api/auth/refresh', { body: { refresh_token: signup.body.refresh_token } });
    expect(other.status, other.text).to.equal(200);

    const events = await svc.running.services.log.readStream(`user-${signup.body.user_id}`);
    expect(events.map((e) => e.type)).to.deep.equal([
      'UserRegistered',
      'SessionStarted',
      'SessionStarted',
      'SessionRefreshed',
      'SessionRevoked',
      'SessionRefreshed',
    ]);
  });

  it('answers a second signup for a known address the same way, mailing a notice instead of a code', async () => {
    const { email } = await signUp(svc, outbox);
    const again = await svc.req('POST', '/api/auth/send-verification-otp', { body: { email } });
    expect(again.status).to.equal(200);
    const fresh = await svc.req('POST', '/api/auth/send-verification-otp', { body: { email: freshEmail() } });
    expect(again.body).to.deep.equal(fresh.body);
    const mails = await waitForMails(outbox, email, 2);
    expect(mails[1].subject).to.match(/already|attempt/i);
    expect(mails[1].text).to.not.match(/\d{6}/);
  });

  it('refuses forged, expired and tampered access tokens with 401', async () => {
    const { access_token, user_id } = await signUp(svc, outbox);
    expect((await svc.req('GET', '/api/auth/me', { headers: bearer(access_token) })).status).to.equal(200);
    const key = new Uint8Array(hkdfSync('sha256', Buffer.from(SECRET, 'utf8'), 'agent-network', 'jwt-hs256-v1', 32));
    const now = Math.floor(svc.clock.now().getTime() / 1000);
    const sign = (opts: { iss?: string; aud?: string; exp?: number; alg?: string; k?: Uint8Array }) =>
      new SignJWT({ sid: 'ses_x' })
        .setProtectedHeader({ alg: opts.alg ?? 'HS256' })
        .setSubject(user_id)
        .setIssuer(opts.iss ?? 'agent-network')
        .setAudience(opts.aud ?? 'agent-network:api')
        .setIssuedAt(now)
        .setExpirationTime(opts.exp ?? now + 600)
        .sign(opts.k ?? key);
    // The forger's own well-formed token is accepted: the checks below fail for one reason each.
    expect((await svc.req('GET', '/api/auth/me', { headers: bearer(await sign({})) })).status).to.equal(200);
    const none = new UnsecuredJWT({ sid: 'ses_x' })
      .setSubject(user_id)
      .setIssuer('agent-network')
      .setAudience('agent-network:api')
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .encode();
    const [h, p, sig] = access_token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'usr_someoneelse0000000' })).toString('base64url')}.${sig}`;
    const forged: Record<string, string> = {
      alg_none: none,
      alg_none_signed_shape: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`,
      algorithm_swap_hs512: await sign({ alg: 'HS512', k: new Uint8Array(64).fill(7) }),
      algorithm_swap_hs384: await sign({ alg: 'HS384', k: new Uint8Array(Buffer.concat([Buffer.from(key), Buffer.from(key)]).subarray(0, 48)) }),
      wrong_key: await sign({ k: new Uint8Array(32).fill(1) }),
      wrong_issuer: await sign({ iss: 'evil' }),
      wrong_audience: await sign({ aud: 'agent-network:refresh' }),
      expired: await sign({ exp: now - 1 }),
      tampered,
      garbage: 'not.a.jwt',
    };
    for (const [name, token] of Object.entries(forged)) {
      const res = await svc.req('GET', '/api/auth/me', { headers: bearer(token) });
      expect(res.status, name).to.equal(401);
      expect(res.body.code, name).to.equal('unauthorized');
    }
    // A refresh token is not an access token.
    const { refresh_token } = await signUp(svc, outbox);
    expect((await svc.req('GET', '/api/auth/me', { headers: bearer(refresh_token) })).status).to.equal(401);
    // The real token expires after 15 minutes on the injected clock.
    svc.clock.advance(15 * 60_000 + 1000);
    expect((await svc.req('GET', '/api/auth/me', { headers: bearer(access_token) })).status).to.equal(401);
  });

  it('kills a code after 5 wrong tries, lets it expire after 10 minutes, and accepts it only once', async () => {
    const tryCode = (email: string, otp: string) =>
      svc.req('POST', '/api/auth/verify-email-otp', { body: { email, otp, password: 'a-long-password', full_name: 'Tester' } });

    const a = freshEmail();
    await svc.req('POST', '/api/auth/send-verification-otp', { body: { email: a } });
    const codeA = codeIn((await waitForMails(outbox, a))[0]);
    const wrongA = codeA === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await tryCode(a, wrongA)).body.code).to.equal('invalid_otp');
    const dead = await tryCode(a, codeA);
    expect(dead.status).to.equal(400);
    expect(dead.body.code).to.equal('invalid_otp');

    const b = freshEmail();
    await svc.req('POST', '/api/auth/send-verification-otp', { body: { email: b } });
    const codeB = codeIn((await waitForMails(outbox, b))[0]);
    svc.clock.advance(10 * 60_000);
    expect((await tryCode(b, codeB)).status).to.equal(400);

    const c = freshEmail();
    await svc.req('POST', '/api/auth/send-verification-otp', { body: { email: c } });
    const codeC = codeIn((await waitForMails(outbox, c))[0]);
    svc.clock.advance(9 * 60_000);
    expect((await tryCode(c, codeC)).status).to.equal(200);
    expect((await tryCode(c, codeC)).status).to.equal(400);
  });

  it('sends at most 5 codes per hour to one address, however many are asked for', async () => {
    const email = freshEmail();
    const statuses: number[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => svc.req('POST', '/api/auth/send-verification-otp', { body: { email } })));
      statuses.push(...batch.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 200)).to.have.length(5);
    expect(statuses.filter((s) => s === 429)).to.have.length(995);
    const limited = await svc.req('POST', '/api/auth/send-verification-otp', { body: { email } });
    expect(limited.body.code).to.equal('otp_rate_limited');
    expect(Number(limited.headers['retry-after'] ?? limited.body.retry_after)).to.be.greaterThan(0);
    // Five mails were queued for the address, no more; once all five are sent, the outbox holds them all.
    const { log, runner, store } = svc.running.services;
    await runner.waitFor(await log.headPosition());
    expect(await store.collection('mails').count({ to: email })).to.equal(5);
    await until(async () => (await store.collection('mails').count({ to: email, status: 'sent' })) === 5, 'the five mails to be sent');
    expect(readOutbox(outbox).filter((m) => m.to === email)).to.have.length(5);
    // An hour later the address may receive codes again.
    svc.clock.advance(3600_000);
    expect((await svc.req('POST', '/api/auth/send-verification-otp', { body: { email } })).status).to.equal(200);
  });

  it('resets a password with an e-mailed code, signing out every session; unknown addresses get the same answer', async () => {
    const user = await signUp(svc, outbox);
    const unknown = await svc.req('POST', '/api/auth/forgot-password', { body: { email: freshEmail() } });
    const known = await svc.req('POST', '/api/auth/forgot-password', { body: { email: user.email } });
    expect(known.status).to.equal(200);
    expect(unknown.body).to.deep.equal(known.body);
    const mails = await waitForMails(outbox, user.email, 2);
    const code = codeIn(mails[1]);
    const reset = await svc.req('POST', '/api/auth/reset-password', { body: { email: user.email, code, new_password: 'brand-new-password' } });
    expect(reset.status, reset.text).to.equal(200);
    expect((await svc.req('POST', '/api/auth/refresh', { body: { refresh_token: user.refresh_token } })).status).to.equal(401);
    expect((await svc.req('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).to.equal(401);
    expect((await svc.req('POST', '/api/auth/login', { body: { email: user.email, password: 'brand-new-password' } })).status).to.equal(200);
    const again = await svc.req('POST', '/api/auth/reset-password', { body: { email: user.email, code, new_password: 'another-password' } });
    expect(again.status).to.equal(400);
    const notice = await waitForMails(outbox, user.email, 3);
    expect(notice[2].subject).to.match(/password was changed/);
  });

  it('gives super_admin to ADMIN_EMAILS addresses and to admin CLI grants', async () => {
    const boss = await signUp(svc, outbox, 'boss@example.com');
    const me = await svc.req('GET', '/api/auth/me', { headers: bearer(boss.access_token) });
    expect(me.body.roles).to.deep.equal(['member', 'super_admin']);
    const user = await signUp(svc, outbox);
    const s = svc.running.services;
    const r = await s.bus.appendRaw(
      'admins',
      [{ type: 'SuperAdminGranted', data: { email: user.email, granted_at: s.clock.now().toISOString() } }],
      'any',
      s.bus.context({ commandId: `grant-${user.email}` }),
    );
    await s.runner.waitFor(r.position);
    expect((await svc.req('GET', '/api/auth/me', { headers: bearer(user.access_token) })).body.roles).to.deep.equal(['member', 'super_admin']);
  });

  it('answers a bearer user without a linked agent on K|J routes with 401 "No active agent linked to your account"', async () => {
    const { access_token } = await signUp(svc, outbox);
    const res = await svc.req('POST', '/api/feed/posts', { headers: bearer(access_token), body: { title: 'Hi', body: 'Hello', post_type: 'signal_found' } });
    expect(res.status).to.equal(401);
    expect(res.body.detail).to.equal('No active agent linked to your account');
  });

  it('keeps no plaintext password, code or refresh token anywhere under DATA_DIR', async () => {
    const user = await signUp(svc, outbox, freshEmail(), 'plaintext-password-marker-42');
    const codes = readOutbox(outbox)
      .map((m) => / is: (\d{6})$/m.exec(m.text)?.[1])
      .filter((c): c is string => Boolean(c));
    expect(codes.length).to.be.greaterThan(3);
    const needles = [user.password, user.refresh_token, user.access_token, ...codes.map((c) => ` is: ${c}`)];
    const files = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
    await svc.running.services.log.headPosition();
    for (const f of files(svc.dataDir)) {
      const content = readFileSync(f).toString('latin1');
      for (const needle of needles) expect(content.includes(needle), `${needle.slice(0, 12)}... in ${f}`).to.equal(false);
      for (const c of codes) expect(content.includes(`"${c}"`), `code ${c} in ${f}`).to.equal(false);
    }
  });
});

describe('api: sign-in limits (real limits)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => ({ svc, outbox } = await startWithOutbox({ RATE_LIMIT_SCALE: '1' })));
  after(() => stopWithOutbox(svc, outbox));

  it('answers 429 with Retry-After after 10 failed logins for one address, then lets it try again after 15 minutes', async () => {
    const user = await signUp(svc, outbox);
    for (let i = 0; i < 10; i++)
      expect((await svc.req('POST', '/api/auth/login', { body: { email: user.email, password: `wrong-${i}` } })).status).to.equal(401);
    const limited = await svc.req('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(limited.status).to.equal(429);
    expect(limited.headers['retry-after']).to.be.a('string');
    svc.clock.advance(15 * 60_000);
    expect((await svc.req('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).to.equal(200);
  });

  it('limits auth requests to 30 per minute per client address', async () => {
    svc.clock.advance(60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await svc.req('POST', '/api/auth/refresh', { body: { refresh_token: 'x' } })).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).to.equal(true);
    expect(statuses[30]).to.equal(429);
  });
});
