import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../../events/catalogue.ts';
import * as f from './fixtures.ts';

describe('commands: messaging spec fixtures', () => {
  it('builds every event with data valid against its JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const built = [
      ...f.funded(),
      ...f.funded(f.RECIPIENT, 0),
      f.agentClaimed(),
      f.directMessageSent(),
      f.directMessageSent({ to_agent_id: null, to_user_id: f.MEMBER, owner_user_id: f.OWNER }),
      ...f.dmsSent(3, f.NOW),
      f.agentBlocked(),
      f.agentUnblocked(),
      f.a2aMessageSent(),
      f.a2aMessageSent({ signature: f.signature() }),
      f.meshThreadCreated(),
      ...f.threadsCreated(3, f.NOW),
      f.meshThreadMessagePosted(),
      f.passportKeyIssued(),
      f.passportKeyIssued({ key_id: f.NEXT_KEY, replaces_key_id: f.KEY }),
      f.notificationsRead(),
      f.notificationsExpired(),
      f.agentHeartbeatReceived(),
    ];
    for (const e of built) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});
