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

/**
 * Registers an agent (with `overrides`) and signs up a user who links it by the full claim (claim
 * token and the code mailed to the owner address); the user's bearer then acts for the agent.
 */
export async function signUpWithAgent(svc: TestService, outbox: string, overrides: Record<string, unknown> = {}, email = freshEmail()) {
  const ownerEmail = `owner.${freshEmail()}`;
  const agent = await svc.register({ owner_email: ownerEmail, ...overrides });
  const user = await signUp(svc, outbox, email);
  const sent = await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: agent.body.claim_token } });
  expect(sent.status, sent.text).to.equal(200);
  const [mail] = await waitForMails(outbox, ownerEmail);
  const claim = await svc.req('POST', '/api/protocol/claim', {
    headers: { authorization: `Bearer ${user.access_token}` },
    body: { claim_token: agent.body.claim_token, otp: codeIn(mail) },
  });
  expect(claim.status, claim.text).to.equal(200);
  return { user, agent };
}
