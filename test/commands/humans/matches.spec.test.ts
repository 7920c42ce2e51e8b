import { expect } from 'chai';
import type {
  CreateMatch,
  DeleteMatchMessage,
  MarkMatchRead,
  MatchEvent,
  MatchState,
  ReportMatchMessage,
  SendMatchMessage,
} from '../../../commands/humans/matches.ts';
import {
  decideCreateMatch,
  decideDeleteMatchMessage,
  decideMarkMatchRead,
  decideReportMatchMessage,
  decideSendMatchMessage,
  matchAggregate,
} from '../../../commands/humans/matches.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import {
  ADMIN,
  iso,
  MATCH,
  matchCreated,
  matchMessageDeleted,
  matchMessageReported,
  matchMessageSent,
  matchMessagesRead,
  MESSAGE,
  NOW,
  OTHER_USER,
  USER,
} from './fixtures.ts';

const STRANGER = 'usr_stranger000000000000';
const spec = <C>(decide: (command: C, state: MatchState) => MatchEvent[]) => DeciderSpecification.for<C, MatchState, MatchEvent>({ decide, ...matchAggregate });
const conversation = () => [matchCreated(), matchMessageSent()];

describe('commands: the match aggregate (match-<id>)', () => {
  it('knows each message’s recipient, read, deleted and reported state', () => {
    const s = [...conversation(), matchMessagesRead(), matchMessageReported(), matchMessageDeleted()].reduce(
      matchAggregate.evolve,
      matchAggregate.initialState(),
    );
    expect(s.members).to.deep.equal([USER, OTHER_USER]);
    expect(s.created).to.deep.equal(matchCreated().data);
    expect(s.messages[MESSAGE]).to.deep.include({ recipient_id: OTHER_USER, read: true, deleted: true, reported_by: [OTHER_USER] });
  });
});

describe('commands: CreateMatch (match-<id>)', () => {
  const create = (over: Partial<CreateMatch['data']> = {}): CreateMatch => ({
    type: 'CreateMatch',
    data: { user_a_id: USER, user_b_id: OTHER_USER, reason: 'Both in SaaS', users_exist: true, created_by: ADMIN, ...over },
    metadata: { now: NOW, match_id: MATCH },
  });

  it('creates the match', () => {
    spec(decideCreateMatch)
      .given([])
      .when(create())
      .then([matchCreated({ created_at: iso(NOW) })]);
  });

  it('refuses a user that does not exist with 404', () => {
    spec(decideCreateMatch)
      .given([])
      .when(create({ users_exist: false }))
      .thenThrows('user_not_found', 404);
  });

  it('refuses a match of a user with themself with 400', () => {
    spec(decideCreateMatch)
      .given([])
      .when(create({ user_b_id: USER }))
      .thenThrows('same_user', 400);
  });

  it('appends nothing for a retried creation', () => {
    spec(decideCreateMatch).given([matchCreated()]).when(create()).thenNothingHappened();
  });
});

describe('commands: SendMatchMessage (match-<id>)', () => {
  const send = (user_id = USER, content = 'Hi there'): SendMatchMessage => ({
    type: 'SendMatchMessage',
    data: { match_id: MATCH, user_id, content },
    metadata: { now: NOW, message_id: MESSAGE },
  });

  it('sends the message to the other member, trimmed', () => {
    spec(decideSendMatchMessage)
      .given([matchCreated()])
      .when(send(OTHER_USER, '  Hello back '))
      .then([matchMessageSent({ sender_id: OTHER_USER, recipient_id: USER, content: 'Hello back', sent_at: iso(NOW) })]);
  });

  it('refuses a blank message with 422', () => {
    spec(decideSendMatchMessage).given([matchCreated()]).when(send(USER, '   ')).thenThrows('validation_failed', 422);
  });

  it('refuses a match that does not exist with 404', () => {
    spec(decideSendMatchMessage).given([]).when(send()).thenThrows('match_not_found', 404);
  });

  it('refuses anyone but the two members with 403', () => {
    spec(decideSendMatchMessage).given([matchCreated()]).when(send(STRANGER)).thenThrows('not_match_member', 403);
  });

  it('appends nothing for a retried message', () => {
    spec(decideSendMatchMessage).given(conversation()).when(send()).thenNothingHappened();
  });
});

describe('commands: DeleteMatchMessage (match-<id>)', () => {
  const remove = (user_id = USER): DeleteMatchMessage => ({
    type: 'DeleteMatchMessage',
    data: { match_id: MATCH, message_id: MESSAGE, user_id },
    metadata: { now: NOW },
  });

  it('deletes the sender’s own message', () => {
    spec(decideDeleteMatchMessage)
      .given(conversation())
      .when(remove())
      .then([matchMessageDeleted({ deleted_at: iso(NOW) })]);
  });

  it('refuses the recipient with 403', () => {
    spec(decideDeleteMatchMessage).given(conversation()).when(remove(OTHER_USER)).thenThrows('not_sender', 403);
  });

  it('refuses a stranger with 403', () => {
    spec(decideDeleteMatchMessage).given(conversation()).when(remove(STRANGER)).thenThrows('not_match_member', 403);
  });

  it('refuses a deleted or unknown message with 404', () => {
    spec(decideDeleteMatchMessage)
      .given([...conversation(), matchMessageDeleted()])
      .when(remove())
      .thenThrows('message_not_found', 404);
    spec(decideDeleteMatchMessage).given([matchCreated()]).when(remove()).thenThrows('message_not_found', 404);
  });
});

describe('commands: ReportMatchMessage (match-<id>)', () => {
  const report = (user_id = OTHER_USER): ReportMatchMessage => ({
    type: 'ReportMatchMessage',
    data: { match_id: MATCH, message_id: MESSAGE, user_id, reason: 'spam', details: null },
    metadata: { now: NOW },
  });

  it('records the recipient’s report', () => {
    spec(decideReportMatchMessage)
      .given(conversation())
      .when(report())
      .then([matchMessageReported({ reported_at: iso(NOW) })]);
  });

  it('appends nothing for a second report by the same member', () => {
    spec(decideReportMatchMessage)
      .given([...conversation(), matchMessageReported()])
      .when(report())
      .thenNothingHappened();
  });

  it('refuses a report of one’s own message with 400', () => {
    spec(decideReportMatchMessage).given(conversation()).when(report(USER)).thenThrows('cannot_report_own', 400);
  });

  it('refuses a stranger with 403 and an unknown message with 404', () => {
    spec(decideReportMatchMessage).given(conversation()).when(report(STRANGER)).thenThrows('not_match_member', 403);
    spec(decideReportMatchMessage).given([matchCreated()]).when(report()).thenThrows('message_not_found', 404);
  });
});

describe('commands: MarkMatchRead (match-<id>)', () => {
  const read = (user_id = OTHER_USER): MarkMatchRead => ({ type: 'MarkMatchRead', data: { match_id: MATCH, user_id }, metadata: { now: NOW } });

  it('marks the messages the caller received as read', () => {
    spec(decideMarkMatchRead)
      .given(conversation())
      .when(read())
      .then([matchMessagesRead({ read_at: iso(NOW) })]);
  });

  it('appends nothing when nothing is unread (read, deleted, or sent by the caller)', () => {
    spec(decideMarkMatchRead)
      .given([...conversation(), matchMessagesRead()])
      .when(read())
      .thenNothingHappened();
    spec(decideMarkMatchRead)
      .given([...conversation(), matchMessageDeleted()])
      .when(read())
      .thenNothingHappened();
    spec(decideMarkMatchRead).given(conversation()).when(read(USER)).thenNothingHappened();
  });

  it('refuses a match that does not exist with 404 and a stranger with 403', () => {
    spec(decideMarkMatchRead).given([]).when(read()).thenThrows('match_not_found', 404);
    spec(decideMarkMatchRead).given(conversation()).when(read(STRANGER)).thenThrows('not_match_member', 403);
  });
});
