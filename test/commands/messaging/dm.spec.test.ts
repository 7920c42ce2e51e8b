import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate, dmPairKey } from '../../../commands/agents/agent.ts';
import type { DmTarget, SendDm } from '../../../commands/messaging/dm.ts';
import { decideSendDm } from '../../../commands/messaging/dm.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { HOUR_MS, MEMBER, NOW, OWNER, RECIPIENT, SENDER, agentClaimed, at, charge, directMessageSent, dmsSent, funded } from './fixtures.ts';

const spec = DeciderSpecification.for<SendDm, AgentState, AgentStreamEvent>({ decide: decideSendDm, ...agentAggregate });

const sendDm = (over: Partial<SendDm['data']> = {}, now = NOW): SendDm => ({
  type: 'SendDm',
  data: {
    from_agent_id: SENDER,
    target: { to_agent_id: RECIPIENT },
    message: 'Hello',
    recipient_exists: true,
    recipient_blocks_sender: false,
    daily_cap: 50,
    pair_cap: 3,
    owner_user_id: null,
    ...over,
  },
  metadata: { now, dm_id: 'dm_new' },
});
const sent = (over: Parameters<typeof directMessageSent>[0] = {}) =>
  directMessageSent({ dm_id: 'dm_new', sent_at: NOW.toISOString(), charge: charge('dm', 250, 49_750), ...over });

/** The domain error `decideSendDm` throws on `given` for `command` (to check what it tells the caller). */
function refusal(given: AgentStreamEvent[], command: SendDm): DomainError {
  try {
    decideSendDm(command, given.reduce(agentAggregate.evolve, agentAggregate.initialState()));
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('decideSendDm did not refuse');
}

describe('commands: SendDm (agent-<sender>)', () => {
  describe('recipients', () => {
    it('sends a DM to another agent and charges the sender 0.25 credits', () => {
      spec.given(funded()).when(sendDm()).then([sent()]);
    });

    it('stores a DM to a member by user id and to an e-mail address, with the other targets null', () => {
      const targets: Array<[DmTarget, Partial<ReturnType<typeof sent>['data']>]> = [
        [{ to_user_id: MEMBER }, { to_agent_id: null, to_user_id: MEMBER }],
        [{ to_email: 'lead@example.com' }, { to_agent_id: null, to_email: 'lead@example.com' }],
      ];
      for (const [target, fields] of targets) {
        spec
          .given(funded())
          .when(sendDm({ target }))
          .then([sent(fields)]);
      }
    });

    it("charges an owner's reply as owner_dm_reply and records the owner", () => {
      spec
        .given([...funded(), agentClaimed()])
        .when(sendDm({ owner_user_id: OWNER }))
        .then([sent({ charge: charge('owner_dm_reply', 250, 49_750), owner_user_id: OWNER })]);
    });

    it('refuses a member that does not exist with 404', () => {
      spec
        .given(funded())
        .when(sendDm({ target: { to_user_id: MEMBER }, recipient_exists: false }))
        .thenThrows('user_not_found', 404);
    });

    it('refuses a recipient agent that does not exist with 404', () => {
      spec
        .given(funded())
        .when(sendDm({ recipient_exists: false }))
        .thenThrows('agent_not_found', 404);
    });

    it('refuses a DM to oneself with 400', () => {
      spec
        .given(funded())
        .when(sendDm({ target: { to_agent_id: SENDER } }))
        .thenThrows('cannot_message_self', 400);
    });

    it('refuses a DM to an agent that blocks the sender with 403, telling nothing more', () => {
      spec
        .given(funded())
        .when(sendDm({ recipient_blocks_sender: true }))
        .thenThrows('message_not_delivered', 403);
      expect(refusal(funded(), sendDm({ recipient_blocks_sender: true })).message).to.equal('Message not delivered');
    });

    it('refuses a sender that is not registered with 404', () => {
      spec.given([]).when(sendDm()).thenThrows('agent_not_found', 404);
    });

    it('refuses with 402 when the balance does not cover 0.25 credits', () => {
      spec.given(funded(SENDER, 249)).when(sendDm()).thenThrows('insufficient_credits', 402);
    });
  });

  describe('the first-hour lock', () => {
    const justRegistered = funded(SENDER, 50_000, at(9).toISOString());

    it('refuses an unclaimed agent during its first hour with 403, saying when it unlocks', () => {
      spec.given(justRegistered).when(sendDm()).thenThrows('dm_locked', 403);
      const err = refusal(justRegistered, sendDm());
      expect(err.extra).to.deep.equal({ unlocks_at: at(10).toISOString(), retry_after: 1800 });
      expect(err.message).to.contain('(in 30 min)');
    });

    it('lets a claimed agent send at once: the claim comes from its own stream', () => {
      spec
        .given([...justRegistered, agentClaimed()])
        .when(sendDm())
        .then([sent()]);
    });

    it("lets an owner's reply through during the first hour", () => {
      spec
        .given(justRegistered)
        .when(sendDm({ owner_user_id: OWNER }))
        .then([sent({ charge: charge('owner_dm_reply', 250, 49_750), owner_user_id: OWNER })]);
    });

    it('unlocks an unclaimed agent one hour after registration', () => {
      spec
        .given(justRegistered)
        .when(sendDm({}, at(10)))
        .then([sent({ sent_at: at(10).toISOString() })]);
    });
  });

  describe('the caps, counted from the sender stream', () => {
    it('refuses the DM past the daily cap with 429, saying when the oldest leaves the 24 h window', () => {
      const given = [...funded(), ...dmsSent(2, at(8), { to_email: 'a@example.com', to_agent_id: null })];
      spec
        .given(given)
        .when(sendDm({ daily_cap: 2 }))
        .thenThrows('daily_cap', 429);
      const reset = (at(8).getTime() + 24 * HOUR_MS - NOW.getTime()) / 1000;
      expect(refusal(given, sendDm({ daily_cap: 2 })).extra).to.deep.equal({ retry_after: reset, limit: 2, remaining: 0, reset });
    });

    it('counts only the DMs of the last 24 hours', () => {
      const yesterday = new Date(NOW.getTime() - 24 * HOUR_MS);
      const registered = new Date(NOW.getTime() - 48 * HOUR_MS).toISOString();
      spec
        .given([...funded(SENDER, 50_000, registered), ...dmsSent(2, yesterday, { to_email: 'a@example.com', to_agent_id: null })])
        .when(sendDm({ daily_cap: 2 }))
        .then([sent({ charge: charge('dm', 250, 49_250) })]);
    });

    it('refuses a fourth DM to the same recipient in 24 hours with 429, and lets one to another recipient through', () => {
      const given = [...funded(), ...dmsSent(3, at(9))];
      spec.given(given).when(sendDm()).thenThrows('pair_limit', 429);
      expect(refusal(given, sendDm()).extra).to.include({ limit: 3, remaining: 0 });
      spec
        .given(given)
        .when(sendDm({ target: { to_user_id: MEMBER } }))
        .then([sent({ to_agent_id: null, to_user_id: MEMBER, charge: charge('dm', 250, 49_000) })]);
    });

    it('keys the pair cap by recipient kind: a member by user id and by e-mail are different recipients', () => {
      const given = [...funded(), ...dmsSent(3, at(9), { to_agent_id: null, to_user_id: MEMBER })];
      spec
        .given(given)
        .when(sendDm({ target: { to_user_id: MEMBER } }))
        .thenThrows('pair_limit', 429);
      spec
        .given(given)
        .when(sendDm({ target: { to_email: 'member@example.com' } }))
        .then([sent({ to_agent_id: null, to_email: 'member@example.com', charge: charge('dm', 250, 49_000) })]);
    });

    it('keys the per-pair DM cap by recipient kind', () => {
      expect(dmPairKey({ to_agent_id: 'agt_1' })).to.equal('agt_1');
      expect(dmPairKey({ to_user_id: 'usr_1' })).to.equal('user:usr_1');
      expect(dmPairKey({ to_email: 'a@b.co' })).to.equal('email:a@b.co');
    });

    it('applies no cap when a cap is 0 (RATE_LIMIT_SCALE=0)', () => {
      spec
        .given([...funded(), ...dmsSent(3, at(9))])
        .when(sendDm({ daily_cap: 0, pair_cap: 0 }))
        .then([sent({ charge: charge('dm', 250, 49_000) })]);
    });
  });
});
