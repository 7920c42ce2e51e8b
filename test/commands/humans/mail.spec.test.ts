import { expect } from 'chai';
import { SecretBox } from '../../../commands/agents/secrets.ts';
import type { RecordMailOutcome } from '../../../commands/humans/mail.ts';
import { decideRecordMailOutcome, sealMail } from '../../../commands/humans/mail.ts';
import { iso, NOW } from './fixtures.ts';

describe('commands: RecordMailOutcome (mail-<id>)', () => {
  const record = (outcome: RecordMailOutcome['data']['outcome']): RecordMailOutcome => ({
    type: 'RecordMailOutcome',
    data: { mail_id: 'mail_1', outcome },
    metadata: { now: NOW },
  });

  it('records a delivery', () => {
    expect(decideRecordMailOutcome(record({ attempt: 1, ok: true, transport: 'smtp', message_id: '<m@x>' }))).to.deep.equal([
      { type: 'MailSent', data: { mail_id: 'mail_1', attempt: 1, transport: 'smtp', message_id: '<m@x>', sent_at: iso(NOW) } },
    ]);
  });

  it('records a failed attempt, its error cut to 500 characters, final only when said so', () => {
    expect(decideRecordMailOutcome(record({ attempt: 2, ok: false, transport: 'smtp', error: 'x'.repeat(600) }))).to.deep.equal([
      { type: 'MailSendFailed', data: { mail_id: 'mail_1', attempt: 2, error: 'x'.repeat(500), final: false, failed_at: iso(NOW) } },
    ]);
    expect(decideRecordMailOutcome(record({ attempt: 7, ok: false, transport: 'smtp', final: true }))[0].data).to.include({
      error: 'unknown error',
      final: true,
    });
  });
});

describe('commands: sealMail (runs before deciding)', () => {
  const secrets = new SecretBox('server-secret-of-sufficient-length-0000');
  const ctx = { commandId: 'cmd-1', actor: null, requestId: null, now: NOW };

  it('seals the parameters under a fresh IV, so the decider only places the ciphertext', () => {
    const a = sealMail(secrets, ctx, 'mail', 'signup_otp', 'ann@example.com', { code: '123456', minutes: 10 });
    const b = sealMail(secrets, ctx, 'mail', 'signup_otp', 'ann@example.com', { code: '123456', minutes: 10 });
    expect(a.data.mail_id).to.equal(b.data.mail_id);
    expect(a.data.params_enc).to.match(/^v1\./).and.not.equal(b.data.params_enc);
    expect(a.data.params_enc).to.not.contain('123456');
    expect(JSON.parse(secrets.decrypt(a.data.params_enc))).to.deep.equal({ code: '123456', minutes: 10 });
  });
});
