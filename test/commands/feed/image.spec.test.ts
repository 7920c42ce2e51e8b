import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { RecordImageUpload } from '../../../commands/feed/image.ts';
import { decideRecordImageUpload, sniffImageType } from '../../../commands/feed/image.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, IMAGE, NOW, funded, hex, imageUploaded } from './fixtures.ts';

describe('commands: feed RecordImageUpload (agent-<id>)', () => {
  const spec = DeciderSpecification.for<RecordImageUpload, AgentState, AgentStreamEvent>({ decide: decideRecordImageUpload, ...agentAggregate });
  const record: RecordImageUpload = {
    type: 'RecordImageUpload',
    data: { agent_id: AUTHOR, content_type: 'image/png', size_bytes: 1024, sha256: hex('e') },
    metadata: { now: NOW, image_id: IMAGE },
  };

  it('records the stored image for free under the id the command carries', () => {
    spec.given(funded(AUTHOR, 0)).when(record).then([imageUploaded()]);
  });

  it('refuses an agent that does not exist with 404 agent_not_found', () => {
    spec.given([]).when(record).thenThrows('agent_not_found', 404);
  });

  it('tells the image type by its first bytes only', () => {
    const bytes = (...b: number[]) => Uint8Array.from([...b, ...new Array<number>(16).fill(0)]);
    expect(sniffImageType(bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))).to.equal('image/png');
    expect(sniffImageType(bytes(0xff, 0xd8, 0xff))).to.equal('image/jpeg');
    expect(sniffImageType(bytes(0x47, 0x49, 0x46, 0x38, 0x39, 0x61))).to.equal('image/gif');
    expect(sniffImageType(bytes(0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50))).to.equal('image/webp');
    expect(sniffImageType(bytes(0x47, 0x49, 0x46, 0x38, 0x38, 0x61))).to.equal(null);
    expect(sniffImageType(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'))).to.equal(null);
  });
});
