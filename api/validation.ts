import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../events/kernel/errors.ts';
import { DomainError, ValidationFailed } from '../events/kernel/errors.ts';
import { jsonDepth } from '../events/kernel/json.ts';
import type { Cursor } from '../queries/cursor.ts';
import { decodeCursor } from '../queries/cursor.ts';
import { isRecord } from './guards.ts';

// ajv-formats is CommonJS: Node's ESM default import is its module.exports, the plugin function, which its `export default` types do not describe.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false, useDefaults: false });
addFormats(ajv);

export type Schema = Record<string, unknown>;

declare const valueType: unique symbol;

/** A plain JSON Schema that names the type of the value it accepts (a type only: nothing is added to the object). */
export type TypedSchema<T> = Schema & { readonly [valueType]?: T };

/** The type a `TypedSchema` accepts. */
export type ValueOf<S> = S extends { readonly [valueType]?: infer T } ? (unknown extends T ? never : T) : never;

/**
 * A plain JSON Schema with the type of the value it accepts: what `mount` hands a handler as its
 * validated `input.body` or `input.query` (api/operations.ts). The schema object is returned as it
 * is (the type is only for the compiler).
 */
export function typed<T>(schema: Schema): TypedSchema<T> {
  return schema;
}

const compiled = new WeakMap<Schema, ValidateFunction>();

/**
 * Query strings: every value arrives as a string (or an array when repeated), so this instance
 * coerces to the schema's types (`'array'`: one repeated value against a scalar type is taken
 * as that value). It validates a copy: handlers keep reading `ctx.query` as it came.
 */
const queryAjv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: 'array', useDefaults: false });
addFormats(queryAjv);
const compiledQuery = new WeakMap<Schema, ValidateFunction>();

function compile(schema: Schema): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

function toFieldError(where: 'body' | 'query' | 'path', e: ErrorObject): FieldError {
  const loc: Array<string | number> = [where];
  for (const part of e.instancePath.split('/').slice(1)) loc.push(/^\d+$/.test(part) ? Number(part) : part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const p: Record<string, unknown> = e.params;
  switch (e.keyword) {
    case 'required':
      return { loc: [...loc, String(p.missingProperty)], msg: 'field required', type: 'missing' };
    case 'additionalProperties':
      return { loc: [...loc, String(p.additionalProperty)], msg: 'extra fields not permitted', type: 'extra_forbidden' };
    case 'type':
      return { loc, msg: `value must be of type ${String(p.type)}`, type: `type_error.${String(p.type)}` };
    case 'maxLength':
      return { loc, msg: `ensure this value has at most ${String(p.limit)} characters`, type: 'value_error.any_str.max_length' };
    case 'minLength':
      return { loc, msg: `ensure this value has at least ${String(p.limit)} characters`, type: 'value_error.any_str.min_length' };
    case 'enum': {
      // A query enum may allow an empty value (the handler's default): listed as "or empty".
      const allowed: unknown[] = Array.isArray(p.allowedValues) ? p.allowedValues : [];
      const values = allowed.filter((v) => v !== '').join(', ');
      return { loc, msg: `value must be one of: ${values}${allowed.includes('') ? ' (or empty)' : ''}`, type: 'type_error.enum' };
    }
    case 'format':
      return { loc, msg: `value is not a valid ${String(p.format)}`, type: `value_error.${String(p.format)}` };
    case 'pattern':
      // The integer query parameters (limit, page, days): the message the paging helpers give.
      if (p.pattern === '^\\d+$') return { loc, msg: 'value is not a valid integer', type: 'type_error.integer' };
      return { loc, msg: e.message ?? 'invalid value', type: 'value_error.pattern' };
    default:
      return { loc, msg: e.message ?? 'invalid value', type: `value_error.${e.keyword}` };
  }
}

/** Validates a request part against its JSON Schema; throws the 422 shape on failure. */
export function validate<T>(schema: Schema, value: unknown, where: 'body' | 'query' | 'path' = 'body'): T {
  const fn = compile(schema);
  if (!fn(value)) {
    const errors = (fn.errors ?? []).filter((e) => !(e.keyword === 'if'));
    throw new ValidationFailed(errors.map((e) => toFieldError(where, e)));
  }
  // The schema accepted it: T is the type the caller names for that schema.
  return value as T;
}

/**
 * Validates a request's query string against its operation's `query` schema (api/operations.ts
 * `mount`): types coerced as query strings need, parameters the schema does not name allowed
 * unless it says otherwise; throws the 422 shape (`loc: ['query', name]`) on failure.
 */
export function validateQuery(schema: Schema, query: Record<string, unknown>): void {
  let fn = compiledQuery.get(schema);
  if (!fn) {
    fn = queryAjv.compile(schema);
    compiledQuery.set(schema, fn);
  }
  if (!fn({ ...query })) throw new ValidationFailed((fn.errors ?? []).map((e) => toFieldError('query', e)));
}

/** The largest `page` that `paging` takes. */
export const MAX_PAGE = 1_000_000;

/** The largest `skip` that `skipLimit` (api/routes/communities/circles.ts) takes. */
export const MAX_SKIP = 1_000_000;

/** Query strings arrive as strings: reads one integer query parameter, a refusal into `errors` (absent or empty: the fallback). */
function readInteger(query: Record<string, unknown>, errors: FieldError[], name: string, fallback: number, min: number, max: number): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) {
    errors.push({ loc: ['query', name], msg: 'value is not a valid integer', type: 'type_error.integer' });
    return fallback;
  }
  const n = Number(raw);
  if (n < min || n > max) errors.push({ loc: ['query', name], msg: `value must be between ${min} and ${max}`, type: 'value_error.number.range' });
  return n;
}

/** Query `limit` and `page` with the documented bounds; `skip` is page * limit. */
export function paging(query: Record<string, unknown>, defaults: { limit: number; max: number }) {
  const errors: FieldError[] = [];
  const limit = readInteger(query, errors, 'limit', defaults.limit, 1, defaults.max);
  const page = readInteger(query, errors, 'page', 0, 0, MAX_PAGE);
  if (errors.length) throw new ValidationFailed(errors);
  return { limit, page, skip: page * limit };
}

/** Query `limit` alone, for a list that does not page (a top-N answer): `page` and `skip` are not read. */
export function limitOnly(query: Record<string, unknown>, defaults: { limit: number; max: number }): number {
  const errors: FieldError[] = [];
  const limit = readInteger(query, errors, 'limit', defaults.limit, 1, defaults.max);
  if (errors.length) throw new ValidationFailed(errors);
  return limit;
}

/** Query `after`: the one paging cursor (queries/cursor.ts); a malformed one answers 400 `invalid_cursor`. */
export function afterCursor(query: Record<string, unknown>): Cursor | undefined {
  return cursorParam(query, 'after');
}

/** A cursor query parameter (`after`, or `cursor` on the newest-first browse lists): absent is undefined, one not handed out 400 `invalid_cursor`. */
export function cursorParam(query: Record<string, unknown>, name: 'after' | 'cursor'): Cursor | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  const cursor = typeof raw === 'string' ? decodeCursor(raw) : null;
  if (!cursor)
    throw new DomainError(
      400,
      'invalid_cursor',
      `${name} is not a cursor this service handed out (use next_cursor of an earlier answer${name === 'after' ? ', or 0 for the beginning' : ''})`,
    );
  return cursor;
}

/**
 * Limits every request body meets before any route sees it (docs/SECURITY.md): nesting depth of
 * the whole body, and depth and size of each free-form JSON field (A2A `payload`, action
 * `parameters`, checked by their routes with checkFreeForm).
 */
export const BODY_LIMITS = { maxDepth: 32, freeFormDepth: 16, freeFormBytes: 16 * 1024 } as const;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Bidirectional controls: embeddings, overrides, isolates and the marks (ALM, LRM, RLM). */
const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
/** Fields whose text is a name or a title: normalised to NFC, no bidirectional controls. */
const NAME_FIELD = /(^|_)(name|title)$/;

function textError(loc: Array<string | number>, text: string, name: boolean): FieldError | null {
  if (text.includes('\u0000')) return { loc, msg: 'text must not contain NUL (U+0000) characters', type: 'value_error.str.nul' };
  if (LONE_SURROGATE.test(text)) return { loc, msg: 'text must not contain unpaired surrogates (not valid Unicode)', type: 'value_error.str.surrogate' };
  if (name && BIDI_CONTROL.test(text)) {
    return { loc, msg: 'names and titles must not contain bidirectional control characters', type: 'value_error.str.bidi_control' };
  }
  return null;
}

/**
 * Screens a parsed body without recursion: depth at most BODY_LIMITS.maxDepth, no NUL or lone
 * surrogate in any string or key, and every name or title field (`name`, `title`, `*_name`,
 * `*_title`) normalised to NFC (in place) and free of bidirectional controls. Throws the 422 list.
 */
/** The body of a write that takes no fields (OpenAPI: none, or a JSON object it does not read): anything else is 422. */
export const NO_FIELDS_BODY: Schema = { type: 'object' };

/** Refuses a body that is not a JSON object on a write that takes no fields (after the caller's checks: authorisation first). */
export function checkNoFields(body: unknown): void {
  validate(NO_FIELDS_BODY, body ?? {});
}

export function screenBody(body: unknown): void {
  const errors: FieldError[] = [];
  const stack: Array<{ value: unknown; loc: Array<string | number> }> = [{ value: body, loc: ['body'] }];
  while (errors.length < 20) {
    const item = stack.pop();
    if (!item) break;
    const { value, loc } = item;
    if (value === null || typeof value !== 'object') continue;
    if (loc.length > BODY_LIMITS.maxDepth) {
      errors.push({ loc, msg: `nested deeper than ${BODY_LIMITS.maxDepth} levels (the limit of a request body)`, type: 'value_error.json.depth' });
      continue;
    }
    const arr = Array.isArray(value);
    const entries: Array<[string | number, unknown]> = arr ? value.map((v, i) => [i, v]) : Object.entries(value);
    const parent = loc[loc.length - 1];
    for (const [key, child] of entries) {
      const at = [...loc, key];
      if (typeof key === 'string') {
        const e = textError(at, key, false);
        if (e) errors.push({ ...e, msg: `key: ${e.msg}` });
      }
      if (typeof child === 'string') {
        const field = typeof key === 'string' ? key : typeof parent === 'string' ? parent : '';
        const name = NAME_FIELD.test(field);
        const e = textError(at, child, name);
        if (e) errors.push(e);
        else if (name && typeof key === 'string' && isRecord(value)) {
          const nfc = child.normalize('NFC');
          if (nfc !== child) value[key] = nfc;
        }
      } else if (child !== null && typeof child === 'object') {
        stack.push({ value: child, loc: at });
      }
    }
  }
  if (errors.length) throw new ValidationFailed(errors);
}

/** A free-form JSON field: at most BODY_LIMITS.freeFormDepth levels and freeFormBytes of JSON. */
export function checkFreeForm(value: unknown, field: string): void {
  if (value === undefined) return;
  const loc = ['body', field];
  const depth = jsonDepth(value);
  if (depth > BODY_LIMITS.freeFormDepth) {
    throw new ValidationFailed([{ loc, msg: `nested ${depth} levels deep; the limit is ${BODY_LIMITS.freeFormDepth}`, type: 'value_error.json.depth' }]);
  }
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
  if (bytes > BODY_LIMITS.freeFormBytes) {
    throw new ValidationFailed([{ loc, msg: `${bytes} bytes of JSON; the limit is ${BODY_LIMITS.freeFormBytes}`, type: 'value_error.json.size' }]);
  }
}
