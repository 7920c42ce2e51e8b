import { defineProjection } from '../types.ts';

/** A queued e-mail; `_id` is the mail id. `params_enc` is encrypted (only the sender decrypts it). */
export type MailDoc = {
  _id: string;
  _pos: number;
  template: string;
  to: string;
  params_enc: string;
  queued_at: string;
  /** The stream the MailQueued event is on. */
  stream: string;
  status: 'queued' | 'sent' | 'retrying' | 'failed';
  attempts: number;
  sent_at?: string;
  transport?: string;
  last_error?: string;
  failed_at?: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    mails: MailDoc;
  }
}

/** Mail delivery state: what the mail worker still has to send (parameters stay encrypted). */
export const mailsProjection = defineProjection({
  name: 'mails',
  collections: [{ name: 'mails', indexes: [{ name: 'by_status', keys: { status: 1, queued_at: 1 } }] }],
  handles: ['MailQueued', 'MailSent', 'MailSendFailed'],
  async apply(event, ctx) {
    const mails = ctx.collection('mails');
    switch (event.type) {
      case 'MailQueued': {
        const d = event.data;
        await mails.applyAt(d.mail_id, event.position, {
          $set: { template: d.template, to: d.to, params_enc: d.params_enc, queued_at: d.queued_at, stream: event.stream },
          $setOnInsert: { status: 'queued', attempts: 0 },
        });
        return;
      }
      case 'MailSent': {
        const d = event.data;
        await mails.applyAt(d.mail_id, event.position, { $set: { status: 'sent', attempts: d.attempt, sent_at: d.sent_at, transport: d.transport } });
        return;
      }
      case 'MailSendFailed': {
        const d = event.data;
        await mails.applyAt(d.mail_id, event.position, {
          $set: { status: d.final ? 'failed' : 'retrying', attempts: d.attempt, last_error: d.error, failed_at: d.failed_at },
        });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
