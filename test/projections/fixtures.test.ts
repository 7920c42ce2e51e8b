import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../events/catalogue.ts';
import * as fixtures from './fixtures.ts';

describe('projections: spec fixtures', () => {
  it('builds every event with data valid against its JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const built = Object.values(fixtures).flatMap((f) => {
      if (typeof f !== 'function' || f.length !== 0) return [];
      const e: unknown = (f as () => unknown)();
      return e && typeof e === 'object' && 'type' in e && 'data' in e ? [e as { type: string; data: unknown }] : [];
    });
    expect(built.length).to.be.above(40);
    for (const e of built) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});
