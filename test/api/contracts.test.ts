import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TRANSITIONS } from '../../commands/marketplace/contract.ts';
import type { PartyVerb } from '../../commands/marketplace/contract.ts';
import type { ContractStatus } from '../../events/marketplace.ts';
import { CONTRACT_STATES } from '../../events/marketplace.ts';
import { OUTBOX_FILE } from '../../workers/humans/mail/transport.ts';
import { defined } from '../helpers/defined.ts';
import { readOutbox, waitForMails } from '../helpers/mail.ts';
import { startTestService, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import type { Family, Party } from './marketplace-helpers.ts';
import { as, bearer, contracts, FAMILIES, move, openContract, party } from './marketplace-helpers.ts';

const VERBS = Object.keys(TRANSITIONS) as PartyVerb[];

describe('api: task contracts (the DECISIONS state machine over HTTP, both auth families)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let requester: Party;
  let provider: Party;
  let stranger: Party;
  let admin: string;
  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'judge@example.com' }));
    requester = await party(svc, outbox);
    provider = await party(svc, outbox);
    stranger = await party(svc, outbox);
    admin = (await signUp(svc, outbox, 'judge@example.com')).access_token;
  });
  after(() => stopWithOutbox(svc, outbox));

  const actorFor = (verb: PartyVerb) => (TRANSITIONS[verb].by === 'provider' ? provider : requester);
  const resolve = (id: string, outcome: string) => svc.req('POST', `/api/admin/disputes/${id}/resolve`, bearer(admin, { outcome, note: `ruled ${outcome}` }));

  /** A contract driven through the table's own verbs into `state`. */
  async function contractIn(family: Family, state: ContractStatus): Promise<string> {
    const id = await openContract(svc, family, requester, provider);
    const path: Record<ContractStatus, Array<[Party, string]>> = {
      open: [],
      accepted: [[provider, 'accept']],
      in_progress: [
        [provider, 'accept'],
        [provider, 'start'],
      ],
      delivered: [
        [provider, 'accept'],
        [provider, 'start'],
        [provider, 'deliver'],
      ],
      completed: [
        [provider, 'accept'],
        [provider, 'start'],
        [provider, 'deliver'],
        [requester, 'complete'],
      ],
      disputed: [
        [provider, 'accept'],
        [requester, 'dispute'],
      ],
      cancelled: [[requester, 'cancel']],
      refunded: [
        [provider, 'accept'],
        [requester, 'dispute'],
      ],
    };
    for (const [by, verb] of path[state]) await move(svc, family, by, id, verb);
    if (state === 'refunded') expect((await resolve(id, 'refunded')).status).to.equal(200);
    return id;
  }

  for (const family of FAMILIES) {
    describe(family, () => {
      for (const state of CONTRACT_STATES) {
        it(`from ${state}: every verb the table allows moves it, every other verb is 409 and changes nothing`, async () => {
          const id = await contractIn(family, state);
          for (const verb of VERBS.filter((v) => !TRANSITIONS[v].from.includes(state))) {
            const r = await svc.req('POST', `${contracts(family)}/${id}/${verb}`, as(family, actorFor(verb)));
            expect(r.status, `${verb} from ${state}: ${r.text}`).to.equal(409);
            expect(r.body).to.include({ code: 'invalid_transition', state });
          }
          const after = await svc.req('GET', `${contracts(family)}/${id}`, as(family, requester));
          expect(after.body.state).to.equal(state);
          if (state !== 'disputed') {
            const r = await resolve(id, 'completed');
            expect(r.status, `resolve from ${state}`).to.equal(409);
          }
          for (const verb of VERBS.filter((v) => TRANSITIONS[v].from.includes(state))) {
            const actors = TRANSITIONS[verb].by === 'either' ? [requester, provider] : [actorFor(verb)];
            for (const actor of actors) {
              const fresh = await contractIn(family, state);
              const body = verb === 'complete' ? { rating: 5, note: 'great' } : { note: `${verb} note` };
              const moved = await move(svc, family, actor, fresh, verb, body);
              expect(moved.state, `${verb} from ${state}`).to.equal(TRANSITIONS[verb].to);
              if (verb === 'complete') expect(moved.rating).to.equal(5);
              // The transition answers the contract's whole view, as its detail does.
              expect(moved, `${verb} from ${state}`).to.deep.equal((await svc.req('GET', `${contracts(family)}/${fresh}`, as(family, actor))).body);
            }
          }
        });
      }

      it('resolves a dispute to completed, in_progress or refunded (super admin only)', async () => {
        for (const outcome of ['completed', 'in_progress', 'refunded']) {
          const id = await contractIn(family, 'disputed');
          const member = await svc.req('POST', `/api/admin/disputes/${id}/resolve`, as('bearer', requester, { outcome, note: 'me' }));
          expect(member.status).to.equal(403);
          const r = await resolve(id, outcome);
          expect(r.status, r.text).to.equal(200);
          expect(r.body.contract.state).to.equal(outcome);
          const seen = await svc.req('GET', `${contracts(family)}/${id}`, as(family, provider));
          expect(seen.body).to.include({ state: outcome, outcome });
        }
      });

      it('refuses the other party’s verbs (403), a third party (403 on read and write), an unknown contract (404), a rating outside 1-5 (422)', async () => {
        const id = await contractIn(family, 'open');
        const wrong = await svc.req('POST', `${contracts(family)}/${id}/accept`, as(family, requester));
        expect(wrong.status).to.equal(403);
        expect(wrong.body.code).to.equal('wrong_contract_role');
        for (const verb of VERBS) {
          const r = await svc.req('POST', `${contracts(family)}/${id}/${verb}`, as(family, stranger));
          expect(r.status, verb).to.equal(403);
          expect(r.body.code).to.equal('not_contract_party');
        }
        expect((await svc.req('GET', `${contracts(family)}/${id}`, as(family, stranger))).status).to.equal(403);
        expect((await svc.req('GET', `${contracts(family)}/ctr_unknown`, as(family, requester))).status).to.equal(404);
        expect((await svc.req('POST', `${contracts(family)}/ctr_unknown/accept`, as(family, provider))).status).to.equal(404);
        const delivered = await contractIn(family, 'delivered');
        for (const rating of [0, 6, 4.5]) {
          const r = await svc.req('POST', `${contracts(family)}/${delivered}/complete`, as(family, requester, { rating }));
          expect(r.status, String(rating)).to.equal(422);
        }
        const mine = await svc.req('GET', `${contracts(family)}?role=provider`, as(family, provider));
        expect(mine.body.items.map((c: { contract_id: string }) => c.contract_id)).to.include(id);
        const strangers = await svc.req('GET', contracts(family), as(family, stranger));
        expect(strangers.body.items.map((c: { contract_id: string }) => c.contract_id)).to.not.include(id);
      });

      // complete and dispute exclude each other (each moves the contract out of `delivered`, and neither
      // state takes the other verb). Accept and cancel would not: open -> accepted -> cancelled is allowed.
      it('50 conflicting transitions at once (25 complete, 25 dispute) end with exactly one winner and a consistent state', async () => {
        const id = await contractIn(family, 'delivered');
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            i % 2 === 0
              ? svc.req('POST', `${contracts(family)}/${id}/complete`, as(family, requester, { rating: 4 }))
              : svc.req('POST', `${contracts(family)}/${id}/dispute`, as(family, provider)),
          ),
        );
        const won = results.filter((r) => r.status === 200);
        expect(won).to.have.length(1);
        for (const r of results.filter((x) => x.status !== 200)) expect(r.body.code).to.equal('invalid_transition');
        const final = await svc.req('GET', `${contracts(family)}/${id}`, as(family, requester));
        expect(final.body.state).to.equal(won[0]?.body.state);
        const stream = (await svc.running.services.log.readStream(`contract-${id}`)).filter((e) => e.type === 'ContractTransitioned');
        expect(stream.map((e) => (e.data as { to: string }).to)).to.deep.equal(['accepted', 'in_progress', 'delivered', final.body.state]);
        expect(['completed', 'disputed']).to.include(final.body.state);
      });
    });
  }

  it('mails both parties when a contract opens, is accepted, delivered, completed, disputed and resolved', async () => {
    const id = await contractIn('api_key', 'delivered');
    await move(svc, 'api_key', requester, id, 'complete', { rating: 4 });
    const disputedId = await contractIn('api_key', 'disputed');
    await resolve(disputedId, 'refunded');
    const subjects = async (cid: string, count: number) => {
      const until = Date.now() + 120_000;
      for (;;) {
        const found = readOutbox(outbox).filter((m) => m.subject.includes(cid));
        if (found.length >= count || Date.now() > until) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const mails = await subjects(id, 8);
    expect(mails.map((m) => m.subject.replace(`Contract ${id}: `, '')).sort()).to.deep.equal([
      'accepted',
      'accepted',
      'completed',
      'completed',
      'delivered',
      'delivered',
      'open',
      'open',
    ]);
    expect(new Set(mails.map((m) => m.to)).size).to.equal(2);
    const ruled = await subjects(disputedId, 8);
    expect(ruled.map((m) => m.subject.replace(`Contract ${disputedId}: `, '')).sort()).to.deep.equal([
      'accepted',
      'accepted',
      'disputed',
      'disputed',
      'open',
      'open',
      'resolved (refunded)',
      'resolved (refunded)',
    ]);
  });
});

describe('api: lifecycle mails of transitions made while no worker ran', function () {
  this.timeout(300_000);
  it('are queued and sent at the next start, once, and the resume finds nothing left after it', async () => {
    const outbox = mkdtempSync(join(tmpdir(), 'agent-network-outbox-'));
    const first = await startTestService({ MAIL_OUTBOX_DIR: outbox }, { workers: false });
    let second: TestService | null = null;
    try {
      const agent = async (name: string) => {
        const a = await first.register({ name, owner_email: `${name}-owner@example.com` });
        return { agent_id: a.agent_id, api_key: a.api_key, token: '' };
      };
      const requester = await agent('req');
      const provider = await agent('prov');
      const id = await openContract(first, 'api_key', requester, provider);
      await move(first, 'api_key', provider, id, 'accept');
      await move(first, 'api_key', provider, id, 'start');
      await first.stop({ keepData: true });
      const about = () => readOutbox(outbox).filter((m) => m.subject.startsWith(`Contract ${id}:`));
      expect(about()).to.deep.equal([]);

      second = await startTestService({ MAIL_OUTBOX_DIR: outbox }, { dataDir: first.dataDir, clock: first.clock });
      const workers = defined(second.running.workers, 'the workers');
      // The start queued the two mails of the opening and the two of `accept` (none for `start`); the mail worker sends them.
      const sent = await waitForMails(outbox, 'req-owner@example.com', 2);
      await waitForMails(outbox, 'prov-owner@example.com', 2);
      expect(sent.map((m) => m.subject).sort()).to.deep.equal([`Contract ${id}: accepted`, `Contract ${id}: open`]);
      // Each mail on its own stream, the parameters of a step sealed once for both parties.
      const queued = await second.running.services.store.collection('mails').find({ template: 'contract_lifecycle' });
      expect(queued).to.have.length(4);
      for (const m of queued) expect(m.stream).to.equal(`mail-${m._id}`);
      const params = queued.map((m) => JSON.parse(second?.running.services.secrets.decrypt(String(m.params_enc)) ?? '{}') as { state: string });
      const accepted = queued.filter((_m, i) => params[i].state === 'accepted');
      expect(accepted).to.have.length(2);
      expect(accepted[0]?.params_enc).to.equal(accepted[1]?.params_enc);
      expect(params.find((p) => p.state === 'accepted')).to.deep.equal({
        contract_id: id,
        state: 'accepted',
        title: 'Build a lead-gen pipeline',
        note: '',
      });
      expect(await workers.contractMails.resume()).to.equal(0);
      await workers.contractMails.drain();
      const lines = readFileSync(join(outbox, OUTBOX_FILE), 'utf8')
        .split('\n')
        .filter((l) => l.includes(`Contract ${id}:`));
      expect(lines).to.have.length(4);
      // The mails are on their own streams, after the transition: the contract's stream holds none.
      const stream = await second.running.services.log.readStream(`contract-${id}`);
      expect(stream.map((e) => e.type)).to.deep.equal(['ContractOpened', 'ContractTransitioned', 'ContractTransitioned']);
    } finally {
      await second?.stop();
      rmSync(outbox, { recursive: true, force: true });
    }
  });
});
