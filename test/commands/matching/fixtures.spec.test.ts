import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../../events/catalogue.ts';
import * as f from './fixtures.ts';

describe('commands: matching spec fixtures', () => {
  it('builds every event with data valid against its JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const built = [
      f.matchingRunCompleted(),
      f.matchingRunCompleted({ matches: [f.bilateralMatch()], auto_post: { status: 'published', post_id: f.MIXER_POST } }),
      f.autoPostPublished(),
    ];
    for (const e of built) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});
