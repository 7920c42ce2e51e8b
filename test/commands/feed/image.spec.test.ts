import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { ExpireImage, RecordImageUpload } from '../../../commands/feed/image.ts';
import {
  decideExpireImage,
  decideRecordImageUpload,
  IMAGE_QUOTA_BYTES,
  IMAGE_UNREFERENCED_TTL_MS,
  IMAGE_UPLOADS_PER_DAY,
  sniffImageType,
} from '../../../commands/feed/image.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, HOUR_MS, IMAGE, NOW, funded, hex, imageExpired, imageUploaded } from './fixtures.ts';

const MB = 1024 * 1024;
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
/** `n` earlier uploads of `bytes` each, the first at `firstAgo` before NOW, one minute apart. */
const uploads = (n: number, bytes: number, firstAgo: number) =>
  Array.from({ length: n }, (_, i) =>
    imageUploaded({ image_id: `img_earlier${String(i).padStart(12, '0')}`, size_bytes: bytes, uploaded_at: ago(firstAgo - i * 60_000) }),
  );

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

  it('refuses the upload past the daily cap with 429 image_daily_cap and when to retry', () => {
    const given = [...funded(AUTHOR, 0), ...uploads(IMAGE_UPLOADS_PER_DAY, 1024, 2 * HOUR_MS)];
    spec.given(given).when(record).thenThrows('image_daily_cap', 429);
    const state = given.reduce(agentAggregate.evolve, agentAggregate.initialState());
    expect(() => decideRecordImageUpload(record, state))
      .to.throw()
      .with.property('extra')
      .that.deep.includes({ retry_after: 22 * 3600, limit: IMAGE_UPLOADS_PER_DAY });
  });

  it('counts the daily cap over 24 hours: uploads older than that do not count', () => {
    spec
      .given([...funded(AUTHOR, 0), ...uploads(IMAGE_UPLOADS_PER_DAY, 1024, 25 * HOUR_MS + IMAGE_UPLOADS_PER_DAY * 60_000)])
      .when(record)
      .then([imageUploaded()]);
  });

  it('refuses an upload past the storage quota with 413 image_quota_exceeded; expired images free their share', () => {
    const full = uploads(IMAGE_QUOTA_BYTES / (5 * MB), 5 * MB, 48 * HOUR_MS);
    spec
      .given([...funded(AUTHOR, 0), ...full])
      .when(record)
      .thenThrows('image_quota_exceeded', 413);
    const freed = imageExpired({ image_id: full[0].data.image_id, size_bytes: 5 * MB, expired_at: ago(HOUR_MS) });
    spec
      .given([...funded(AUTHOR, 0), ...full, freed])
      .when(record)
      .then([imageUploaded()]);
  });

  it('a retried upload (same image id) appends nothing', () => {
    spec
      .given([...funded(AUTHOR, 0), imageUploaded()])
      .when(record)
      .then([]);
  });

  describe('ExpireImage', () => {
    const expireSpec = DeciderSpecification.for<ExpireImage, AgentState, AgentStreamEvent>({ decide: decideExpireImage, ...agentAggregate });
    const expire = (over: Partial<ExpireImage['data']> = {}): ExpireImage => ({
      type: 'ExpireImage',
      data: { agent_id: AUTHOR, image_id: IMAGE, referenced: false, uploaded_at: ago(IMAGE_UNREFERENCED_TTL_MS), ...over },
      metadata: { now: NOW },
    });
    const uploaded = imageUploaded({ uploaded_at: ago(IMAGE_UNREFERENCED_TTL_MS) });

    it('expires an image unreferenced a day after its upload', () => {
      expireSpec
        .given([...funded(AUTHOR, 0), uploaded])
        .when(expire())
        .then([imageExpired()]);
    });
    it('keeps a referenced image, a younger one, and appends nothing twice', () => {
      expireSpec
        .given([...funded(AUTHOR, 0), uploaded])
        .when(expire({ referenced: true }))
        .then([]);
      expireSpec
        .given([...funded(AUTHOR, 0), uploaded])
        .when(expire({ uploaded_at: ago(IMAGE_UNREFERENCED_TTL_MS - 1) }))
        .then([]);
      expireSpec
        .given([...funded(AUTHOR, 0), uploaded, imageExpired()])
        .when(expire())
        .then([]);
    });
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
