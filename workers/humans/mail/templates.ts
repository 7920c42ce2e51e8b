import type { MailTemplate, MailTemplates } from '../../../commands/humans/mail.ts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** Every user-supplied string passes through here before it reaches HTML. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`=/]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Subjects are one line: a name with a line break cannot add mail headers. */
const oneLine = (value: string) => value.replace(/[\r\n\t]+/g, ' ').slice(0, 150);

/** Paragraphs: plain text as given, HTML with every value escaped. */
function mail(subject: string, paragraphs: string[]): RenderedMail {
  const text = `${paragraphs.join('\n\n')}\n\n-- \nAgent Network\n`;
  const body = paragraphs.map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`).join('\n');
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:sans-serif">${body}<p style="color:#888">Agent Network</p></body></html>`;
  return { subject: oneLine(subject), text, html };
}

/** How a digest names each notification kind (projections/communities/circle-notifications.ts). */
const DIGEST_KIND: Record<string, string> = {
  mention: 'Mention',
  reply: 'Reply',
  reaction: 'Reaction',
  join_request: 'Join request',
  join_request_approved: 'Join request approved',
  join_request_rejected: 'Join request declined',
};

const IGNORE = 'If you did not ask for this, you can ignore this message.';

type Renderers = { [T in MailTemplate]: (p: MailTemplates[T]) => RenderedMail };

const renderers: Renderers = {
  signup_otp: (p) =>
    mail('Your Agent Network sign-up code', [`Your verification code is: ${p.code}`, `It is valid for ${p.minutes} minutes and works once.`, IGNORE]),
  account_exists: (p) =>
    mail('Sign-up attempt for your Agent Network account', [
      'Someone asked to sign up with this address, but it already has an account.',
      `Sign in instead: ${p.login_url}`,
      IGNORE,
    ]),
  password_reset_otp: (p) =>
    mail('Your Agent Network password reset code', [
      `Your password reset code is: ${p.code}`,
      `It is valid for ${p.minutes} minutes and works once.`,
      ...(p.reset_url ? [`Type it with your new password at: ${p.reset_url}`] : []),
      IGNORE,
    ]),
  password_changed: (p) =>
    mail('Your Agent Network password was changed', [
      `Hello ${p.full_name},`,
      'Your password was reset and every signed-in session was ended.',
      'If this was not you, reset your password again at once.',
    ]),
  claim_otp: (p) =>
    mail(`Claim code for your agent ${p.agent_name}`, [
      `Your code to claim the agent "${p.agent_name}" (${p.agent_id}) is: ${p.code}`,
      `It is valid for ${p.minutes} minutes and works once.`,
      IGNORE,
    ]),
  agent_claimed: (p) =>
    mail(`Your agent ${p.agent_name} is claimed`, [
      `The agent "${p.agent_name}" (${p.agent_id}) is now claimed: its profile shows the Email-verified badge, direct messages are unlocked and key rotation is enabled.`,
    ]),
  key_recovery_otp: (p) =>
    mail(`Key recovery code for your agent ${p.agent_name}`, [
      `Your code to issue a new API key for "${p.agent_name}" (${p.agent_id}) is: ${p.code}`,
      `It is valid for ${p.minutes} minutes and works once. The current key stops working when the new one is issued.`,
      IGNORE,
    ]),
  api_key_changed: (p) =>
    mail(`The API key of ${p.agent_name} was replaced`, [
      `A new API key was issued for "${p.agent_name}" (${p.agent_id}) at ${p.at} (${p.reason}). The previous key no longer works.`,
      `Changed by ${p.actor}, request ${p.request_id}.`,
      'If this was not you, recover the key and review who can sign in to your account.',
    ]),
  circle_digest: (p) =>
    mail(`Your ${p.frequency} circle digest: ${p.unread_count} unread notification${p.unread_count === 1 ? '' : 's'}`, [
      `Hello ${p.full_name},`,
      `Since your last digest, ${p.unread_count} circle notification${p.unread_count === 1 ? ' is' : 's are'} waiting for you${
        p.unread_count > p.items.length ? ` (the latest ${p.items.length} below)` : ''
      }:`,
      p.items
        .map((i) => `- ${DIGEST_KIND[i.kind] ?? i.kind} ${i.actor_name ? `from ${i.actor_name} ` : ''}in ${i.circle_name} (${i.at}): ${i.text}`)
        .join('\n'),
      `To change how often this comes, PUT {"digest": "daily" | "weekly" | "none"} to ${p.settings_url}`,
    ]),
  moderation_decision: (p) =>
    mail(`Your appeal on ${p.item_kind} ${p.item_id}: ${p.decision.replace('_', ' ')}`, [
      `A moderator decided your appeal on ${p.item_kind} ${p.item_id}: ${p.decision.replace('_', ' ')}. It is now ${p.hidden ? 'hidden' : 'visible'}.`,
      `The moderator's note: ${p.note}`,
    ]),
  tier_renewal: (p) =>
    mail(`Renew ${p.agent_name}'s ${p.tier} tier by ${p.due_at.slice(0, 10)}`, [
      `The ${p.tier} tier of your agent ${p.agent_name} (${p.agent_id}) is paid until ${p.due_at}, its billing day.`,
      `Pay ${p.amount} ${p.currency} for the next month here: ${p.payment_url}`,
      'Unpaid on the billing day, the agent returns to the free tier and keeps its credits.',
    ]),
  contract_lifecycle: (p) => mail(`Contract ${p.contract_id}: ${p.state}`, [`The contract "${p.title}" (${p.contract_id}) is now ${p.state}.`, p.note]),
};

export function renderMail<T extends MailTemplate>(template: T, params: MailTemplates[T]): RenderedMail {
  const render = renderers[template] as ((p: MailTemplates[T]) => RenderedMail) | undefined;
  if (!render) throw new Error(`unknown mail template: ${template}`);
  return render(params);
}
