import type { OwnerEmailState, ReserveOwnerEmail } from '../../../commands/agents/owner-email.ts';
import { ORPHAN_RESERVATION_MS, decideReserveOwnerEmail, ownerEmailAggregate } from '../../../commands/agents/owner-email.ts';
import type { OwnerEmailReserved } from '../../../events/agents.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, EMAIL_HASH, NOW, OTHER, at, later, ownerEmailReserved } from './fixtures.ts';

describe('commands: agents ReserveOwnerEmail (owner-email-<hash>)', () => {
  const spec = DeciderSpecification.for<ReserveOwnerEmail, OwnerEmailState, OwnerEmailReserved>({ decide: decideReserveOwnerEmail, ...ownerEmailAggregate });
  const reserve = (holder: ReserveOwnerEmail['data']['holder'] = null, now = NOW): ReserveOwnerEmail => ({
    type: 'ReserveOwnerEmail',
    data: { email_hash: EMAIL_HASH, agent_id: AGENT, holder },
    metadata: { now },
  });
  const mine = (now = NOW) => ownerEmailReserved({ agent_id: AGENT, reserved_at: now.toISOString() });
  /** OTHER reserved at 09:00 (30 minutes before NOW). */
  const held = [ownerEmailReserved()];

  it('reserves a free e-mail for the registering agent', () => {
    spec.given([]).when(reserve()).then([mine()]);
  });

  it('leaves a reservation of the same agent as it is (a retried registration)', () => {
    spec
      .given([mine(at(9))])
      .when(reserve())
      .thenNothingHappened();
  });

  it('refuses an e-mail whose holder was registered with 409 owner_email_taken', () => {
    spec
      .given(held)
      .when(reserve({ agent_id: OTHER, registered: true, owner_email_released_at: null }))
      .thenThrows('owner_email_taken', 409);
  });

  it('takes over a reservation whose agent was never written once it is older than a minute', () => {
    spec
      .given(held)
      .when(reserve({ agent_id: OTHER, registered: false, owner_email_released_at: null }))
      .then([mine()]);
  });

  it('refuses to take over an orphaned reservation within its first minute with 409', () => {
    const young = later(ORPHAN_RESERVATION_MS, at(9));
    spec
      .given(held)
      .when(reserve({ agent_id: OTHER, registered: false, owner_email_released_at: null }, young))
      .thenThrows('owner_email_taken', 409);
    spec
      .given(held)
      .when(reserve({ agent_id: OTHER, registered: false, owner_email_released_at: null }, later(1, young)))
      .then([mine(later(1, young))]);
  });

  it('frees the e-mail of a deactivated holder once its 30 days are over, not before', () => {
    const releasedAt = later(30 * 24 * 3600_000, at(9));
    const deactivated = (now: Date) => reserve({ agent_id: OTHER, registered: true, owner_email_released_at: releasedAt.toISOString() }, now);
    spec
      .given(held)
      .when(deactivated(later(-1, releasedAt)))
      .thenThrows('owner_email_taken', 409);
    spec
      .given(held)
      .when(deactivated(releasedAt))
      .then([mine(releasedAt)]);
  });

  it('refuses with 409 when the fact loaded is about another holder than the one now in the stream', () => {
    spec
      .given(held)
      .when(reserve({ agent_id: 'agt_third000000000000000', registered: false, owner_email_released_at: null }))
      .thenThrows('owner_email_taken', 409);
    spec.given(held).when(reserve(null)).thenThrows('owner_email_taken', 409);
  });
});
