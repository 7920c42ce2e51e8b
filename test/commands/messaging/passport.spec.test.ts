import { expect } from 'chai';
import type { IssuePassport, PassportState, PassportStreamEvent, RegeneratePassport } from '../../../commands/messaging/passport.ts';
import { canonicalBytes, decideIssuePassport, decideRegeneratePassport, passportAggregate } from '../../../commands/messaging/passport.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { KEY, NEXT_KEY, NOW, SENDER, at, passportKeyIssued } from './fixtures.ts';

const newKey = { key_id: NEXT_KEY, public_key: 'C'.repeat(43), private_key_enc: 'v1.next-key' };
const issue = (): IssuePassport => ({ type: 'IssuePassport', data: { agent_id: SENDER }, metadata: { now: NOW, key: newKey } });
const regenerate = (): RegeneratePassport => ({ type: 'RegeneratePassport', data: { agent_id: SENDER }, metadata: { now: NOW, key: newKey } });
const issued = (over: Parameters<typeof passportKeyIssued>[0] = {}) => passportKeyIssued({ ...newKey, issued_at: NOW.toISOString(), ...over });
const fold = (events: PassportStreamEvent[]): PassportState => events.reduce(passportAggregate.evolve, passportAggregate.initialState());

describe('commands: passport keys (passport-<agent_id>)', () => {
  describe('IssuePassport', () => {
    const spec = DeciderSpecification.for<IssuePassport, PassportState, PassportStreamEvent>({ decide: decideIssuePassport, ...passportAggregate });

    it('issues the first key on first use with the keypair the handler made', () => {
      spec.given([]).when(issue()).then([issued()]);
    });

    it('issues nothing when the agent already has a key (concurrent first uses append one)', () => {
      spec.given([passportKeyIssued()]).when(issue()).thenNothingHappened();
    });
  });

  describe('RegeneratePassport', () => {
    const spec = DeciderSpecification.for<RegeneratePassport, PassportState, PassportStreamEvent>({ decide: decideRegeneratePassport, ...passportAggregate });

    it('issues a new key that replaces the current one', () => {
      spec
        .given([passportKeyIssued()])
        .when(regenerate())
        .then([issued({ replaces_key_id: KEY })]);
    });

    it('issues a key even before the first one, replacing none', () => {
      spec.given([]).when(regenerate()).then([issued()]);
    });

    it('keeps the earlier public keys listed, retired when the next key was issued', () => {
      const state = fold([passportKeyIssued(), issued({ replaces_key_id: KEY })]);
      expect(state.current).to.deep.include({ key_id: NEXT_KEY, retired_at: null });
      expect(state.previous).to.deep.equal([
        { key_id: KEY, public_key: 'A'.repeat(43), private_key_enc: 'v1.first-key', issued_at: at(9).toISOString(), retired_at: NOW.toISOString() },
      ]);
    });
  });

  it('signs RFC 8785 canonical JSON: sorted keys, no spaces, ECMAScript number forms', () => {
    const text = new TextDecoder().decode(canonicalBytes({ b: [1e21, 1.5, -0, 'é'], a: { z: null, y: true }, c: 100.0 }));
    expect(text).to.equal('{"a":{"y":true,"z":null},"b":[1e+21,1.5,0,"é"],"c":100}');
  });
});
