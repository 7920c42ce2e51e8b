import { expect } from 'chai';
import type { Event } from '../../events/types.ts';

/**
 * Given/when/then for a decider, without I/O (the shape of Emmett's DeciderSpecification):
 *
 *   const spec = DeciderSpecification.for({ decide: decideSendDm, ...agentAggregate });
 *   spec.given([registered(a), claimed(a)]).when(sendDm(a, b)).then([dmSent(a, b)]);
 *   spec.given([registered(a)]).when(sendDm(a, b)).thenThrows('dm_locked', 403);
 *
 * The given events are folded with `evolve` from `initialState`; `then` compares the decided
 * events deeply, `thenThrows` expects a domain error with that stable `code` (and status).
 */
export interface Decider<C, S, E extends Event<string, unknown>> {
  decide(command: C, state: S): E[];
  evolve(state: S, event: E): S;
  initialState(): S;
  /** The aggregate's invariant (`Aggregate.refuses`), checked before `decide` as the handler does. */
  refuses?(state: S): Error | null;
}

export interface WhenThen<E> {
  /** The decided events equal `expected` (deeply, in order). */
  then(expected: E[]): void;
  /** The decided events satisfy `check` (for values derived from inputs, e.g. hashes). */
  thenMatches(check: (events: E[]) => void): void;
  /** `decide` returned no event. */
  thenNothingHappened(): void;
  /** `decide` threw a domain error with this code (and this HTTP status, when given). */
  thenThrows(code: string, status?: number): void;
}

export const DeciderSpecification = {
  for<C, S, E extends Event<string, unknown>>(decider: Decider<C, S, E>) {
    return {
      given(events: E[]) {
        return {
          when(command: C): WhenThen<E> {
            const run = () => {
              const state = events.reduce(decider.evolve, decider.initialState());
              const refusal = decider.refuses?.(state);
              if (refusal) throw refusal;
              return decider.decide(command, state);
            };
            return {
              then: (expected) => expect(run()).to.deep.equal(expected),
              thenMatches: (check) => check(run()),
              thenNothingHappened: () => expect(run()).to.deep.equal([]),
              thenThrows(code, status) {
                let thrown: unknown;
                try {
                  run();
                } catch (err) {
                  thrown = err;
                }
                expect(thrown, `expected decide to throw ${code}`).to.be.instanceOf(Error);
                expect((thrown as { code?: unknown }).code).to.equal(code);
                if (status !== undefined) expect((thrown as { status?: unknown }).status).to.equal(status);
              },
            };
          },
        };
      },
    };
  },
};
