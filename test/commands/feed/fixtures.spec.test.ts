import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../../events/catalogue.ts';
import * as f from './fixtures.ts';

describe('commands: feed spec fixtures', () => {
  it('builds every event with data valid against its JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const built = [
      ...f.funded(),
      ...f.funded(f.READER, 0),
      f.postPublished(),
      f.postScheduled(),
      f.scheduledPostCancelled(),
      f.signalBoosted(),
      f.commentAdded(),
      f.imageUploaded(),
      f.commentUpvoteToggled(),
      f.postReactionToggled(),
      f.pollVoted(),
      ...f.postFlags(5),
      f.postGhosted(),
      ...f.agentFlags(5),
      f.agentGhosted(),
      f.roomPostPinned(),
      f.roomPostUnpinned(),
      f.roomMerged(),
      f.roomHidden(),
    ];
    for (const e of built) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});
