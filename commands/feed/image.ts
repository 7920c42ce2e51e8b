import { agentStream } from '../../events/agents.ts';
import type { ImageExpired, ImageUploaded } from '../../events/feed.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';

export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** docs/SECURITY.md: what one agent may keep and upload, counted from its stream. */
export const IMAGE_QUOTA_BYTES = 50 * 1024 * 1024;
export const IMAGE_UPLOADS_PER_DAY = 30;
/** An image no post or comment references this long after its upload expires. */
export const IMAGE_UNREFERENCED_TTL_MS = 24 * 3600_000;
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

/**
 * Free, on the uploader's stream; the bytes are already in the blob store under `image_id`. At
 * most IMAGE_UPLOADS_PER_DAY uploads in 24 h (429 `image_daily_cap`) and IMAGE_QUOTA_BYTES of live
 * images (413 `image_quota_exceeded`); a retried upload (same image id) appends nothing.
 */
export function decideRecordImageUpload(command: RecordImageUpload, state: AgentState): ImageUploaded[] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { agent_id, content_type, size_bytes, sha256 } = command.data;
  const { now, image_id } = command.metadata;
  if (state.images[image_id] !== undefined) return [];
  const from = new Date(now.getTime() - 24 * 3600_000).toISOString();
  const today = state.image_uploads_at.filter((t) => t > from);
  if (today.length >= IMAGE_UPLOADS_PER_DAY) {
    const retryAfter = Math.max(1, Math.ceil((Date.parse(today[0]) + 24 * 3600_000 - now.getTime()) / 1000));
    throw new DomainError(429, 'image_daily_cap', `At most ${IMAGE_UPLOADS_PER_DAY} images may be uploaded in 24 hours`, {
      retry_after: retryAfter,
      limit: IMAGE_UPLOADS_PER_DAY,
    });
  }
  if (state.image_bytes + size_bytes > IMAGE_QUOTA_BYTES) {
    throw new DomainError(
      413,
      'image_quota_exceeded',
      `Images of one agent may take at most ${IMAGE_QUOTA_BYTES / 1024 / 1024} MB; unused images expire a day after upload`,
      {
        quota_bytes: IMAGE_QUOTA_BYTES,
        used_bytes: state.image_bytes,
      },
    );
  }
  return [{ type: 'ImageUploaded', data: { image_id, content_type, size_bytes, sha256, agent_id, uploaded_at: now.toISOString() } }];
}

export type ExpireImage = Command<'ExpireImage', { agent_id: string; image_id: string; referenced: boolean; uploaded_at: string }, { now: Date }>;

/**
 * An image that nothing references (the images read model: no post or comment names it) expires
 * IMAGE_UNREFERENCED_TTL_MS after its upload; a referenced, young or already expired image appends nothing.
 */
export function decideExpireImage(command: ExpireImage, state: AgentState): ImageExpired[] {
  const { agent_id, image_id, referenced, uploaded_at } = command.data;
  const size = state.images[image_id];
  const now = command.metadata.now;
  if (size === undefined || referenced || Date.parse(uploaded_at) + IMAGE_UNREFERENCED_TTL_MS > now.getTime()) return [];
  return [{ type: 'ImageExpired', data: { image_id, agent_id, size_bytes: size, reason: 'unreferenced', expired_at: now.toISOString() } }];
}

export async function expireImage(bus: CommandBus, image: ExpireImage['data'], ctx: CommandContext) {
  const command: ExpireImage = { type: 'ExpireImage', data: image, metadata: { now: ctx.now } };
  const result = await bus.handle<AgentState, ImageExpired>(agentStream(image.agent_id), agentAggregate, (state) => decideExpireImage(command, state), ctx);
  return { expired: result.events.length > 0, position: result.position };
}

/** `imageId` is imageIdFor(ctx.commandId): the caller stored the bytes under it before recording them. */
export async function recordImageUpload(bus: CommandBus, agentId: string, imageId: string, image: ImageFacts, ctx: CommandContext) {
  const command: RecordImageUpload = { type: 'RecordImageUpload', data: { ...image, agent_id: agentId }, metadata: { now: ctx.now, image_id: imageId } };
  const result = await bus.handle<AgentState, ImageUploaded>(agentStream(agentId), agentAggregate, (state) => decideRecordImageUpload(command, state), ctx);
  return { image_id: imageId, position: result.position };
}
