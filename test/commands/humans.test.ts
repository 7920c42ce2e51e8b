import { expect } from 'chai';
import { hashPassword, verifyPassword } from '../../commands/humans/passwords.ts';
import { otpAggregate } from '../../commands/humans/otp.ts';
import { userAggregate } from '../../commands/humans/user.ts';
import { matchAggregate } from '../../commands/humans/matches.ts';
import { draftComment, openers, quickReplies } from '../../commands/humans/generated-text.ts';
import { TokenService } from '../../commands/humans/tokens.ts';
import type { Event } from '../../events/types.ts';
import type { Aggregate } from '../../commands/handler.ts';
import type { DomainEvent } from '../../events/catalogue.ts';

// Fixtures here are partial events: they carry only the fields each evolve reads.
const fold = <S>(agg: Aggregate<S>, events: Array<Event<string, unknown>>) => (events as DomainEvent[]).reduce(agg.evolve, agg.initialState());
const hex = 'a'.repeat(64);

describe('humans: passwords and tokens', () => {
  it('hashes passwords with scrypt and a salt, verifying only the right one', async () => {
    const h1 = await hashPassword('correct horse');
    const h2 = await hashPassword('correct horse');
    expect(h1).to.match(/^scrypt\$15\$8\$1\$/);
    expect(h1).to.not.equal(h2);
    expect(await verifyPassword('correct horse', h1)).to.equal(true);
    expect(await verifyPassword('correct horsf', h1)).to.equal(false);
    expect(await verifyPassword('x', 'not-a-hash')).to.equal(false);
  });

  it('keeps access and refresh tokens apart and honours the injected clock', async () => {
    let now = new Date('2026-01-01T00:00:00.000Z');
    const t = new TokenService('server-secret-of-sufficient-length-0000', null, () => now);
    const access = await t.access({ userId: 'usr_1', sessionId: 'ses_1' });
    const refresh = await t.refresh({ userId: 'usr_1', sessionId: 'ses_1' });
    expect(await t.verifyAccess(access)).to.deep.equal({ userId: 'usr_1', sessionId: 'ses_1' });
    expect(await t.verifyAccess(refresh.token)).to.equal(null);
    expect(await t.verifyRefresh(access)).to.equal(null);
    expect((await t.verifyRefresh(refresh.token))?.jti).to.equal(refresh.jti);
    now = new Date(now.getTime() + 15 * 60_000 + 1000);
    expect(await t.verifyAccess(access)).to.equal(null);
    expect(await t.verifyRefresh(refresh.token)).to.not.equal(null);
    now = new Date(now.getTime() + 7 * 24 * 3600_000);
    expect(await t.verifyRefresh(refresh.token)).to.equal(null);
    expect(await new TokenService('another-secret-of-sufficient-length-000', null, () => new Date('2026-01-01T00:00:00.000Z')).verifyAccess(access)).to.equal(
      null,
    );
  });
});

describe('humans: aggregates (given events, then state)', () => {
  it('otp: a new code replaces the previous one; failures and consumption apply to the current code only', () => {
    const s = fold(otpAggregate, [
      {
        type: 'OtpIssued',
        data: { otp_id: 'otp_1', purpose: 'signup', code_hash: hex, issued_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-01T00:10:00.000Z' },
      },
      { type: 'OtpAttemptFailed', data: { otp_id: 'otp_1', failed_at: '2026-01-01T00:01:00.000Z', attempts: 1 } },
      {
        type: 'OtpIssued',
        data: { otp_id: 'otp_2', purpose: 'signup', code_hash: hex, issued_at: '2026-01-01T00:02:00.000Z', expires_at: '2026-01-01T00:12:00.000Z' },
      },
      { type: 'OtpConsumed', data: { otp_id: 'otp_1', consumed_at: '2026-01-01T00:03:00.000Z' } },
    ]);
    expect(s.current).to.include({ otp_id: 'otp_2', attempts: 0, consumed: false });
    expect(s.issued).to.have.length(2);
    const later = otpAggregate.evolve(s, {
      type: 'OtpIssued',
      data: { otp_id: 'otp_3', purpose: 'signup', code_hash: hex, issued_at: '2026-01-01T01:03:00.000Z', expires_at: '2026-01-01T01:13:00.000Z' },
    });
    expect(later.issued).to.deep.equal(['2026-01-01T01:03:00.000Z']);
  });

  it('user: refresh rotation replaces the session hash; a revoked session stays revoked; expired sessions are dropped', () => {
    const s = fold(userAggregate, [
      {
        type: 'UserRegistered',
        data: { user_id: 'usr_1', email: 'a@example.com', full_name: 'A', password_hash: 'scrypt$x', registered_at: '2026-01-01T00:00:00.000Z' },
      },
      {
        type: 'SessionStarted',
        data: { user_id: 'usr_1', session_id: 's1', token_hash: 'h1', started_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-08T00:00:00.000Z' },
      },
      {
        type: 'SessionRefreshed',
        data: { user_id: 'usr_1', session_id: 's1', token_hash: 'h2', refreshed_at: '2026-01-02T00:00:00.000Z', expires_at: '2026-01-09T00:00:00.000Z' },
      },
      {
        type: 'SessionStarted',
        data: { user_id: 'usr_1', session_id: 's2', token_hash: 'h3', started_at: '2026-01-02T00:00:00.000Z', expires_at: '2026-01-09T00:00:00.000Z' },
      },
      { type: 'SessionRevoked', data: { user_id: 'usr_1', session_id: 's2', reason: 'refresh_token_reuse', revoked_at: '2026-01-03T00:00:00.000Z' } },
    ]);
    expect(s.sessions.s1).to.include({ token_hash: 'h2', revoked: false });
    expect(s.sessions.s2.revoked).to.equal(true);
    const later = userAggregate.evolve(s, {
      type: 'SessionStarted',
      data: { user_id: 'usr_1', session_id: 's3', token_hash: 'h4', started_at: '2026-02-01T00:00:00.000Z', expires_at: '2026-02-08T00:00:00.000Z' },
    });
    expect(Object.keys(later.sessions)).to.deep.equal(['s3']);
  });

  it('match: messages know their recipient, read and deleted state', () => {
    const s = fold(matchAggregate, [
      {
        type: 'MatchCreated',
        data: { match_id: 'mtc_1', user_a_id: 'usr_a', user_b_id: 'usr_b', reason: null, created_by: 'usr_admin', created_at: '2026-01-01T00:00:00.000Z' },
      },
      {
        type: 'MatchMessageSent',
        data: { match_id: 'mtc_1', message_id: 'msg_1', sender_id: 'usr_a', recipient_id: 'usr_b', content: 'hi', sent_at: '2026-01-01T00:00:01.000Z' },
      },
      { type: 'MatchMessagesRead', data: { match_id: 'mtc_1', user_id: 'usr_b', message_ids: ['msg_1'], read_at: '2026-01-01T00:00:02.000Z' } },
      { type: 'MatchMessageDeleted', data: { match_id: 'mtc_1', message_id: 'msg_1', deleted_by: 'usr_a', deleted_at: '2026-01-01T00:00:03.000Z' } },
    ]);
    expect(s.members).to.deep.equal(['usr_a', 'usr_b']);
    expect(s.messages.msg_1).to.include({ recipient_id: 'usr_b', read: true, deleted: true });
  });
});

describe('humans: generated text (offline, deterministic)', () => {
  it('drafts the same comment for the same inputs and stays within the comment limit', () => {
    const input = {
      post: { post_id: 'pst_1', title: 'T'.repeat(300), body: 'b', agent_name: 'Ann', hashtags: ['ai'], room_slug: null },
      agent: { agent_id: 'agt_1', name: 'Bot', capabilities: ['lead-gen'] },
      brief: 'x'.repeat(900),
    };
    expect(draftComment(input)).to.equal(draftComment(input));
    expect(draftComment(input).length).to.be.at.most(1000);
  });

  it('gives 3 openers and 4 quick replies', () => {
    const me = { user_id: 'usr_a', full_name: 'Ann Lee', capabilities: ['lead-gen'] };
    const them = { user_id: 'usr_b', full_name: 'Bo Chan', capabilities: ['lead-gen', 'b2b-sales'] };
    expect(openers('mtc_1', me, them, null)).to.have.length(3);
    expect(openers('mtc_1', me, them, 'x')[1]).to.contain('lead gen');
    expect(quickReplies('mtc_1', null, them)).to.have.length(4);
    expect(quickReplies('mtc_1', { message_id: 'msg_1', content: 'Thanks a lot' }, them)[0]).to.match(/welcome/);
  });
});
