import { expect } from 'chai';
import { codeIn, waitForMails } from './mail.ts';
import type { TestService } from './service.ts';

let n = 0;
export const freshEmail = () => `human${++n}.${process.pid}.${Date.now()}@example.com`;

/** Signs a new user up over HTTP with the code read from the outbox; returns the tokens. */
export async function signUp(svc: TestService, outbox: string, email = freshEmail(), password = 'correct horse battery') {
  const sent = await svc.req('POST', '/api/auth/send-verification-otp', { body: { email } });
  expect(sent.status, sent.text).to.equal(200);
  const [mail] = await waitForMails(outbox, email);
  const res = await svc.req('POST', '/api/auth/verify-email-otp', { body: { email, otp: codeIn(mail), password, full_name: 'Ada Lovelace' } });
  expect(res.status, res.text).to.equal(200);
  return { email, password, ...(res.body as { access_token: string; refresh_token: string; user_id: string }) };
}
