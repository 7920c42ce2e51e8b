import { Type, type ObjectOptions, type Static, type TLiteral, type TObject, type TProperties, type TSchema, type TUnion } from '@sinclair/typebox';
import type { NewEvent, RecordedEvent } from './store/port.ts';

/** A domain event as `decide` produces it: type and data; the handler adds id and metadata. */
export interface Event<T extends string, D> {
  type: T;
  data: D;
}

export type Recorded<E extends Event<string, unknown>> = E extends Event<infer T, infer D> ? RecordedEvent<T, D> : never;
export type Appendable<E extends Event<string, unknown>> = E extends Event<infer T, infer D> ? NewEvent<T, D> : never;

// Each event's data type and its JSON Schema come from one TypeBox schema: `Static<typeof XData>`
// is the type, the schema object itself is the JSON Schema (TypeBox's markers are symbol keys,
// which JSON Schema validators such as ajv do not see).

/** Event data: an object that takes no property beyond those listed; a property is required unless wrapped in `Type.Optional`. */
export function Data<P extends TProperties>(properties: P, options?: ObjectOptions): TObject<P> {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

export const IsoDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' });
export const AgentId = Type.String({ pattern: '^agt_' });
export const UserId = Type.String({ pattern: '^usr_' });
export const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });

export function Nullable<T extends TSchema>(schema: T): TUnion<[T, ReturnType<typeof Type.Null>]> {
  return Type.Union([schema, Type.Null()]);
}

type TLiterals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

/** One of a list of strings: `Literals(['a', 'b'] as const)` is the type `'a' | 'b'`. */
export function Literals<const T extends readonly [string, string, ...string[]]>(values: T): TUnion<TLiterals<T>> {
  return Type.Union(values.map((v) => Type.Literal(v))) as TUnion<TLiterals<T>>;
}

/**
 * The charge a credit-consuming event carries (integer milli-credits). Every charged event's data
 * also has `agent_id`, the payer. A refund is a charge with a negative `amount_mc`.
 */
export const Charge = Data({
  action: Type.String(),
  amount_mc: Type.Integer(),
  balance_after_mc: Type.Integer({ minimum: 0 }),
});
export type Charge = Static<typeof Charge>;

/** The charge an event carries, if it is a credit-consuming (or refunding) event. */
export function chargeOf(data: unknown): Charge | null {
  const c = (data as { charge?: Charge } | null)?.charge;
  return c && typeof c.amount_mc === 'number' ? c : null;
}
