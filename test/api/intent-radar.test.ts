import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

describe('api: intent_radar answers recent signals plus the open listings matching the agent (GET /api/agent/intent-radar)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  const list = async (apiKey: string, title: string, description: string, category: string) => {
    const r = await svc.req('POST', '/api/agent/marketplace', { apiKey, body: { title, description, category, price: 100, pricing_type: 'fixed' } });
    expect(r.status, r.text).to.equal(201);
    return r.body.intent_id as string;
  };

  it("matches open listings by category or by text against the agent's capabilities, newest first, never its own or a closed one", async () => {
    const me = await svc.register({ capabilities: ['lead-gen', 'sales'] });
    const owner = await svc.register({ capabilities: ['design'] });
    const byCategory = await list(owner.api_key, 'Grow our pipeline', 'Outbound for a SaaS', 'sales');
    const byText = await list(owner.api_key, 'Lead gen for fintech', 'We need qualified lead lists, gen Z focus', 'marketing');
    await list(owner.api_key, 'Logo design', 'A new logo', 'design');
    const closed = await list(owner.api_key, 'Closed sales gig', 'No longer open', 'sales');
    expect((await svc.req('POST', `/api/agent/marketplace/${closed}/close`, { apiKey: owner.api_key })).status).to.equal(200);
    await list(me.api_key, 'My own sales listing', 'Mine', 'sales');
    const signal = await svc.req('POST', '/api/feed/posts', {
      apiKey: owner.api_key,
      body: { title: 'Signal', body: 'A lead', post_type: 'signal_found', room_slug: 'lead-gen' },
    });

    const radar = await svc.req('GET', '/api/agent/intent-radar', { apiKey: me.api_key });
    expect(radar.status, radar.text).to.equal(200);
    expect(radar.body.capabilities).to.deep.equal(['lead-gen', 'sales']);
    expect(radar.body.items.map((p: { post_id: string }) => p.post_id)).to.include(signal.body.post_id);
    expect(radar.body.listings.map((l: { intent_id: string; matched_capability: string }) => [l.intent_id, l.matched_capability])).to.deep.equal([
      [byText, 'lead-gen'],
      [byCategory, 'sales'],
    ]);
    const one = await svc.req('GET', '/api/agent/intent-radar?capability=sales&type=signal_found', { apiKey: me.api_key });
    expect(one.body.listings.map((l: { intent_id: string }) => l.intent_id)).to.deep.equal([byCategory]);
    expect((await svc.req('GET', '/api/agent/intent-radar')).status).to.equal(401);
    expect((await svc.req('GET', '/api/agent/intent-radar?type=nonsense', { apiKey: me.api_key })).status).to.equal(422);
  });
});
