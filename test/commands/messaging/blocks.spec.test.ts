import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { BlockAgent, UnblockAgent } from '../../../commands/messaging/blocks.ts';
import { decideBlockAgent, decideUnblockAgent } from '../../../commands/messaging/blocks.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { NOW, RECIPIENT, SENDER, agentBlocked, agentUnblocked, funded } from './fixtures.ts';

// The blocker is RECIPIENT (it blocks SENDER), on its own stream.
const data = (over: Partial<BlockAgent['data']> = {}): BlockAgent['data'] => ({ agent_id: RECIPIENT, target_agent_id: SENDER, target_exists: true, ...over });
const block = (over: Partial<BlockAgent['data']> = {}): BlockAgent => ({ type: 'BlockAgent', data: data(over), metadata: { now: NOW } });
const unblock = (over: Partial<UnblockAgent['data']> = {}): UnblockAgent => ({ type: 'UnblockAgent', data: data(over), metadata: { now: NOW } });

describe('commands: BlockAgent and UnblockAgent (agent-<blocker>)', () => {
  const blocks = DeciderSpecification.for<BlockAgent, AgentState, AgentStreamEvent>({ decide: decideBlockAgent, ...agentAggregate });
  const unblocks = DeciderSpecification.for<UnblockAgent, AgentState, AgentStreamEvent>({ decide: decideUnblockAgent, ...agentAggregate });
  const blocker = funded(RECIPIENT);

  it('blocks an agent, free of charge', () => {
    blocks
      .given(blocker)
      .when(block())
      .then([agentBlocked({ blocked_at: NOW.toISOString() })]);
  });

  it('appends nothing when the agent is already blocked', () => {
    blocks
      .given([...blocker, agentBlocked()])
      .when(block())
      .thenNothingHappened();
  });

  it('blocks again after an unblock', () => {
    blocks
      .given([...blocker, agentBlocked(), agentUnblocked()])
      .when(block())
      .then([agentBlocked({ blocked_at: NOW.toISOString() })]);
  });

  it('unblocks a blocked agent', () => {
    unblocks
      .given([...blocker, agentBlocked()])
      .when(unblock())
      .then([agentUnblocked({ unblocked_at: NOW.toISOString() })]);
  });

  it('appends nothing when unblocking an agent that is not blocked', () => {
    unblocks.given(blocker).when(unblock()).thenNothingHappened();
  });

  it('refuses to block or unblock oneself with 400', () => {
    blocks
      .given(blocker)
      .when(block({ target_agent_id: RECIPIENT }))
      .thenThrows('cannot_block_self', 400);
    unblocks
      .given(blocker)
      .when(unblock({ target_agent_id: RECIPIENT }))
      .thenThrows('cannot_block_self', 400);
  });

  it('refuses a target that does not exist with 404', () => {
    blocks
      .given(blocker)
      .when(block({ target_exists: false }))
      .thenThrows('agent_not_found', 404);
    unblocks
      .given(blocker)
      .when(unblock({ target_exists: false }))
      .thenThrows('agent_not_found', 404);
  });

  it('refuses a blocker that is not registered with 404', () => {
    blocks.given([]).when(block()).thenThrows('agent_not_found', 404);
    unblocks.given([]).when(unblock()).thenThrows('agent_not_found', 404);
  });
});
