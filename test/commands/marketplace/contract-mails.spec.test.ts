import { expect } from 'chai';
import type { CommittedTransition, QueueContractMails } from '../../../commands/marketplace/contract-mails.ts';
import { contractMailId, decideContractMails, MAILED_ACTIONS, mailedStep } from '../../../commands/marketplace/contract-mails.ts';
import type { RecordedEvent } from '../../../events/store/port.ts';
import type { ContractAction, ContractStatus } from '../../../events/marketplace.ts';
import * as f from '../../fixtures/events.ts';

const { CONTRACT, NOW } = f;
const REQUESTER_MAIL = 'alice-owner@example.com';
const PROVIDER_MAIL = 'bob-owner@example.com';

/** Given a committed transition (its event id and data) and the parties' owner addresses. */
const given = (
  action: ContractAction,
  from: ContractStatus,
  to: ContractStatus,
  over: { note?: string | null; event_id?: string } = {},
): CommittedTransition => ({
  event_id: over.event_id ?? '0190a1b2-0000-7000-8000-000000000001',
  data: f.contractTransitioned({ action, from, to, note: over.note ?? null }).data,
});
const when = (
  transition: CommittedTransition,
  to: QueueContractMails['data']['to'] = { requester: REQUESTER_MAIL, provider: PROVIDER_MAIL },
): QueueContractMails => ({
  type: 'QueueContractMails',
  data: { transition, title: 'Build a pipeline', to },
  metadata: { now: NOW },
});

describe('QueueContractMails: the lifecycle mails of a committed transition (given/when/then)', () => {
  const cases: Array<[ContractAction, ContractStatus, ContractStatus, string]> = [
    ['accept', 'open', 'accepted', 'accepted'],
    ['deliver', 'in_progress', 'delivered', 'delivered'],
    ['complete', 'delivered', 'completed', 'completed'],
    ['dispute', 'in_progress', 'disputed', 'disputed'],
    ['resolve', 'disputed', 'refunded', 'resolved (refunded)'],
    ['resolve', 'disputed', 'in_progress', 'resolved (in_progress)'],
  ];
  for (const [action, from, to, state] of cases) {
    it(`${action} (${from} -> ${to}): one mail to each party's owner, announcing "${state}"`, () => {
      const transition = given(action, from, to, { note: 'see the thread' });
      const mails = decideContractMails(when(transition));
      expect(mails).to.deep.equal([
        {
          mail_id: contractMailId(transition, 'requester'),
          party: 'requester',
          to: REQUESTER_MAIL,
          params: { contract_id: CONTRACT, state, title: 'Build a pipeline', note: 'see the thread' },
        },
        {
          mail_id: contractMailId(transition, 'provider'),
          party: 'provider',
          to: PROVIDER_MAIL,
          params: { contract_id: CONTRACT, state, title: 'Build a pipeline', note: 'see the thread' },
        },
      ]);
    });
  }

  it('mails the opening of a contract (ContractOpened, the state table\'s first row) to both parties, announcing "open"', () => {
    const opened = f.contractOpened();
    const step = mailedStep({ id: 'e-open', type: 'ContractOpened', data: opened.data } as unknown as RecordedEvent);
    expect(step?.data).to.include({ action: 'open', to: 'open', at: opened.data.opened_at });
    const mails = decideContractMails(when(step ?? given('start', 'accepted', 'in_progress')));
    expect(mails.map((m) => [m.party, m.to, m.params.state])).to.deep.equal([
      ['requester', REQUESTER_MAIL, 'open'],
      ['provider', PROVIDER_MAIL, 'open'],
    ]);
  });

  it('mails nothing for the verbs that are not mailed (start, cancel)', () => {
    expect([...MAILED_ACTIONS].sort()).to.deep.equal(['accept', 'complete', 'deliver', 'dispute', 'open', 'resolve']);
    expect(decideContractMails(when(given('start', 'accepted', 'in_progress')))).to.deep.equal([]);
    expect(decideContractMails(when(given('cancel', 'open', 'cancelled')))).to.deep.equal([]);
  });

  it('mails only the parties with an owner address, and one owner of both agents once', () => {
    const t = given('accept', 'open', 'accepted');
    expect(decideContractMails(when(t, { requester: null, provider: PROVIDER_MAIL })).map((m) => [m.party, m.to])).to.deep.equal([['provider', PROVIDER_MAIL]]);
    expect(decideContractMails(when(t, { requester: null, provider: null }))).to.deep.equal([]);
    expect(decideContractMails(when(t, { requester: REQUESTER_MAIL, provider: REQUESTER_MAIL })).map((m) => m.party)).to.deep.equal(['requester']);
  });

  it('names the same mails for the same transition (a retry or a resume) and other mails for another transition', () => {
    const t = given('deliver', 'in_progress', 'delivered');
    const first = decideContractMails(when(t)).map((m) => m.mail_id);
    expect(decideContractMails(when(t)).map((m) => m.mail_id)).to.deep.equal(first);
    expect(first[0]).to.match(/^mail_/);
    expect(first[0]).to.not.equal(first[1]);
    const other = decideContractMails(when(given('deliver', 'in_progress', 'delivered', { event_id: '0190a1b2-0000-7000-8000-000000000002' }))).map(
      (m) => m.mail_id,
    );
    expect(other.filter((id) => first.includes(id))).to.deep.equal([]);
  });

  it("a transition's mail ids sort by the transition's time (time-ordered ids)", () => {
    const early = given('accept', 'open', 'accepted', { event_id: 'e-1' });
    const late: CommittedTransition = { event_id: 'e-0', data: { ...early.data, at: new Date(Date.parse(early.data.at) + 60_000).toISOString() } };
    expect(contractMailId(early, 'provider') < contractMailId(late, 'provider')).to.equal(true);
  });
});
