import type { MailQueued } from '../../events/humans.ts';
import { mailStream } from '../../events/humans.ts';
import { deriveOrderedId } from '../../events/kernel/ids.ts';
import type { ContractAction, ContractOpened, ContractTransitioned } from '../../events/marketplace.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { MailTemplates } from '../humans/mail.ts';

/** A contract's opening (`ContractOpened`, the acceptance of a response) or one of its transitions' verbs. */
export type MailedAction = ContractAction | 'open';

/**
 * The steps whose arrival is mailed to both parties (the spec's state table: the opening, accepted,
 * delivered, disputed and the admin's resolution, plus completed from its e-mail list; a resolution
 * mails whatever it rules).
 */
export const MAILED_ACTIONS: ReadonlySet<MailedAction> = new Set<MailedAction>(['open', 'accept', 'deliver', 'complete', 'dispute', 'resolve']);

export type ContractParty = 'requester' | 'provider';

/** What a step's mail needs of its event: the parties, the verb, the state reached, the note and the time. */
export interface MailedStep {
  contract_id: string;
  requester_id: string;
  provider_id: string;
  action: MailedAction;
  to: string;
  note: string | null;
  at: string;
}

/** A committed `ContractOpened` or `ContractTransitioned`, as its reactor reads it from the log. */
export interface CommittedTransition {
  event_id: string;
  data: MailedStep;
}

/** The mailed step a committed event of a contract's stream is (null for any other event, or a verb that is not mailed). */
export function mailedStep(e: RecordedEvent): CommittedTransition | null {
  if (e.type === 'ContractOpened') {
    const d = e.data as ContractOpened['data'];
    const data: MailedStep = {
      contract_id: d.contract_id,
      requester_id: d.requester_id,
      provider_id: d.provider_id,
      action: 'open',
      to: 'open',
      note: null,
      at: d.opened_at,
    };
    return { event_id: e.id, data };
  }
  if (e.type !== 'ContractTransitioned') return null;
  const d = e.data as ContractTransitioned['data'];
  if (!MAILED_ACTIONS.has(d.action)) return null;
  return {
    event_id: e.id,
    data: { contract_id: d.contract_id, requester_id: d.requester_id, provider_id: d.provider_id, action: d.action, to: d.to, note: d.note, at: d.at },
  };
}

/**
 * QueueContractMails (the contract-mail reactor): the lifecycle mails of one committed transition.
 * `to` holds each party's owner address from the agents read model (null when the agent has none).
 */
export type QueueContractMails = Command<
  'QueueContractMails',
  { transition: CommittedTransition; title: string; to: Readonly<Record<ContractParty, string | null>> },
  { now: Date }
>;

/** One lifecycle mail: its id, stream and address, and the template's parameters (sealed when it is queued). */
export interface ContractMail {
  mail_id: string;
  party: ContractParty;
  to: string;
  params: MailTemplates['contract_lifecycle'];
}

/**
 * The mail id of a party's mail about a transition. It derives from the transition's event id, so
 * queueing the same transition again (a reactor retry, the resume at start) names the same mail and
 * its append is answered as a duplicate; it is time-ordered at the transition.
 */
export function contractMailId(transition: CommittedTransition, party: ContractParty): string {
  return deriveOrderedId('mail', `contract-mail:${transition.event_id}`, party, Date.parse(transition.data.at));
}

/** The state a transition's mail announces: the state reached, or what a resolution ruled. */
const announced = (d: MailedStep) => (d.action === 'resolve' ? `resolved (${d.to})` : d.to);

/**
 * QueueContractMails decided: nothing for a verb that is not mailed; otherwise one mail to each
 * party whose agent has an owner address, and one only when both agents have the same owner.
 */
export function decideContractMails(command: QueueContractMails): ContractMail[] {
  const { transition, title, to } = command.data;
  const d = transition.data;
  if (!MAILED_ACTIONS.has(d.action)) return [];
  const params = { contract_id: d.contract_id, state: announced(d), title, note: d.note ?? '' };
  const mails: ContractMail[] = [];
  for (const party of ['requester', 'provider'] as const) {
    const address = to[party];
    if (!address || mails.some((m) => m.to === address)) continue;
    mails.push({ mail_id: contractMailId(transition, party), party, to: address, params });
  }
  return mails;
}

/**
 * Queues a transition's lifecycle mails: each a `MailQueued` on its own `mail-<id>` stream (where
 * the mail worker then records its delivery). The parameters are sealed once and shared, as the
 * mails say the same thing. Idempotent: the command id of each append derives from the transition
 * and the party, so its event id is the same on every retry and the log answers a repeat as a
 * duplicate. Returns the log position of each mail queued.
 */
export async function queueContractMails(
  bus: CommandBus,
  secrets: SecretBox,
  command: QueueContractMails,
  ctx: Omit<CommandContext, 'commandId'>,
): Promise<Array<{ mail_id: string; position: number; duplicate: boolean }>> {
  const mails = decideContractMails(command);
  if (mails.length === 0) return [];
  const sealed = secrets.encrypt(JSON.stringify(mails[0].params));
  const { transition } = command.data;
  return Promise.all(
    mails.map(async (m) => {
      const queued: MailQueued = {
        type: 'MailQueued',
        data: { mail_id: m.mail_id, template: 'contract_lifecycle', to: m.to, params_enc: sealed, queued_at: command.metadata.now.toISOString() },
      };
      const r = await bus.appendRaw(
        mailStream(m.mail_id),
        [queued],
        'no_stream',
        Object.assign({}, ctx, { commandId: `contract-mail:${transition.event_id}:${m.party}`, idTime: Date.parse(transition.data.at) }),
      );
      return { mail_id: m.mail_id, position: r.position, duplicate: r.duplicate };
    }),
  );
}
