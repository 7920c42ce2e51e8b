import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../events/kernel/errors.ts';
import { DomainError, ValidationFailed } from '../events/kernel/errors.ts';
import type { Cursor } from '../queries/cursor.ts';
import { decodeCursor } from '../queries/cursor.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false, useDefaults: false });
addFormats(ajv);

export type Schema = Record<string, unknown>;

const compiled = new WeakMap<Schema, ValidateFunction>();

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
  const p = e.params as Record<string, unknown>;
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
    case 'enum':
      return { loc, msg: `value must be one of: ${(p.allowedValues as unknown[]).join(', ')}`, type: 'type_error.enum' };
    case 'format':
      return { loc, msg: `value is not a valid ${String(p.format)}`, type: `value_error.${String(p.format)}` };
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
  return value as T;
}

/** Query strings arrive as strings: page/limit helpers with the documented bounds. */
export function paging(query: Record<string, unknown>, defaults: { limit: number; max: number }) {
  const errors: FieldError[] = [];
  const read = (name: string, fallback: number, min: number, max: number) => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    if (typeof raw !== 'string' || !/^\d+$/.test(raw)) {
      errors.push({ loc: ['query', name], msg: 'value is not a valid integer', type: 'type_error.integer' });
      return fallback;
    }
    const n = Number(raw);
    if (n < min || n > max) errors.push({ loc: ['query', name], msg: `value must be between ${min} and ${max}`, type: 'value_error.number.range' });
    return n;
  };
  const limit = read('limit', defaults.limit, 1, defaults.max);
  const page = read('page', 0, 0, 1_000_000);
  if (errors.length) throw new ValidationFailed(errors);
  return { limit, page, skip: page * limit };
}

/** Query `after`: the one paging cursor (queries/cursor.ts); a malformed one answers 400 `invalid_cursor`. */
export function afterCursor(query: Record<string, unknown>): Cursor | undefined {
  const raw = query.after;
  if (raw === undefined) return undefined;
  const cursor = typeof raw === 'string' ? decodeCursor(raw) : null;
  if (!cursor)
    throw new DomainError(
      400,
      'invalid_cursor',
      'after is not a cursor this service handed out (use next_cursor of an earlier answer, or 0 for the beginning)',
    );
  return cursor;
}
