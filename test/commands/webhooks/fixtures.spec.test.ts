import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../../events/catalogue.ts';
import * as f from './fixtures.ts';

describe('commands: webhooks spec fixtures', () => {
  it('builds every event with data valid against its JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const built = [
      f.webhookConfigured(),
      f.webhookSecretRegenerated(),
      f.webhookTestFired(),
      f.webhookDisabled(),
      f.webhookDeliveryQueued(),
      f.webhookDeliveryAttempted(),
      ...f.failedAttempts(8),
    ];
    for (const e of built) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});
