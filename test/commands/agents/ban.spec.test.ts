import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { BanAgent } from '../../../commands/agents/ban.ts';
import { decideBanAgent } from '../../../commands/agents/ban.ts';
import type { UpdateProfile } from '../../../commands/agents/update-profile.ts';
import { decideUpdateProfile } from '../../../commands/agents/update-profile.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, NOW, agentBanned, agentDeactivated, agentOwnerLinked, funded, hex } from './fixtures.ts';

const ADMIN = 'usr_admin000000000000000';
const OWNER = 'usr_owner000000000000000';

describe('commands: agents BanAgent (agent-<id>)', () => {
  const spec = DeciderSpecification.for<BanAgent, AgentState, AgentStreamEvent>({ decide: decideBanAgent, ...agentAggregate });
  const ban = (reason = 'Spam'): BanAgent => ({ type: 'BanAgent', data: { agent_id: AGENT, admin_user_id: ADMIN, reason }, metadata: { now: NOW } });
  const banned = (over: Parameters<typeof agentBanned>[0] = {}) =>
    agentBanned({ by_user_id: ADMIN, reason: 'Spam', api_key_hash: hex('a'), banned_at: NOW.toISOString(), ...over });

  it('revokes the key the agent holds and records the admin and the reason', () => {
    spec.given(funded()).when(ban()).then([banned()]);
  });

  it('records the account the agent leaves', () => {
    spec
      .given([...funded(), agentOwnerLinked({ user_id: OWNER })])
      .when(ban('Impersonation'))
      .then([banned({ reason: 'Impersonation', owner_user_id: OWNER })]);
  });

  it('refuses an unknown agent with 404, a banned one with 410 agent_banned, a deactivated one with 410 agent_deactivated', () => {
    spec.given([]).when(ban()).thenThrows('agent_not_found', 404);
    spec
      .given([...funded(), banned()])
      .when(ban())
      .thenThrows('agent_banned', 410);
    spec
      .given([...funded(), agentDeactivated()])
      .when(ban())
      .thenThrows('agent_deactivated', 410);
  });

  it('a banned agent accepts no other command either', () => {
    const update: UpdateProfile = { type: 'UpdateProfile', data: { agent_id: AGENT, name: 'Back' }, metadata: { now: NOW } };
    DeciderSpecification.for<UpdateProfile, AgentState, AgentStreamEvent>({ decide: decideUpdateProfile, ...agentAggregate })
      .given([...funded(), banned()])
      .when(update)
      .thenThrows('agent_banned', 410);
  });

  it('never releases the owner e-mail (a deactivation releases it after 30 days)', () => {
    const fold = (events: AgentStreamEvent[]) => events.reduce(agentAggregate.evolve, agentAggregate.initialState());
    expect(fold([...funded(), banned()]).owner_email_released_at).to.equal(null);
    expect(fold([...funded(), agentDeactivated()]).owner_email_released_at).to.be.a('string');
  });
});
