import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { allOperations } from '../../api/app.ts';
import { documentedAnswers } from '../../api/openapi.ts';
import type { Operation } from '../../api/operations.ts';
import { pathParams } from '../../api/operations.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
addFormats(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

let table: Array<{ op: Operation; re: RegExp; params: number }> | null = null;

/** The operation that serves `method path` (the most literal match), or null (no route: the router's 404/405). */
export function operationFor(method: string, path: string): Operation | null {
  table ??= allOperations().map((op) => ({
    op,
    re: new RegExp(`^${op.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+')}/?$`),
    params: pathParams(op.path).length,
  }));
  const bare = path.split('?')[0];
  let best: { op: Operation; params: number } | null = null;
  for (const t of table) if (t.op.method === method && t.re.test(bare) && (!best || t.params < best.params)) best = t;
  return best?.op ?? null;
}

/**
 * Checks an answer against the route table's documentation of its operation: a documented status,
 * the documented media type, a body valid against the documented schema. Returns the problem, or null.
 */
export function undocumentedAnswer(method: string, path: string, status: number, contentType: string, body: unknown): string | null {
  const op = operationFor(method, path);
  return op ? checkAnswer(op, `${method} ${path}`, status, contentType, body) : null;
}

/** The same check for a known operation (`request` names the request in the message). */
export function checkAnswer(op: Operation, request: string, status: number, contentType: string, body: unknown): string | null {
  const where = `${request} (${op.method} ${op.path})`;
  const answer = documentedAnswers(op).get(status);
  if (!answer)
    return `${where} answered ${status}, which is not documented (documented: ${[...documentedAnswers(op).keys()].join(', ')}): ${JSON.stringify(body).slice(0, 300)}`;
  if (status === 304) return null;
  const types = [answer.contentType, ...(answer.alsoContentTypes ?? [])];
  if (answer.contentType && !types.some((t) => contentType.startsWith(t.replace(/\*$/, ''))))
    return `${where} answered ${status} as ${contentType}, documented ${types.join(' or ')}`;
  if (!answer.schema || !answer.contentType.includes('json') || !contentType.includes('json')) return null;
  let fn = compiled.get(answer.schema);
  if (!fn) {
    fn = ajv.compile(answer.schema);
    compiled.set(answer.schema, fn);
  }
  if (!fn(body))
    return `${where} answered ${status} with a body that does not match its documented schema: ${ajv.errorsText(fn.errors)}; body ${JSON.stringify(body).slice(0, 300)}`;
  return null;
}
