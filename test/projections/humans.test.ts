import { expect } from 'chai';
import { eventSchemas } from '../../events/catalogue.ts';
import { collectionChecksum } from '../../projections/store/checksum.ts';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { produceDigests } from '../../workers/humans/digests.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const HUMAN_PROJECTIONS = ['users', 'mails', 'claim_tokens', 'digests', 'matches', 'agents', 'api_keys'];

describe('projections: humans read models', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'root@example.com' }));
    // One of everything: sign-ups, a full claim, a rotation, a digest, a match conversation.
    const email = `proj.${process.pid}.${Date.now()}@example.com`;
    const agent = await svc.register({ owner_email: email, capabilities: ['lead-gen'] });
    const user = await signUp(svc, outbox);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: agent.body.claim_token } });
    const [mail] = await waitForMails(outbox, email);
    await svc.req('POST', '/api/protocol/claim', { headers: bearer(user.access_token), body: { claim_token: agent.body.claim_token, otp: codeIn(mail) } });
    await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/rotate-key`, { headers: bearer(user.access_token) });
    await svc.req('PATCH', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(user.access_token), body: { auto_post_on_mixer: false } });
    svc.clock.advance(1000);
    await svc.register({ capabilities: ['lead-gen'] });
    await produceDigests(svc.running.services);
    const root = await signUp(svc, outbox, 'root@example.com');
    const match = await svc.req('POST', '/api/admin/matches', {
      headers: bearer(root.access_token),
      body: { user_a_id: user.user_id, user_b_id: root.user_id },
    });
    const msg = await svc.req('POST', '/api/messages', { headers: bearer(user.access_token), body: { match_id: match.body.match_id, content: 'hello' } });
    await svc.req('GET', `/api/messages/${match.body.match_id}`, { headers: bearer(root.access_token) });
    await svc.req('POST', `/api/messages/${msg.body.message_id}/report`, { headers: bearer(root.access_token), body: { reason: 'spam' } });
    // Let every mail be delivered (its outcome is an event too).
    const until = Date.now() + 120_000;
    while ((await svc.running.services.store.collection('mails').count({ status: { $ne: 'sent' } })) > 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 25));
  });
  after(() => stopWithOutbox(svc, outbox));

  it('writes only humans events that match their JSON Schema', async () => {
    const ajv = new Ajv({ strict: false });
    (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 });
    const seen = new Set<string>();
    for (const e of events) {
      const schema = eventSchemas[e.type];
      expect(schema, e.type).to.not.equal(undefined);
      expect(ajv.validate(schema, e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
      seen.add(e.type);
    }
    for (const t of [
      'UserRegistered',
      'SessionStarted',
      'OtpIssued',
      'OtpConsumed',
      'MailQueued',
      'MailSent',
      'AgentClaimed',
      'ApiKeyReplaced',
      'AutoPostPrefsChanged',
      'DigestProduced',
      'MatchCreated',
      'MatchMessageSent',
      'MatchMessagesRead',
      'MatchMessageReported',
      'UserEmailReserved',
    ]) {
      expect(seen.has(t), t).to.equal(true);
    }
  });

  it('rebuilds the humans read models from the log into collections equal to the live ones', async () => {
    const { runner, store } = svc.running.services;
    const compared: string[] = [];
    await runner.rebuild(HUMAN_PROJECTIONS, {
      beforeSwap: async (_name, pairs) => {
        for (const [rebuilt, live] of pairs) {
          expect(await collectionChecksum(store, rebuilt), live).to.deep.equal(await collectionChecksum(store, live));
          compared.push(live);
        }
      },
    });
    expect(compared).to.include.members(['users', 'mails', 'claim_tokens', 'digests', 'matches', 'match_messages', 'agents', 'api_keys']);
    expect(await store.collection('users').count({})).to.equal(2);
    expect(await store.collection('api_keys').count({ revoked: true })).to.equal(1);
  });

  it('applies the same events twice without changing the read models (idempotent by position)', async () => {
    const { log, store } = svc.running.services;
    const { allProjections } = await import('../../projections/index.ts');
    const mine = allProjections.filter((p) => HUMAN_PROJECTIONS.includes(p.name));
    const names = mine.flatMap((p) => p.collections.map((c) => c.name));
    const before = await Promise.all(names.map((n) => collectionChecksum(store, n)));
    const ctx = { collection: <N extends string>(n: N) => store.collection(n) };
    for (const e of await log.readAll({ after: 0, maxCount: 100_000 })) for (const p of mine) if (p.handles.has(e.type)) await p.apply(e, ctx);
    expect(await Promise.all(names.map((n) => collectionChecksum(store, n)))).to.deep.equal(before);
  });
});
