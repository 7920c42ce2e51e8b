import type { Answer } from '../operations.ts';
import type { Schema } from '../validation.ts';
import { propertiesOf, requiredOf } from '../schema-parts.ts';

// Building blocks of the documented answer schemas (docs/OPENAPI.md "Response schemas"). Answers
// stay open (`additionalProperties` is not set): a new field is not a breaking change; `required`
// lists the fields every answer carries.

export const str: Schema = { type: 'string' };
export const int: Schema = { type: 'integer' };
export const num: Schema = { type: 'number' };
export const bool: Schema = { type: 'boolean' };
/** A value of any JSON type (free-form data such as an event's payload). */
export const any: Schema = {};
/** An object whose keys are data (counts by name, a free-form payload). */
export const map = (values: Schema = {}): Schema => ({ type: 'object', additionalProperties: values });
export const nullStr: Schema = { type: ['string', 'null'] };
export const nullInt: Schema = { type: ['integer', 'null'] };
export const nullNum: Schema = { type: ['number', 'null'] };
/** A schema or null. */
export const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
export const arr = (items: Schema): Schema => ({ type: 'array', items });
export const strs: Schema = arr(str);

/** An object answer: `required` fields always there, `optional` ones sometimes. */
export function obj(required: Record<string, Schema>, optional: Record<string, Schema> = {}): Schema {
  return { type: 'object', required: Object.keys(required), properties: { ...required, ...optional } };
}

/** The same object with more fields. */
export function extend(base: Schema, required: Record<string, Schema>, optional: Record<string, Schema> = {}): Schema {
  return {
    type: 'object',
    required: [...new Set([...requiredOf(base), ...Object.keys(required)])],
    properties: { ...propertiesOf(base), ...required, ...optional },
  };
}

/**
 * A skip/limit page: `{items, total, page, limit, has_more}` (DECISIONS.md "Lists"; `has_more`:
 * more items follow this page, filled in by `mount` from `total` when the handler leaves it out),
 * plus the cursor fields when given.
 */
export function pageOf(item: Schema, extra: Record<string, Schema> = {}, optional: Record<string, Schema> = {}): Schema {
  return obj({ items: arr(item), total: int, page: int, limit: int, has_more: bool, ...extra }, optional);
}

/** The cursor fields of a list that can be resumed (queries/cursor.ts, docs/PAGING.md). */
export const CURSOR_FIELDS: Record<string, Schema> = { next_cursor: nullStr, has_more: bool };

/** The cursor fields of a list that can also be polled for newer items (queries/cursor.ts listPage, docs/PAGING.md). */
export const POLL_CURSOR_FIELDS: Record<string, Schema> = { ...CURSOR_FIELDS, poll_cursor: str };

/** The 200 answer of an operation with this JSON schema (an Operation's `responses`). */
export const ok = (schema: Schema): Record<number, Answer> => ({ 200: { schema } });

/**
 * A capability as a request gives it: normalised (events/capabilities.ts) to a slug of 3-40
 * characters of [a-z0-9-], which the command checks (value_error.capability); the schema states
 * the bounds of the raw text, which normalising never lengthens.
 */
export const CAPABILITY_INPUT: Schema = {
  type: 'string',
  minLength: 3,
  maxLength: 80,
  description:
    'A capability slug: lower-cased, accents dropped, spaces, underscores, dots and slashes made hyphens, other characters dropped; the result must be 3-40 characters of a-z, 0-9 and - (e.g. "Lead Gen" is lead-gen).',
  examples: ['lead-gen'],
};
