import { expect } from 'chai';
import { allOperations } from '../../api/app.ts';
import { isBareObject } from '../../api/openapi.ts';
import type { Operation } from '../../api/operations.ts';

/**
 * Every operation that answers JSON documents a real success schema (docs/OPENAPI.md "Response
 * schemas"), not the bare `{type: 'object'}` default: the response checks of the API tests
 * (test/helpers/documented.ts) can only catch what a schema says.
 */

/**
 * Answers whose shape is free-form on purpose, each with the reason (none today: even the served
 * documents have a known top level). An entry here is the only way to add an operation without a schema.
 */
const FREE_FORM: Record<string, string> = {};

/** The JSON success answers of an operation that say nothing beyond "an object". */
function genericAnswers(op: Operation): number[] {
  if (!op.responses) return [200];
  return Object.entries(op.responses)
    .filter(([, a]) => (a.contentType ?? 'application/json').includes('json'))
    .filter(([, a]) => !a.schema || isBareObject(a.schema))
    .map(([status]) => Number(status));
}

describe('documented response schemas', () => {
  const ops = allOperations();

  it('every operation answering JSON documents its success schema (or is on the justified free-form list)', () => {
    const missing = ops.filter((op) => genericAnswers(op).length && !FREE_FORM[op.id ?? '']);
    expect(missing.map((op) => `${op.id} (${op.method} ${op.path}) answers ${genericAnswers(op).join(', ')} as a bare object`)).to.deep.equal([]);
  });

  it('the free-form list names only existing operations that still need it (remove an entry once its schema is declared)', () => {
    const byId = new Map(ops.map((op) => [op.id ?? '', op]));
    const stale = Object.keys(FREE_FORM).filter((id) => {
      const op = byId.get(id);
      return !op || !genericAnswers(op).length;
    });
    expect(stale).to.deep.equal([]);
  });

  it('every free-form entry says why', () => {
    for (const [id, why] of Object.entries(FREE_FORM)) expect(why.length, id).to.be.greaterThan(20);
  });
});
