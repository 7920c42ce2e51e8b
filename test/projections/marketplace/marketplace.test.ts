import { expect } from 'chai';
import { agentsProjection } from '../../../projections/agents/agents.ts';
import { contractStatsProjection } from '../../../projections/marketplace/contract-stats.ts';
import { contractsProjection } from '../../../projections/marketplace/contracts.ts';
import { listingsProjection } from '../../../projections/marketplace/listings.ts';
import { listingResponsesProjection } from '../../../projections/marketplace/responses.ts';
import { trustRunsProjection } from '../../../projections/marketplace/trust-runs.ts';
import { defined } from '../../helpers/defined.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, LISTING, RESPONSE, CONTRACT } = f;
const t = (action: 'accept' | 'start' | 'deliver' | 'complete' | 'cancel' | 'dispute' | 'resolve', from: string, to: string, over = {}) =>
  f.contractTransitioned({ action, from: from as 'open', to: to as 'open', ...over });

describe('projections: marketplace', () => {
  it('lists a listing with its search terms and response count, then closed, then deleted out of the term index', () =>
    ProjectionSpecification.for(listingsProjection)
      .given([f.listingCreated(), f.listingResponded(), f.listingClosed(), f.listingDeleted()])
      .then((m) => {
        const doc = defined(f.byId(m.listings, LISTING), 'the listing');
        expect(doc).to.include({ status: 'deleted', response_count: 1, closed_at: f.time(11), seq: 1, agent_id: ALICE });
        expect(doc.search_keys).to.deep.equal([]);
        expect(doc).to.not.have.property('charge');
        // Counted open, then closed, then out of every count.
        for (const c of m.listing_counts ?? []) expect(c.n, c._id).to.equal(0);
        expect(f.byId(m.listing_counts, 's:closed')).to.include({ n: 0 });
      }));
  it('keeps the list totals by status, category, pricing type and term', () =>
    ProjectionSpecification.for(listingsProjection)
      .given([
        f.listingCreated(),
        f.listingCreated({ intent_id: 'lst_2', category: 'design', pricing_type: 'hourly', title: 'Logo', description: 'A logo' }),
        f.listingClosed(),
      ])
      .then((m) => {
        const n = (id: string) => f.byId(m.listing_counts, id)?.n;
        expect([n('s:open'), n('s:closed'), n('c:open:design'), n('c:closed:engineering'), n('p:open:hourly'), n('cp:open:design:hourly')]).to.deep.equal([
          1, 1, 1, 1, 1, 1,
        ]);
        expect([n('t:closed:pipeline'), n('t:open:pipeline'), n('t:open:logo')]).to.deep.equal([1, 0, 1]);
        expect(defined(f.byId(m.listings, LISTING), 'the listing').search_keys).to.include('closed:pipeline');
      }));
  it('indexes the words of title, description and category', () =>
    ProjectionSpecification.for(listingsProjection)
      .given([f.listingCreated()])
      .then((m) => expect(defined(f.byId(m.listings, LISTING), 'the listing').terms).to.include.members(['lead', 'gen', 'pipeline', '500', 'engineering'])));
  it('marks a response accepted with the contract it opened', () =>
    ProjectionSpecification.for(listingResponsesProjection)
      .given([f.listingResponded(), f.contractOpened()])
      .then((m) => expect(f.byId(m.listing_responses, RESPONSE)).to.include({ status: 'accepted', contract_id: CONTRACT, agent_id: BOB })));
  it('follows a contract through a dispute and its resolution (the dispute queue fields)', () =>
    ProjectionSpecification.for(contractsProjection)
      .given([
        f.contractOpened(),
        t('accept', 'open', 'accepted'),
        t('dispute', 'accepted', 'disputed', { actor_id: ALICE, actor_role: 'requester', note: 'silent' }),
        t('resolve', 'disputed', 'refunded', { actor_id: f.ADMIN_USER, actor_role: 'admin', note: 'ruled' }),
        f.disputeRuled(),
      ])
      .then((m) =>
        expect(f.byId(m.contracts, CONTRACT)).to.include({
          status: 'refunded',
          disputed_by: ALICE,
          dispute_note: 'silent',
          outcome: 'refunded',
          resolution_note: 'ruled',
          has_ruling: true,
        }),
      ));
  it("counts the provider's ends after acceptance, completions, ratings and responses", () =>
    ProjectionSpecification.for(contractStatsProjection)
      .given([
        f.listingResponded(),
        f.listingResponded({ response_id: 'rsp_2', intent_id: 'lst_2' }),
        t('complete', 'delivered', 'completed', { rating: 4 }),
        t('cancel', 'open', 'cancelled'),
        t('cancel', 'accepted', 'cancelled'),
        t('resolve', 'disputed', 'refunded'),
        t('resolve', 'disputed', 'in_progress'),
      ])
      .then((m) => expect(f.byId(m.contract_stats, BOB)).to.include({ responses: 2, completed: 1, ended: 3, rating_sum: 4, rating_count: 1 })));
  it('shows recomputed trust on the agent profile and its leaderboard key', () =>
    ProjectionSpecification.for(agentsProjection)
      .given([f.agentRegistered({ agent_id: BOB }), f.trustScoreRecomputed()])
      .then((m) => {
        const doc = defined(f.byId(m.agents, BOB), 'the agent');
        expect(doc).to.include({ trust_score: 80, contracts_completed: 1, contracts: 1, deal_close_rate: 0.5, trust_computed_at: f.time(2) });
        expect(doc.rank_key).to.match(/^0200:/);
      }));
  it('records completed trust runs by night', () =>
    ProjectionSpecification.for(trustRunsProjection)
      .given([f.trustRecomputeCompleted()])
      .then((m) => expect(f.byId(m.trust_runs, 'nightly-2026-03-10')).to.include({ night: '2026-03-10', agents: 1 })));
});
