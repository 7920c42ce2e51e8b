import { expect } from 'chai';
import fc from 'fast-check';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { ContractState, ContractStreamEvent, PartyVerb } from '../../../commands/marketplace/contract.ts';
import {
  contractAggregate,
  decideOpenContract,
  decideResolveDispute,
  decideTransition,
  signRuling,
  TRANSITIONS,
} from '../../../commands/marketplace/contract.ts';
import type { ListingState } from '../../../commands/marketplace/listings.ts';
import {
  decideCloseListing,
  decideCreateListing,
  decideDeleteListing,
  decideRespondToListing,
  listingAggregate,
} from '../../../commands/marketplace/listings.ts';
import { DomainError, ValidationFailed } from '../../../events/kernel/errors.ts';
import { ServiceKey } from '../../../events/kernel/signing.ts';
import type { ContractStatus, ResolveOutcome } from '../../../events/marketplace.ts';
import { CONTRACT_STATES } from '../../../events/marketplace.ts';
import { chargeOf } from '../../../events/types.ts';
import * as f from '../../fixtures/events.ts';

const AGENTS = ['agt_p0', 'agt_p1', 'agt_p2'];
const VERBS = Object.keys(TRANSITIONS) as PartyVerb[];
const OUTCOMES: ResolveOutcome[] = ['completed', 'in_progress', 'refunded'];
const key = ServiceKey.fromServerSecret('property-test-secret-0123456789-abcdefghij');

type Op =
  | { kind: 'create'; agent: number }
  | { kind: 'respond'; agent: number; listing: number }
  | { kind: 'close' | 'delete'; agent: number; listing: number }
  | { kind: 'accept'; agent: number; response: number }
  | { kind: 'verb'; agent: number; contract: number; verb: PartyVerb; rating: number | null }
  | { kind: 'resolve'; contract: number; outcome: ResolveOutcome };

const agentIx = fc.nat({ max: AGENTS.length - 1 });
const ix = fc.nat({ max: 12 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), agent: agentIx }),
  fc.record({ kind: fc.constant('respond' as const), agent: agentIx, listing: ix }),
  fc.record({ kind: fc.constantFrom('close' as const, 'delete' as const), agent: agentIx, listing: ix }),
  fc.record({ kind: fc.constant('accept' as const), agent: agentIx, response: ix }),
  fc.record({
    kind: fc.constant('verb' as const),
    agent: agentIx,
    contract: ix,
    verb: fc.constantFrom(...VERBS),
    rating: fc.option(fc.integer({ min: 1, max: 5 })),
  }),
  fc.record({ kind: fc.constant('resolve' as const), contract: ix, outcome: fc.constantFrom(...OUTCOMES) }),
);

/** The whole marketplace in memory: each aggregate folded from the events its deciders returned. */
class Model {
  agents: AgentState[];
  granted = 0;
  spent = 0;
  listings: Array<{ id: string; owner: string; state: ListingState; responders: Set<string> }> = [];
  responses: Array<{ id: string; intent_id: string; agent: string; position: number }> = [];
  contracts: Array<{ id: string; state: ContractState; revision: number; moves: Array<[ContractStatus, ContractStatus, string]> }> = [];
  now = f.NOW;
  seq = 0;

  constructor(balances: number[]) {
    this.agents = AGENTS.map((id, i) => {
      const amount = balances[i] ?? 0;
      this.granted += amount;
      return [f.agentRegistered({ agent_id: id, name: id }), f.monthlyCreditsGranted({ agent_id: id, amount_mc: amount, balance_after_mc: amount })].reduce(
        agentAggregate.evolve,
        agentAggregate.initialState(),
      );
    });
  }

  private onAgent(i: number, events: AgentStreamEvent[]) {
    for (const e of events) {
      const c = chargeOf(e.data);
      if (c) this.spent += c.amount_mc;
      this.agents[i] = agentAggregate.evolve(this.agents[i] as AgentState, e);
    }
  }

  private onContract(c: Model['contracts'][number], events: ContractStreamEvent[]) {
    for (const e of events) {
      if (chargeOf(e.data)) throw new Error('a contract event moved credits');
      if (e.type === 'ContractTransitioned') c.moves.push([e.data.from, e.data.to, e.data.action]);
      c.state = contractAggregate.evolve(c.state, e);
      c.revision++;
    }
  }

  apply(o: Op): void {
    this.seq++;
    const agent = 'agent' in o ? (AGENTS[o.agent] as string) : '';
    switch (o.kind) {
      case 'create': {
        const events = decideCreateListing(
          {
            type: 'CreateListing',
            data: {
              title: 't',
              description: 'd',
              category: 'data',
              price: 1,
              pricing_type: 'fixed',
              budget_min: null,
              budget_max: null,
              delivery_window: null,
            },
            metadata: { now: this.now, intent_id: `lst_${this.seq}` },
          },
          this.agents[o.agent] as AgentState,
        );
        this.onAgent(o.agent, events);
        this.listings.push({ id: `lst_${this.seq}`, owner: agent, state: listingAggregate.initialState(), responders: new Set() });
        return;
      }
      case 'respond': {
        const l = this.listings[o.listing];
        const facts = l
          ? { intent_id: l.id, owner_id: l.owner, status: l.state.deleted ? ('deleted' as const) : l.state.closed ? ('closed' as const) : ('open' as const) }
          : null;
        const events = decideRespondToListing(
          {
            type: 'RespondToListing',
            data: { listing: facts, message: 'm', proposed_price: null, already_responded: l?.responders.has(agent) ?? false },
            metadata: { now: this.now, response_id: `rsp_${this.seq}` },
          },
          this.agents[o.agent] as AgentState,
        );
        this.onAgent(o.agent, events);
        if (l) {
          l.responders.add(agent);
          this.responses.push({ id: `rsp_${this.seq}`, intent_id: l.id, agent, position: this.seq });
        }
        return;
      }
      case 'close':
      case 'delete': {
        const l = this.listings[o.listing];
        const cmd = {
          type: o.kind === 'close' ? ('CloseListing' as const) : ('DeleteListing' as const),
          data: { agent_id: agent, listing: l ? { intent_id: l.id, owner_id: l.owner, status: 'open' as const } : null },
          metadata: { now: this.now },
        };
        const state = l?.state ?? listingAggregate.initialState();
        const events = o.kind === 'close' ? decideCloseListing(cmd, state) : decideDeleteListing(cmd, state);
        if (l) for (const e of events) l.state = listingAggregate.evolve(l.state, e);
        return;
      }
      case 'accept': {
        const r = this.responses[o.response];
        const l = r ? this.listings.find((x) => x.id === r.intent_id) : undefined;
        const id = `ctr_${r?.id ?? 'none'}`;
        const existing = this.contracts.find((c) => c.id === id);
        const c = existing ?? { id, state: contractAggregate.initialState(), revision: -1, moves: [] };
        const events = decideOpenContract(
          {
            type: 'OpenContract',
            data: {
              agent_id: agent,
              listing: l ? { intent_id: l.id, owner_id: l.owner, title: 't', price: 1, pricing_type: 'fixed', deleted: l.state.deleted, position: 1 } : null,
              response: r ? { response_id: r.id, intent_id: r.intent_id, agent_id: r.agent, proposed_price: null, position: r.position } : null,
            },
            metadata: { now: this.now, contract_id: id },
          },
          c.state,
        );
        this.onContract(c, events);
        if (!existing) this.contracts.push(c);
        return;
      }
      case 'verb': {
        const c = this.contracts[o.contract];
        if (!c) return;
        const events = decideTransition(
          { type: 'TransitionContract', data: { verb: o.verb, agent_id: agent, rating: o.rating, note: null }, metadata: { now: this.now } },
          c.state,
        );
        this.onContract(c, events);
        return;
      }
      case 'resolve': {
        const c = this.contracts[o.contract];
        if (!c) return;
        const ruling = signRuling(key, {
          format: 'agent-network/ruling/v1',
          contract_id: c.state.contract_id || 'ctr_none',
          outcome: o.outcome,
          note: 'n',
          ruled_by: 'usr_admin',
          ruled_at: this.now.toISOString(),
          evidence_revision: c.revision,
          evidence_head: f.hex('0'),
        });
        const events = decideResolveDispute(
          { type: 'ResolveDispute', data: { admin_id: 'usr_admin', outcome: o.outcome, note: 'n', ruling }, metadata: { now: this.now } },
          c.state,
          c.revision,
        );
        this.onContract(c, events);
        return;
      }
      default: {
        const _exhaustive: never = o;
        return _exhaustive;
      }
    }
  }

  check(): void {
    const balances = this.agents.map((a) => a.balance_mc);
    for (const b of balances) expect(b).to.be.at.least(0);
    // No credit created or lost: what is left plus what was charged is what was granted.
    expect(balances.reduce((x, y) => x + y, 0) + this.spent).to.equal(this.granted);
    for (const c of this.contracts) {
      expect(CONTRACT_STATES).to.include(c.state.status);
      for (const [from, to, action] of c.moves) {
        if (action === 'resolve') expect([from, OUTCOMES.includes(to as ResolveOutcome)]).to.deep.equal(['disputed', true]);
        else {
          const rule = TRANSITIONS[action as PartyVerb];
          expect(rule.from).to.include(from);
          expect(rule.to).to.equal(to);
        }
      }
    }
  }
}

describe('property: marketplace credits are conserved (fast-check, 1,000 runs of random operation sequences)', () => {
  it('never leaves a balance below zero, creates or loses no credit, and ends every contract in a state the table allows', function () {
    this.timeout(120_000);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: AGENTS.length, maxLength: AGENTS.length }),
        fc.array(op, { maxLength: 40 }),
        (balances, ops) => {
          const model = new Model(balances);
          for (const o of ops) {
            try {
              model.apply(o);
            } catch (err) {
              // A refusal changes nothing; anything else is a defect.
              if (!(err instanceof DomainError || err instanceof ValidationFailed)) throw err;
            }
            model.check();
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
