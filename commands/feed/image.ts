import { agentStream } from '../../events/agents.ts';
import type { ImageUploaded } from '../../events/feed.ts';
import { notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';

export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
export type ImageType = ImageUploaded['data']['content_type'];

/** The image type by content (magic bytes), never by the declared name or type: PNG, JPEG, GIF or WebP. */
export function sniffImageType(bytes: Uint8Array): ImageType | null {
  const starts = (sig: number[], at = 0) => sig.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return null;
}

export const imageIdFor = (commandId: string) => deriveId('img', commandId);

export interface ImageFacts {
  content_type: ImageType;
  size_bytes: number;
  sha256: string;
}

export type RecordImageUpload = Command<'RecordImageUpload', ImageFacts & { agent_id: string }, { now: Date; image_id: string }>;

/** Free, on the uploader's stream; the bytes are already in the blob store under `image_id`. */
export function decideRecordImageUpload(command: RecordImageUpload, state: AgentState): ImageUploaded[] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { agent_id, content_type, size_bytes, sha256 } = command.data;
  const { now, image_id } = command.metadata;
  return [{ type: 'ImageUploaded', data: { image_id, content_type, size_bytes, sha256, agent_id, uploaded_at: now.toISOString() } }];
}

/** `imageId` is imageIdFor(ctx.commandId): the caller stored the bytes under it before recording them. */
export async function recordImageUpload(bus: CommandBus, agentId: string, imageId: string, image: ImageFacts, ctx: CommandContext) {
  const command: RecordImageUpload = { type: 'RecordImageUpload', data: { ...image, agent_id: agentId }, metadata: { now: ctx.now, image_id: imageId } };
  const result = await bus.handle<AgentState, ImageUploaded>(agentStream(agentId), agentAggregate, (state) => decideRecordImageUpload(command, state), ctx);
  return { image_id: result.events[0].data.image_id, position: result.position };
}
