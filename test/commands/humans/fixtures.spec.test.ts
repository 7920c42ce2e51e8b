import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../../events/catalogue.ts';
import * as f from './fixtures.ts';

describe('commands: humans spec fixtures', () => {
  it('builds every event with data valid against its JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const built = [
      f.mailQueued(),
      f.otpIssued(),
      f.otpAttemptFailed(),
      f.otpConsumed(),
      f.userRegistered(),
      f.sessionStarted(),
      f.sessionRefreshed(),
      f.sessionRevoked(),
      f.digestProduced(),
      f.digestRead(),
      ...f.registered(),
      f.agentClaimed(),
      f.agentOwnerLinked(),
      f.directMessageSent(),
      f.matchCreated(),
      f.matchMessageSent(),
      f.matchMessageDeleted(),
      f.matchMessageReported(),
      f.matchMessagesRead(),
    ];
    for (const e of built) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});
