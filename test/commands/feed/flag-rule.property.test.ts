import { expect } from 'chai';
import fc from 'fast-check';
import { countingFlags, decideModeration } from '../../../commands/feed/flag-rule.ts';
import type { FlaggerFacts } from '../../../commands/feed/flag-rule.ts';
import type { PostState, PostStreamEvent } from '../../../commands/feed/post.ts';
import { decideFlagPost, decideWithdrawPostFlag, postAggregate } from '../../../commands/feed/post.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import { AUTHOR, POST } from './fixtures.ts';

// The flag rule as a property (docs/MODERATION.md): over any sequence of flags, withdrawals,
// claims, bans, clock moves, restores and dismissals, the post aggregate's hide is exactly what
// an independent statement of the rule says, and so is the number of counting flags.

type Op =
  | { op: 'flag'; who: number }
  | { op: 'withdraw'; who: number }
  | { op: 'claim'; who: number }
  | { op: 'ban'; who: number }
  | { op: 'advance'; hours: number }
  | { op: 'restore' }
  | { op: 'dismiss' };

const FLAGGERS = 7;
const who = fc.integer({ min: 0, max: FLAGGERS - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: who.map((w) => ({ op: 'flag' as const, who: w })) },
  { weight: 3, arbitrary: who.map((w) => ({ op: 'withdraw' as const, who: w })) },
  { weight: 4, arbitrary: who.map((w) => ({ op: 'claim' as const, who: w })) },
  { weight: 1, arbitrary: who.map((w) => ({ op: 'ban' as const, who: w })) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 30 }).map((h) => ({ op: 'advance' as const, hours: h })) },
  { weight: 2, arbitrary: fc.constant({ op: 'restore' as const }) },
  { weight: 2, arbitrary: fc.constant({ op: 'dismiss' as const }) },
);
/** Each flagger registers 0-47 hours before the sequence starts. */
const scenario = fc.record({
  ages: fc.array(fc.integer({ min: 0, max: 47 }), { minLength: FLAGGERS, maxLength: FLAGGERS }),
  ops: fc.array(opArb, { minLength: 5, maxLength: 60, size: 'max' }),
});

const START = Date.parse('2026-03-10T09:30:00.000Z');
const id = (i: number) => `agt_flagger${i}00000000000000`;

/** The rule stated on its own terms. */
class Model {
  claimed = new Set<number>();
  banned = new Set<number>();
  /** Standing flags: flagger -> counts. */
  standing = new Map<number, boolean>();
  spent = new Set<number>();
  hidden = false;
  constructor(
    readonly registered: number[],
    public now: number,
  ) {}
  counts(i: number): boolean {
    return this.claimed.has(i) && !this.banned.has(i) && !this.spent.has(i) && this.now - this.registered[i] >= 24 * 3600_000;
  }
  counting(): number {
    return [...this.standing.values()].filter(Boolean).length;
  }
}

const errorCode = (fn: () => unknown): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
};

describe('commands: the flag rule (property, fast-check)', () => {
  it('hides a post exactly when five standing flags count, never again by spent flags, over 1,000 random histories', () => {
    fc.assert(
      fc.property(scenario, ({ ages, ops }) => {
        const model = new Model(
          ages.map((h) => START - h * 3600_000),
          START,
        );
        let state: PostState = postAggregate.initialState();
        const apply = (events: PostStreamEvent[]) => {
          state = events.reduce(postAggregate.evolve, state);
        };
        const facts = (i: number): FlaggerFacts => ({
          claimed: model.claimed.has(i),
          registered_at: new Date(model.registered[i]).toISOString(),
          hidden: model.banned.has(i),
        });
        for (const o of ops) {
          const now = new Date(model.now);
          switch (o.op) {
            case 'flag': {
              const events = decideFlagPost(
                {
                  type: 'FlagPost',
                  data: { post_id: POST, post_author_id: AUTHOR, agent_id: id(o.who), reason: null, facts: facts(o.who) },
                  metadata: { now },
                },
                state,
              );
              apply(events);
              if (!model.standing.has(o.who)) {
                model.standing.set(o.who, model.counts(o.who));
                if (!model.hidden && model.counting() >= 5) model.hidden = true;
              } else expect(events).to.deep.equal([]);
              break;
            }
            case 'withdraw': {
              let events: PostStreamEvent[] = [];
              const code = errorCode(() => {
                events = decideWithdrawPostFlag({ type: 'WithdrawPostFlag', data: { post_id: POST, agent_id: id(o.who) }, metadata: { now } }, state);
              });
              expect(code).to.equal(model.standing.has(o.who) ? null : 'flag_not_found');
              apply(events);
              model.standing.delete(o.who);
              break;
            }
            case 'claim':
              model.claimed.add(o.who);
              break;
            case 'ban':
              model.banned.add(o.who);
              break;
            case 'advance':
              model.now += o.hours * 3600_000;
              break;
            case 'restore':
            case 'dismiss': {
              let events: PostStreamEvent[] = [];
              const decision = o.op;
              const code = errorCode(() => {
                events = [
                  decideModeration(state.ledger, {
                    item_kind: 'post',
                    item_id: POST,
                    author_agent_id: AUTHOR,
                    decision,
                    admin_user_id: 'usr_admin',
                    note: 'n',
                    now,
                  }),
                ];
              });
              const expected =
                decision === 'restore'
                  ? model.hidden
                    ? null
                    : 'item_not_hidden'
                  : model.hidden
                    ? 'item_hidden'
                    : model.standing.size === 0
                      ? 'no_flags'
                      : null;
              // A dismissal of flags that are all spent already has nothing to spend: the decider says so too.
              const unspent = [...model.standing.keys()].filter((i) => !model.spent.has(i)).length;
              expect(code).to.equal(decision === 'dismiss' && expected === null && unspent === 0 ? 'no_flags' : expected);
              apply(events);
              if (code === null) {
                for (const i of model.standing.keys()) {
                  model.spent.add(i);
                  model.standing.set(i, false);
                }
                model.hidden = false;
              }
              break;
            }
            default: {
              const _exhaustive: never = o;
              return _exhaustive;
            }
          }
          expect(state.ledger.hidden, JSON.stringify(o)).to.equal(model.hidden);
          expect(countingFlags(state.ledger)).to.equal(model.counting());
        }
      }),
      {
        numRuns: 1000,
        // A spent flag withdrawn and made again (the shrunk form of the case the rule is about).
        examples: [
          [
            {
              ages: [30, 0, 0, 0, 0, 0, 0],
              ops: [{ op: 'claim', who: 0 }, { op: 'flag', who: 0 }, { op: 'dismiss' }, { op: 'withdraw', who: 0 }, { op: 'flag', who: 0 }],
            },
          ],
        ],
      },
    );
  });
});
