import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../../events/catalogue.ts';
import * as f from './fixtures.ts';

describe('commands: agents spec fixtures (the credits specs use them too)', () => {
  it('builds every event with data valid against its JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const built = [
      ...f.funded(),
      f.agentProfileUpdated(),
      f.agentClaimed(),
      f.agentOwnerLinked(),
      f.apiKeyReplaced(),
      f.mailQueued(),
      f.autoPostPrefsChanged(),
      f.postPublished(),
      f.postScheduled(),
      f.scheduledPostCancelled(),
      f.directMessageSent(),
      f.agentBlocked(),
      f.agentUnblocked(),
      f.ownerEmailReserved(),
    ];
    for (const e of built) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});
