import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { MarkDigestRead, RecordDigest, ReplyFromInbox, SetAutoPostPrefs } from '../../../commands/humans/owner.ts';
import { decideMarkDigestRead, decideRecordDigest, decideReplyFromInbox, decideSetAutoPostPrefs } from '../../../commands/humans/owner.ts';
import type { UserState, UserStreamEvent } from '../../../commands/humans/user.ts';
import { userAggregate } from '../../../commands/humans/user.ts';
import type { AutoPostPrefsChanged } from '../../../events/humans.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import {
  AGENT,
  agentClaimed,
  at,
  DIGEST,
  digestProduced,
  digestRead,
  directMessageSent,
  iso,
  NOW,
  OTHER_AGENT,
  OTHER_USER,
  registered,
  USER,
  userRegistered,
} from './fixtures.ts';

const agents = <C>(decide: (command: C, state: AgentState) => AgentStreamEvent[]) =>
  DeciderSpecification.for<C, AgentState, AgentStreamEvent>({ decide, ...agentAggregate });
const users = <C>(decide: (command: C, state: UserState) => UserStreamEvent[]) =>
  DeciderSpecification.for<C, UserState, UserStreamEvent>({ decide, ...userAggregate });
const owned = () => [...registered(), agentClaimed({ user_id: USER })];

describe('commands: SetAutoPostPrefs (agent-<id>)', () => {
  const spec = agents(decideSetAutoPostPrefs);
  const set = (prefs: SetAutoPostPrefs['data']['prefs'], user_id = USER): SetAutoPostPrefs => ({
    type: 'SetAutoPostPrefs',
    data: { agent_id: AGENT, user_id, prefs },
    metadata: { now: NOW },
  });
  const changed = (data: Partial<AutoPostPrefsChanged['data']>): AutoPostPrefsChanged => ({
    type: 'AutoPostPrefsChanged',
    data: { agent_id: AGENT, changed_at: iso(NOW), ...data },
  });

  it('records the toggles the owner sent, and only those', () => {
    spec
      .given(owned())
      .when(set({ auto_post_on_scout: false }))
      .then([changed({ auto_post_on_scout: false })]);
    spec
      .given(owned())
      .when(set({ auto_post_on_scout: true, auto_post_on_mixer: false }))
      .then([changed({ auto_post_on_scout: true, auto_post_on_mixer: false })]);
  });

  it('appends nothing without a toggle', () => {
    spec.given(owned()).when(set({})).thenNothingHappened();
  });

  it('refuses anyone but the linked user with 403', () => {
    spec
      .given(owned())
      .when(set({ auto_post_on_scout: false }, OTHER_USER))
      .thenThrows('not_owner', 403);
    spec
      .given(registered())
      .when(set({ auto_post_on_scout: false }))
      .thenThrows('not_owner', 403);
  });

  it('refuses an agent that does not exist with 404', () => {
    spec
      .given([])
      .when(set({ auto_post_on_scout: false }))
      .thenThrows('agent_not_found', 404);
  });
});

describe('commands: RecordDigest (user-<id>)', () => {
  const spec = users(decideRecordDigest);
  const items = digestProduced().data.items;
  const record = (over: Partial<RecordDigest['data']> = {}): RecordDigest => ({
    type: 'RecordDigest',
    data: { user_id: USER, agent_id: AGENT, items, since: '2026-03-03T09:00:00.000Z', ...over },
    metadata: { now: NOW, digest_id: DIGEST },
  });

  it('records the digest the worker computed', () => {
    spec
      .given([userRegistered()])
      .when(record())
      .then([digestProduced({ produced_at: iso(NOW) })]);
  });

  it('appends nothing for a digest already recorded (a job run twice for the period)', () => {
    spec.given([userRegistered(), digestProduced()]).when(record()).thenNothingHappened();
  });

  it('appends nothing for an empty digest or an unknown user', () => {
    spec
      .given([userRegistered()])
      .when(record({ items: [] }))
      .thenNothingHappened();
    spec.given([]).when(record()).thenNothingHappened();
  });
});

describe('commands: MarkDigestRead (user-<id>)', () => {
  const spec = users(decideMarkDigestRead);
  const mark = (digest_id = DIGEST): MarkDigestRead => ({ type: 'MarkDigestRead', data: { user_id: USER, digest_id }, metadata: { now: NOW } });

  it('marks one of the user’s digests read', () => {
    spec
      .given([userRegistered(), digestProduced()])
      .when(mark())
      .then([digestRead({ read_at: iso(NOW) })]);
  });

  it('appends nothing for a digest already read', () => {
    spec.given([userRegistered(), digestProduced(), digestRead()]).when(mark()).thenNothingHappened();
  });

  it('refuses a digest that is not the user’s with 404', () => {
    spec.given([userRegistered(), digestProduced()]).when(mark('dig_someone_elses')).thenThrows('digest_not_found', 404);
  });
});

describe('commands: ReplyFromInbox (agent-<owner’s agent>)', () => {
  const spec = agents(decideReplyFromInbox);
  const reply = (over: Partial<ReplyFromInbox['data']> = {}): ReplyFromInbox => ({
    type: 'ReplyFromInbox',
    data: {
      from_agent_id: AGENT,
      target: { to_agent_id: OTHER_AGENT },
      message: 'Thanks, let us talk',
      recipient_exists: true,
      recipient_blocks_sender: false,
      daily_cap: 50,
      pair_cap: 3,
      owner_user_id: USER,
      conversation_exists: true,
      ...over,
    },
    metadata: { now: NOW, dm_id: 'dm_reply00000000000000' },
  });
  const sent = directMessageSent({
    dm_id: 'dm_reply00000000000000',
    agent_id: AGENT,
    from_agent_id: AGENT,
    from_agent_name: 'Agent',
    to_agent_id: OTHER_AGENT,
    to_user_id: null,
    message: 'Thanks, let us talk',
    sent_at: iso(NOW),
    charge: { action: 'owner_dm_reply', amount_mc: 250, balance_after_mc: 49_750 },
    owner_user_id: USER,
  });

  it('sends the reply as the owner’s agent, charged as an owner reply, even within the first hour of an unclaimed agent', () => {
    spec
      .given(registered({ registered_at: iso(at(9, 29)) }))
      .when(reply())
      .then([sent]);
  });

  it('refuses a reply to an agent that never wrote to the owner with 404', () => {
    spec
      .given(registered())
      .when(reply({ conversation_exists: false }))
      .thenThrows('conversation_not_found', 404);
  });

  it('refuses a blank message with 422 before anything else', () => {
    spec
      .given(registered())
      .when(reply({ message: '   ', conversation_exists: false }))
      .thenThrows('validation_failed', 422);
  });

  it('keeps the DM rules: a recipient that blocks the sender gets nothing (403)', () => {
    spec
      .given(registered())
      .when(reply({ recipient_blocks_sender: true }))
      .thenThrows('message_not_delivered', 403);
  });
});
