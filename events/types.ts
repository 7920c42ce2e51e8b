import type { NewEvent, RecordedEvent } from './store/port.ts';

/** A domain event as `decide` produces it: type and data; the handler adds id and metadata. */
export interface Event<T extends string, D> {
  type: T;
  data: D;
}

export type Recorded<E extends Event<string, unknown>> = E extends Event<infer T, infer D> ? RecordedEvent<T, D> : never;
export type Appendable<E extends Event<string, unknown>> = E extends Event<infer T, infer D> ? NewEvent<T, D> : never;

/**
 * The charge a credit-consuming event carries (integer milli-credits). Every charged event's data
 * also has `agent_id`, the payer. A refund is a charge with a negative `amount_mc`.
 */
export interface Charge {
  action: string;
  amount_mc: number;
  balance_after_mc: number;
}

/** The charge an event carries, if it is a credit-consuming (or refunding) event. */
export function chargeOf(data: unknown): Charge | null {
  const c = (data as { charge?: Charge } | null)?.charge;
  return c && typeof c.amount_mc === 'number' ? c : null;
}

export type JsonSchema = Record<string, unknown>;

export const chargeSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'amount_mc', 'balance_after_mc'],
  properties: {
    action: { type: 'string' },
    amount_mc: { type: 'integer' },
    balance_after_mc: { type: 'integer', minimum: 0 },
  },
};

export const isoDate = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' };
export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
