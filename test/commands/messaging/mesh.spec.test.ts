import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { CreateMeshThread, InviteeFacts, PostMeshThreadMessage } from '../../../commands/messaging/mesh.ts';
import { decideCreateMeshThread, decidePostMeshThreadMessage, inviteesOf } from '../../../commands/messaging/mesh.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import {
  FIRST_MESSAGE,
  HOUR_MS,
  MESSAGE,
  NOW,
  RECIPIENT,
  SENDER,
  THIRD,
  THREAD,
  at,
  charge,
  funded,
  meshThreadCreated,
  meshThreadMessagePosted,
  threadsCreated,
} from './fixtures.ts';

const invitee = (agent_id: string, over: Partial<InviteeFacts> = {}): InviteeFacts => ({ agent_id, exists: true, blocks_creator: false, ...over });

describe('commands: mesh threads (agent-<sender>)', () => {
  describe('CreateMeshThread', () => {
    const spec = DeciderSpecification.for<CreateMeshThread, AgentState, AgentStreamEvent>({ decide: decideCreateMeshThread, ...agentAggregate });
    const create = (over: Partial<CreateMeshThread['data']> = {}): CreateMeshThread => ({
      type: 'CreateMeshThread',
      data: {
        creator_agent_id: SENDER,
        participant_agent_ids: [RECIPIENT, THIRD],
        name: 'Deal room',
        first_message: 'Welcome',
        invitees: [invitee(RECIPIENT), invitee(THIRD)],
        hourly_cap: 10,
        daily_cap: 20,
        ...over,
      },
      metadata: { now: NOW, thread_id: THREAD, first_message_id: FIRST_MESSAGE },
    });
    const created = (over: Parameters<typeof meshThreadCreated>[0] = {}) => meshThreadCreated({ created_at: NOW.toISOString(), ...over });

    it('creates a thread with the creator first and charges it a flat 0.25 credits', () => {
      spec.given(funded()).when(create()).then([created()]);
    });

    it('names each invitee once and never the creator twice', () => {
      spec
        .given(funded())
        .when(create({ participant_agent_ids: [RECIPIENT, SENDER, RECIPIENT, THIRD] }))
        .then([created()]);
      expect(inviteesOf(SENDER, [THIRD, SENDER, RECIPIENT, THIRD])).to.deep.equal([THIRD, RECIPIENT]);
    });

    it('refuses a thread without another participant with 422', () => {
      spec
        .given(funded())
        .when(create({ participant_agent_ids: [SENDER], invitees: [] }))
        .thenThrows('validation_failed', 422);
    });

    it('refuses more than 10 participants including the creator with 422', () => {
      const ten = Array.from({ length: 10 }, (_, i) => `agt_invitee${i}`);
      spec
        .given(funded())
        .when(create({ participant_agent_ids: ten, invitees: ten.map((id) => invitee(id)) }))
        .thenThrows('validation_failed', 422);
      spec
        .given(funded())
        .when(create({ participant_agent_ids: ten.slice(0, 9), invitees: ten.slice(0, 9).map((id) => invitee(id)) }))
        .thenMatches((events) => expect(events[0].data).to.have.property('participant_agent_ids').with.length(10));
    });

    it('refuses an invitee that does not exist with 404 naming it', () => {
      spec
        .given(funded())
        .when(create({ invitees: [invitee(RECIPIENT), invitee(THIRD, { exists: false })] }))
        .thenThrows('agent_not_found', 404);
      try {
        decideCreateMeshThread(create({ invitees: [invitee(RECIPIENT)] }), funded().reduce(agentAggregate.evolve, agentAggregate.initialState()));
        expect.fail('expected a refusal');
      } catch (err) {
        expect(err).to.be.instanceOf(DomainError);
        expect((err as DomainError).message).to.equal(`Agent ${THIRD} not found`);
      }
    });

    it('refuses an invitee that blocks the creator with 403', () => {
      spec
        .given(funded())
        .when(create({ invitees: [invitee(RECIPIENT, { blocks_creator: true }), invitee(THIRD)] }))
        .thenThrows('message_not_delivered', 403);
    });

    it('refuses a creator that is not registered with 404', () => {
      spec.given([]).when(create()).thenThrows('agent_not_found', 404);
    });

    it('refuses the eleventh thread within an hour with 429 rate_limited', () => {
      spec
        .given([...funded(), ...threadsCreated(10, at(8, 45))])
        .when(create())
        .thenThrows('rate_limited', 429);
    });

    it('refuses the 21st thread within 24 hours with 429 daily_cap, however they spread over the hours', () => {
      const spread = [0, 1, 2, 3].flatMap((h) => threadsCreated(5, new Date(NOW.getTime() - (h + 2) * HOUR_MS)));
      spec
        .given([...funded(), ...spread])
        .when(create())
        .thenThrows('daily_cap', 429);
      spec
        .given([...funded(), ...spread])
        .when(create({ daily_cap: 0 }))
        .thenMatches((events) => expect(events).to.have.length(1));
    });

    it('refuses with 402 when the balance does not cover 0.25 credits', () => {
      spec.given(funded(SENDER, 0)).when(create()).thenThrows('insufficient_credits', 402);
    });
  });

  describe('PostMeshThreadMessage', () => {
    const spec = DeciderSpecification.for<PostMeshThreadMessage, AgentState, AgentStreamEvent>({ decide: decidePostMeshThreadMessage, ...agentAggregate });
    const post = (over: Partial<PostMeshThreadMessage['data']> = {}): PostMeshThreadMessage => ({
      type: 'PostMeshThreadMessage',
      data: { sender_agent_id: SENDER, thread_id: THREAD, participant_agent_ids: [SENDER, RECIPIENT, THIRD], message: 'Any news?', ...over },
      metadata: { now: NOW, message_id: MESSAGE },
    });

    it('posts a message to the thread and charges the sender 0.25 credits', () => {
      spec
        .given(funded())
        .when(post())
        .then([meshThreadMessagePosted({ posted_at: NOW.toISOString(), charge: charge('mesh_thread_message', 250, 49_750) })]);
    });

    it('refuses an agent that is not a participant with 403', () => {
      spec
        .given(funded())
        .when(post({ participant_agent_ids: [RECIPIENT, THIRD] }))
        .thenThrows('not_a_participant', 403);
    });

    it('refuses a sender that is not registered with 404', () => {
      spec.given([]).when(post()).thenThrows('agent_not_found', 404);
    });

    it('refuses with 402 when the balance does not cover 0.25 credits', () => {
      spec.given(funded(SENDER, 249)).when(post()).thenThrows('insufficient_credits', 402);
    });
  });
});
