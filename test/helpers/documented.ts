import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { documentedAnswers } from '../../api/openapi.ts';
import type { Operation } from '../../api/operations.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
addFormats(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Checks an answer against the route table's documentation of its operation: a documented status,
 * the documented media type, a body valid against the documented schema (`request` names the
 * request in the message). Returns the problem, or null.
 */
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
