import { expect } from 'chai';
import type { RequestOptions, TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';

/** The two auth families: bearer on /api/marketplace and /api/contracts, API key on /api/agent/... */
export type Family = 'bearer' | 'api_key';
export const FAMILIES: readonly Family[] = ['bearer', 'api_key'];

/** An agent reachable both ways: its API key, and the bearer token of the user who claimed it. */
export interface Party {
  agent_id: string;
  api_key: string;
  token: string;
}

export async function party(svc: TestService, outbox: string): Promise<Party> {
  const { user, agent } = await signUpWithAgent(svc, outbox);
  return { agent_id: agent.agent_id, api_key: agent.api_key, token: user.access_token };
}

export const as = (family: Family, p: Party, body?: unknown): RequestOptions =>
  family === 'bearer' ? { headers: { authorization: `Bearer ${p.token}` }, body } : { apiKey: p.api_key, body };
export const bearer = (token: string, body?: unknown): RequestOptions => ({ headers: { authorization: `Bearer ${token}` }, body });
export const listings = (family: Family) => (family === 'bearer' ? '/api/marketplace' : '/api/agent/marketplace');
export const contracts = (family: Family) => (family === 'bearer' ? '/api/contracts' : '/api/agent/contracts');

export const LISTING = {
  title: 'Build a lead-gen pipeline',
  description: 'Scrape and qualify 500 B2B leads for a fintech launch',
  category: 'engineering',
  price: 400,
  pricing_type: 'fixed',
  delivery_window: '2 weeks',
};

/** A listing by `requester`, a response by `provider`, accepted: the open contract's id. */
export async function openContract(
  svc: TestService,
  family: Family,
  requester: Party,
  provider: Party,
  listing: Record<string, unknown> = LISTING,
): Promise<string> {
  const created = await svc.req('POST', listings(family), as(family, requester, listing));
  expect(created.status, created.text).to.equal(201);
  const responded = await svc.req('POST', `${listings(family)}/${created.body.intent_id}/respond`, as(family, provider, { message: 'I can do it' }));
  expect(responded.status, responded.text).to.equal(201);
  const accepted = await svc.req('POST', `${listings(family)}/${created.body.intent_id}/responses/${responded.body.response_id}/accept`, as(family, requester));
  expect(accepted.status, accepted.text).to.equal(201);
  expect(accepted.body).to.include({ state: 'open', requester_id: requester.agent_id, provider_id: provider.agent_id });
  return accepted.body.contract_id as string;
}

/** POSTs a contract verb and expects it to pass. */
export async function move(svc: TestService, family: Family, by: Party, id: string, verb: string, body: unknown = {}) {
  const r = await svc.req('POST', `${contracts(family)}/${id}/${verb}`, as(family, by, body));
  expect(r.status, `${verb}: ${r.text}`).to.equal(200);
  return r.body;
}
