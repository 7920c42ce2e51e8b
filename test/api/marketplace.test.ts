import { expect } from 'chai';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import type { Family, Party } from './marketplace-helpers.ts';
import { as, FAMILIES, LISTING, listings, party } from './marketplace-helpers.ts';

describe('api: marketplace listings (both auth families)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  let owner: Party;
  let other: Party;
  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
    owner = await party(svc, outbox);
    other = await party(svc, outbox);
  });
  after(() => stopWithOutbox(svc, outbox));

  const credits = async (p: Party) => (await svc.req('GET', `/api/protocol/agents/${p.agent_id}/credits`, { apiKey: p.api_key })).body.balance as number;

  for (const family of FAMILIES) {
    describe(`${family}`, () => {
      it('creates a listing for 0.5 credits; an unknown category or pricing type is 422 and charges nothing', async () => {
        const before = await credits(owner);
        const r = await svc.req('POST', listings(family), as(family, owner, { ...LISTING, budget_min: 300, budget_max: 500 }));
        expect(r.status, r.text).to.equal(201);
        expect(r.body.intent_id).to.match(/^lst_/);
        expect(r.body).to.include({
          title: LISTING.title,
          category: 'engineering',
          pricing_type: 'fixed',
          status: 'open',
          budget_min: 300,
          credits_charged: 0.5,
        });
        expect(r.body.owner.agent_id).to.equal(owner.agent_id);
        expect(await credits(owner)).to.equal(before - 0.5);
        for (const bad of [{ category: 'astrology' }, { pricing_type: 'barter' }, { budget_min: 10, budget_max: 5 }, { extra: 1 }]) {
          const refused = await svc.req('POST', listings(family), as(family, owner, { ...LISTING, ...bad }));
          expect(refused.status, JSON.stringify(bad)).to.equal(422);
        }
        expect(await credits(owner)).to.equal(before - 0.5);
      });

      it('lists with filters (category, pricing_type, q) and pages, newest first', async () => {
        const mk = async (over: Record<string, unknown>) =>
          (await svc.req('POST', listings(family), as(family, owner, { ...LISTING, ...over }))).body.intent_id as string;
        const design = await mk({ title: `Logo redesign ${family}`, description: 'A crisp vector logo', category: 'design', pricing_type: 'hourly' });
        const legal = await mk({ title: `Contract review ${family}`, description: 'NDA and MSA review', category: 'legal', pricing_type: 'negotiable' });
        const byCategory = await svc.req('GET', `${listings(family)}?category=design`, as(family, other));
        expect(byCategory.status, byCategory.text).to.equal(200);
        expect(byCategory.body.items.map((i: { intent_id: string }) => i.intent_id))
          .to.include(design)
          .and.not.include(legal);
        const byPricing = await svc.req('GET', `${listings(family)}?pricing_type=negotiable`, as(family, other));
        expect(byPricing.body.items.map((i: { intent_id: string }) => i.intent_id))
          .to.include(legal)
          .and.not.include(design);
        const byText = await svc.req('GET', `${listings(family)}?q=${encodeURIComponent(`MSA review ${family}`)}`, as(family, other));
        expect(byText.body.items.map((i: { intent_id: string }) => i.intent_id)).to.deep.equal([legal]);
        expect(byText.body.total).to.equal(1);
        // The same words in another order (the search scans the rarest word's listings), and a word no listing holds.
        const reordered = await svc.req('GET', `${listings(family)}?q=${encodeURIComponent(`${family} review msa`)}`, as(family, other));
        expect(reordered.body.items.map((i: { intent_id: string }) => i.intent_id)).to.deep.equal([legal]);
        expect(reordered.body).to.include({ total: 1, total_capped: false });
        const none = await svc.req('GET', `${listings(family)}?q=${encodeURIComponent(`review zyzzyvaunheard`)}`, as(family, other));
        expect(none.status).to.equal(200);
        expect(none.body).to.include({ total: 0, total_capped: false, has_more: false });
        expect(none.body.items).to.deep.equal([]);
        const page = await svc.req('GET', `${listings(family)}?limit=1`, as(family, other));
        expect(page.body.items[0].intent_id).to.equal(legal);
        expect(page.body).to.include({ page: 0, limit: 1, has_more: true });
        const next = await svc.req('GET', `${listings(family)}?limit=1&cursor=${page.body.next_cursor}`, as(family, other));
        expect(next.body.items[0].intent_id).to.equal(design);
        const second = await svc.req('GET', `${listings(family)}?limit=1&page=1`, as(family, other));
        expect(second.body.items[0].intent_id).to.equal(design);
        expect((await svc.req('GET', `${listings(family)}?category=astrology`, as(family, other))).status).to.equal(422);
      });

      it('shows the detail with the owner, trust signals and recent contracts', async () => {
        const id = (await svc.req('POST', listings(family), as(family, owner, LISTING))).body.intent_id;
        const d = await svc.req('GET', `${listings(family)}/${id}`, as(family, other));
        expect(d.status, d.text).to.equal(200);
        expect(d.body.owner).to.include({ agent_id: owner.agent_id, trust_score: 0, is_claimed: true });
        expect(d.body.recent_contracts).to.be.an('array');
        expect((await svc.req('GET', `${listings(family)}/lst_unknown`, as(family, other))).status).to.equal(404);
      });

      it('responds for 0.25; the owner cannot respond to its own listing; responses are the owner’s only', async () => {
        const id = (await svc.req('POST', listings(family), as(family, owner, LISTING))).body.intent_id;
        const before = await credits(other);
        const r = await svc.req('POST', `${listings(family)}/${id}/respond`, as(family, other, { message: 'I can do it', proposed_price: 350 }));
        expect(r.status, r.text).to.equal(201);
        expect(r.body).to.include({ intent_id: id, agent_id: other.agent_id, proposed_price: 350, status: 'pending', credits_charged: 0.25 });
        expect(await credits(other)).to.equal(before - 0.25);
        const twice = await svc.req('POST', `${listings(family)}/${id}/respond`, as(family, other, { message: 'again' }));
        expect(twice.status).to.equal(409);
        expect(twice.body.code).to.equal('already_responded');
        const own = await svc.req('POST', `${listings(family)}/${id}/respond`, as(family, owner, { message: 'me' }));
        expect(own.status).to.equal(400);
        expect(own.body.code).to.equal('cannot_respond_own_listing');
        expect(await credits(other)).to.equal(before - 0.25);
        const mine = await svc.req('GET', `${listings(family)}/${id}/responses`, as(family, owner));
        expect(mine.status).to.equal(200);
        expect(mine.body.items.map((i: { response_id: string }) => i.response_id)).to.deep.equal([r.body.response_id]);
        const theirs = await svc.req('GET', `${listings(family)}/${id}/responses`, as(family, other));
        expect(theirs.status).to.equal(403);
        expect(theirs.body.code).to.equal('not_listing_owner');
      });

      it('accepts a response into a ctr_ contract; only the owner may accept, close or delete; close stops responses; delete is then 404', async () => {
        const id = (await svc.req('POST', listings(family), as(family, owner, LISTING))).body.intent_id;
        const resp = (await svc.req('POST', `${listings(family)}/${id}/respond`, as(family, other, { message: 'hi' }))).body.response_id;
        const notYours = await svc.req('POST', `${listings(family)}/${id}/responses/${resp}/accept`, as(family, other));
        expect(notYours.status).to.equal(403);
        const ok = await svc.req('POST', `${listings(family)}/${id}/responses/${resp}/accept`, as(family, owner));
        expect(ok.status, ok.text).to.equal(201);
        expect(ok.body.contract_id).to.match(/^ctr_/);
        expect(ok.body).to.include({ state: 'open', requester_id: owner.agent_id, provider_id: other.agent_id });
        const again = await svc.req('POST', `${listings(family)}/${id}/responses/${resp}/accept`, as(family, owner));
        expect(again.status).to.equal(409);
        expect(again.body.code).to.equal('contract_exists');
        expect((await svc.req('POST', `${listings(family)}/${id}/responses/rsp_unknown/accept`, as(family, owner))).status).to.equal(404);

        expect((await svc.req('POST', `${listings(family)}/${id}/close`, as(family, other))).status).to.equal(403);
        const closed = await svc.req('POST', `${listings(family)}/${id}/close`, as(family, owner));
        expect(closed.status, closed.text).to.equal(200);
        expect(closed.body.status).to.equal('closed');
        const third = await party(svc, outbox);
        const late = await svc.req('POST', `${listings(family)}/${id}/respond`, as(family, third, { message: 'late' }));
        expect(late.status).to.equal(409);
        expect(late.body.code).to.equal('listing_closed');

        expect((await svc.req('DELETE', `${listings(family)}/${id}`, as(family, other))).status).to.equal(403);
        expect((await svc.req('DELETE', `${listings(family)}/${id}`, as(family, owner))).status).to.equal(200);
        expect((await svc.req('GET', `${listings(family)}/${id}`, as(family, owner))).status).to.equal(404);
        expect((await svc.req('DELETE', `${listings(family)}/${id}`, as(family, owner))).status).to.equal(404);
        const list = await svc.req('GET', `${listings(family)}?status=closed`, as(family, owner));
        expect(list.body.items.map((i: { intent_id: string }) => i.intent_id)).to.not.include(id);
      });
    });
  }

  it('refuses the other auth family on each surface (401)', async () => {
    const onBearer = await svc.req('GET', '/api/marketplace', { apiKey: owner.api_key });
    expect(onBearer.status).to.equal(401);
    const onKey = await svc.req('GET', '/api/agent/marketplace', as('bearer' as Family, owner));
    expect(onKey.status).to.equal(401);
    expect((await svc.req('GET', '/api/marketplace')).status).to.equal(401);
  });

  it('serves the public HTML page of a listing, escaped, and 404 after delete', async () => {
    const id = (await svc.req('POST', listings('api_key'), as('api_key', owner, { ...LISTING, title: 'Fix <script>alert(1)</script>' }))).body.intent_id;
    const page = await svc.req('GET', `/marketplace/${id}`);
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/text\/html/);
    expect(page.text).to.contain('Fix &lt;script&gt;alert(1)&lt;/script&gt;').and.not.contain('<script>alert');
    // What crawlers read: Open Graph, Twitter and JSON-LD (a schema.org Demand), the title kept intact inside the script.
    expect(page.text).to.contain('<meta property="og:title" content="Fix &lt;script&gt;alert(1)&lt;/script&gt;">');
    expect(page.text).to.contain('<meta name="twitter:card" content="summary">');
    const ld = /<script type="application\/ld\+json">(.*?)<\/script>/s.exec(page.text);
    expect(ld, 'a JSON-LD block').to.not.equal(null);
    const data = JSON.parse((ld as RegExpExecArray)[1] as string);
    expect(data).to.deep.include({ '@context': 'https://schema.org', '@type': 'Demand', name: 'Fix <script>alert(1)</script>', category: LISTING.category });
    expect(data.url).to.match(new RegExp(`/marketplace/${id}$`));
    await svc.req('DELETE', `${listings('api_key')}/${id}`, as('api_key', owner));
    expect((await svc.req('GET', `/marketplace/${id}`)).status).to.equal(404);
  });
});
