import { expect } from 'chai';
import type {
  AcceptFacts,
  ContractState,
  ContractStreamEvent,
  OpenContract,
  PartyVerb,
  ResolveDispute,
  TransitionContract,
} from '../../../commands/marketplace/contract.ts';
import {
  contractAggregate,
  decideOpenContract,
  decideResolveDispute,
  decideTransition,
  signRuling,
  TRANSITIONS,
} from '../../../commands/marketplace/contract.ts';
import { ServiceKey, verifyServiceSignature } from '../../../events/kernel/signing.ts';
import type { ContractStatus, ResolveOutcome } from '../../../events/marketplace.ts';
import { CONTRACT_STATES } from '../../../events/marketplace.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const { ALICE, BOB, CAROL, CONTRACT, LISTING, RESPONSE, ADMIN_USER, NOW } = f;
const now = NOW.toISOString();

/** The events that put a contract in `status` (through the table's own paths). */
function reach(status: ContractStatus): ContractStreamEvent[] {
  const t = (action: PartyVerb | 'resolve', from: ContractStatus, to: ContractStatus, actor = BOB, role: 'provider' | 'requester' | 'admin' = 'provider') =>
    f.contractTransitioned({ action, from, to, actor_id: actor, actor_role: role });
  const opened = [f.contractOpened()];
  const accepted = [...opened, t('accept', 'open', 'accepted')];
  const started = [...accepted, t('start', 'accepted', 'in_progress')];
  const delivered = [...started, t('deliver', 'in_progress', 'delivered')];
  switch (status) {
    case 'open':
      return opened;
    case 'accepted':
      return accepted;
    case 'in_progress':
      return started;
    case 'delivered':
      return delivered;
    case 'completed':
      return [...delivered, t('complete', 'delivered', 'completed', ALICE, 'requester')];
    case 'disputed':
      return [...started, t('dispute', 'in_progress', 'disputed', ALICE, 'requester')];
    case 'cancelled':
      return [...opened, t('cancel', 'open', 'cancelled', ALICE, 'requester')];
    case 'refunded':
      return [...reach('disputed'), t('resolve', 'disputed', 'refunded', ADMIN_USER, 'admin')];
    default: {
      const _exhaustive: never = status;
      return _exhaustive;
    }
  }
}

describe('commands: contracts (contract-<id>)', () => {
  describe('OpenContract (the listing owner accepts a response)', () => {
    const spec = DeciderSpecification.for<OpenContract, ContractState, ContractStreamEvent>({ decide: decideOpenContract, ...contractAggregate });
    const listing = {
      intent_id: LISTING,
      owner_id: ALICE,
      title: 'Build a lead-gen pipeline',
      price: 400,
      pricing_type: 'fixed' as const,
      deleted: false,
      position: 1,
    };
    const response = { response_id: RESPONSE, intent_id: LISTING, agent_id: BOB, proposed_price: null, position: 2 };
    const facts: AcceptFacts = { listing, response };
    const open = (agent_id = ALICE, over: Partial<AcceptFacts> = {}): OpenContract => ({
      type: 'OpenContract',
      data: { ...facts, ...over, agent_id },
      metadata: { now: NOW, contract_id: CONTRACT },
    });
    it('opens a contract in state open: the owner is the requester, the responder the provider', () =>
      spec
        .given([])
        .when(open())
        .then([f.contractOpened({ opened_at: now })]));
    it('refuses anyone but the listing owner (403)', () => spec.given([]).when(open(BOB)).thenThrows('not_listing_owner', 403));
    it('refuses an unknown or deleted listing and a response to another listing (404)', () => {
      spec
        .given([])
        .when(open(ALICE, { listing: null }))
        .thenThrows('listing_not_found', 404);
      spec
        .given([])
        .when(open(ALICE, { listing: { ...listing, deleted: true } }))
        .thenThrows('listing_not_found', 404);
      spec
        .given([])
        .when(open(ALICE, { response: { ...response, intent_id: 'lst_other' } }))
        .thenThrows('response_not_found', 404);
    });
    it('refuses a second accept of the same response (409)', () => spec.given([f.contractOpened()]).when(open()).thenThrows('contract_exists', 409));
  });

  describe('TransitionContract: every verb from every state (the DECISIONS table)', () => {
    const spec = DeciderSpecification.for<TransitionContract, ContractState, ContractStreamEvent>({ decide: decideTransition, ...contractAggregate });
    const cmd = (verb: PartyVerb, agent_id: string, rating: number | null = null): TransitionContract => ({
      type: 'TransitionContract',
      data: { verb, agent_id, rating, note: null },
      metadata: { now: NOW },
    });

    for (const verb of Object.keys(TRANSITIONS) as PartyVerb[]) {
      const rule = TRANSITIONS[verb];
      const actors = rule.by === 'either' ? [ALICE, BOB] : [rule.by === 'provider' ? BOB : ALICE];
      for (const status of CONTRACT_STATES) {
        for (const actor of actors) {
          const role = actor === ALICE ? 'requester' : 'provider';
          if (rule.from.includes(status)) {
            it(`${verb} by the ${role}: ${status} -> ${rule.to}`, () =>
              spec
                .given(reach(status))
                .when(cmd(verb, actor))
                .then([f.contractTransitioned({ action: verb, from: status, to: rule.to, actor_id: actor, actor_role: role, at: now })]));
          } else {
            it(`${verb} by the ${role} from ${status}: 409`, () => spec.given(reach(status)).when(cmd(verb, actor)).thenThrows('invalid_transition', 409));
          }
        }
      }
      if (rule.by !== 'either') {
        const other = rule.by === 'provider' ? ALICE : BOB;
        it(`${verb} by the other party: 403 wrong_contract_role`, () =>
          spec.given(reach(rule.from[0])).when(cmd(verb, other)).thenThrows('wrong_contract_role', 403));
      }
      it(`${verb} by a third party: 403; on no contract: 404`, () => {
        spec.given(reach(rule.from[0])).when(cmd(verb, CAROL)).thenThrows('not_contract_party', 403);
        spec.given([]).when(cmd(verb, BOB)).thenThrows('contract_not_found', 404);
      });
    }

    it('complete carries the rating; other verbs never do', () => {
      spec
        .given(reach('delivered'))
        .when(cmd('complete', ALICE, 4))
        .then([
          f.contractTransitioned({ action: 'complete', from: 'delivered', to: 'completed', actor_id: ALICE, actor_role: 'requester', rating: 4, at: now }),
        ]);
      spec
        .given(reach('open'))
        .when(cmd('accept', BOB, 5))
        .then([f.contractTransitioned({ at: now })]);
    });
    it('a disputed contract is locked: no party verb moves it', () => {
      for (const verb of Object.keys(TRANSITIONS) as PartyVerb[])
        spec
          .given(reach('disputed'))
          .when(cmd(verb, TRANSITIONS[verb].by === 'requester' ? ALICE : BOB))
          .thenThrows('invalid_transition', 409);
    });
  });

  describe('ResolveDispute (super admin, signed ruling)', () => {
    const key = ServiceKey.fromServerSecret('test-secret-key-0123456789-abcdefghijklmnop');
    const ruling = (outcome: ResolveOutcome, revision: number) =>
      signRuling(key, {
        format: 'agent-network/ruling/v1',
        contract_id: CONTRACT,
        outcome,
        note: 'ruled',
        ruled_by: ADMIN_USER,
        ruled_at: now,
        evidence_revision: revision,
        evidence_head: f.hex('e'),
      });
    const resolve = (outcome: ResolveOutcome, revision: number): ResolveDispute => ({
      type: 'ResolveDispute',
      data: { admin_id: ADMIN_USER, outcome, note: 'ruled', ruling: ruling(outcome, revision) },
      metadata: { now: NOW },
    });
    const run = (given: ContractStreamEvent[], command: ResolveDispute) => {
      const state = given.reduce(contractAggregate.evolve, contractAggregate.initialState());
      return decideResolveDispute(command, state, given.length - 1);
    };

    for (const outcome of ['completed', 'in_progress', 'refunded'] as const) {
      it(`resolves a disputed contract to ${outcome}, with the signed ruling in the same append`, () => {
        const given = reach('disputed');
        const events = run(given, resolve(outcome, given.length - 1));
        expect(events[0]).to.deep.equal(
          f.contractTransitioned({ action: 'resolve', from: 'disputed', to: outcome, actor_id: ADMIN_USER, actor_role: 'admin', note: 'ruled', at: now }),
        );
        expect(events[1]?.type).to.equal('DisputeRuled');
        const ruled = events[1]?.type === 'DisputeRuled' ? events[1].data : null;
        expect(ruled && verifyServiceSignature(ruled.ruling, ruled.signature, key.jwk().x)).to.equal(true);
        expect(events).to.have.length(2);
      });
    }
    it('refuses a contract that is not disputed (409) and an unknown one (404)', () => {
      for (const status of CONTRACT_STATES.filter((s) => s !== 'disputed')) {
        const given = reach(status);
        expect(() => run(given, resolve('completed', given.length - 1)))
          .to.throw()
          .with.property('code', 'invalid_transition');
      }
      expect(() => run([], resolve('completed', 0)))
        .to.throw()
        .with.property('code', 'contract_not_found');
    });
    it('refuses a ruling signed on an older revision of the stream (409 contract_changed)', () => {
      const given = reach('disputed');
      expect(() => run(given, resolve('refunded', given.length - 2)))
        .to.throw()
        .with.property('code', 'contract_changed');
    });
    it('a contract resolved to in_progress moves on again', () => {
      const spec = DeciderSpecification.for<TransitionContract, ContractState, ContractStreamEvent>({ decide: decideTransition, ...contractAggregate });
      spec
        .given([
          ...reach('disputed'),
          f.contractTransitioned({ action: 'resolve', from: 'disputed', to: 'in_progress', actor_id: ADMIN_USER, actor_role: 'admin' }),
        ])
        .when({ type: 'TransitionContract', data: { verb: 'deliver', agent_id: BOB, rating: null, note: null }, metadata: { now: NOW } })
        .then([f.contractTransitioned({ action: 'deliver', from: 'in_progress', to: 'delivered', at: now })]);
    });
  });
});
