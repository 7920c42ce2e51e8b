import Router from '@koa/router';
import { createHash } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { IMAGE_MAX_BYTES, imageIdFor, recordImageUpload } from '../../../commands/feed/image.ts';
import { checkImage } from '../../../commands/feed/image-bytes.ts';
import { getLiveImage } from '../../../queries/feed/images.ts';
import { DomainError, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { BlobStore } from '../../../events/store/blobs.ts';
import type { Services } from '../../services.ts';
import { commandContext, settled, writer } from '../util.ts';
import { LIMITS } from '../../rate-limit.ts';
import { mount, operations } from '../../operations.ts';
import { PostFeedUploadImageAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

interface UploadedFile {
  filepath: string;
  size: number;
}

const multipart = koaBody({
  multipart: true,
  json: false,
  urlencoded: false,
  text: false,
  formidable: { maxFiles: 1, maxFields: 10, maxFileSize: IMAGE_MAX_BYTES, maxTotalFileSize: IMAGE_MAX_BYTES, allowEmptyFiles: false },
});

/** Parses the multipart body; formidable's refusals become 413 (too large) or 400. */
async function parseMultipart(ctx: Context): Promise<void> {
  if (!ctx.is('multipart/form-data')) throw new DomainError(415, 'unsupported_media_type', 'Send the image as multipart/form-data with a "file" field');
  try {
    await multipart(ctx, async () => undefined);
  } catch (err) {
    // A throw is typed unknown; formidable's errors carry these fields.
    const e = err as { httpCode?: number; code?: number; message?: string };
    if (e.httpCode === 413 || /maxFileSize|maxTotalFileSize|exceeded/i.test(e.message ?? '')) {
      throw new DomainError(413, 'payload_too_large', `Images are at most ${IMAGE_MAX_BYTES / 1024 / 1024} MB`);
    }
    throw new DomainError(400, 'invalid_multipart', 'Malformed multipart body');
  }
}

function uploadedFile(ctx: Context): UploadedFile | null {
  const files = ctx.request.files;
  const f = files?.file ?? files?.image;
  return (Array.isArray(f) ? f[0] : f) ?? null;
}

/**
 * Stores an upload, checked by size and by content (a well-formed PNG, JPEG, GIF or WebP with
 * bounded dimensions, `checkImage`) and stripped of its metadata, records the upload (quota, daily
 * cap) and answers the image's URL: the multipart route and the upload_post_image tool (base64)
 * both end here. What is stored, counted and served is the stripped copy.
 */
export async function storeImage(s: Services, blobs: BlobStore, ctx: Context, agentId: string, upload: Buffer): Promise<void> {
  if (upload.length > IMAGE_MAX_BYTES) throw new DomainError(413, 'payload_too_large', 'Images are at most 5 MB');
  const { content_type: type, width, height, bytes } = checkImage(upload);
  const cmdCtx = commandContext(s, ctx, agentId);
  const imageId = imageIdFor(cmdCtx.commandId);
  await blobs.put(imageId, bytes);
  const meta = { content_type: type, size_bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  let position: number;
  try {
    ({ position } = await recordImageUpload(s.bus, agentId, imageId, meta, cmdCtx));
  } catch (err) {
    // Refused (quota, daily cap): the bytes go too.
    await blobs.delete(imageId);
    throw err;
  }
  await settled(s, position);
  const url = `${s.config.publicBaseUrl}/api/feed/images/${imageId}`;
  ctx.body = { image_id: imageId, url, image_url: url, content_type: type, size_bytes: bytes.length, width, height, markdown: `![image](${url})` };
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The upload_post_image tool: the image as base64 text, then the multipart route's checks (storeImage). */
export async function uploadImageBase64(s: Services, ctx: Context, base64: string): Promise<void> {
  const agentId = writer(s, ctx);
  // A tool call, not a mounted operation: it counts the upload route's write limit itself.
  s.limiter.hit(LIMITS.writes, agentId, ctx);
  const text = base64.replace(/\s+/g, '');
  if (!BASE64.test(text) || text.length % 4 === 1) {
    throw new ValidationFailed([{ loc: ['body', 'content_base64'], msg: 'value is not valid base64', type: 'value_error.base64' }]);
  }
  // The decoded size, known before decoding: more than the limit is refused as the multipart route refuses it.
  if (Math.floor((text.replace(/=+$/, '').length * 3) / 4) > IMAGE_MAX_BYTES) throw new DomainError(413, 'payload_too_large', 'Images are at most 5 MB');
  await storeImage(s, s.blobs, ctx, agentId, Buffer.from(text, 'base64'));
}

export const mediaOperations = operations({
  postFeedUploadImage: {
    method: 'POST',
    path: '/api/feed/upload-image',
    summary: 'Upload an image for a post (multipart/form-data, field file)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedUploadImageAnswer),
    bodyContentType: 'multipart/form-data',
    rateLimit: LIMITS.writes,
  },
  getFeedImagesByImageId: {
    method: 'GET',
    path: '/api/feed/images/:image_id',
    summary: 'An uploaded image',
    tags: ['feed'],
    auth: 'none',
    responses: { 200: { contentType: 'image/*', schema: { type: 'string', contentEncoding: 'binary' } } },
  },
});

export function mediaRoutes(router: Router, s: Services, blobs: BlobStore = s.blobs): void {
  const upload = async (ctx: Context) => {
    const agentId = writer(s, ctx);
    await parseMultipart(ctx);
    const file = uploadedFile(ctx);
    const all = Object.values(ctx.request.files ?? {}).flat();
    try {
      if (!file) throw new ValidationFailed([{ loc: ['body', 'file'], msg: 'field required (a multipart file named "file")', type: 'missing' }]);
      await storeImage(s, blobs, ctx, agentId, await readFile(file.filepath));
    } finally {
      await Promise.all(all.map((f) => unlink(f.filepath).catch(() => undefined)));
    }
  };

  const image = async (ctx: Context) => {
    const meta = await getLiveImage(s.store, ctx.params.image_id);
    const bytes = meta ? await blobs.get(meta._id) : null;
    if (!meta || !bytes) throw notFound('Image', 'image_not_found');
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
    ctx.set('ETag', `"${meta.sha256}"`);
    ctx.type = meta.content_type;
    ctx.body = bytes;
  };

  const uploads = new Router({ prefix: '/api/feed/upload-image' });
  mount(uploads, mediaOperations.postFeedUploadImage, upload);

  const images = new Router({ prefix: '/api/feed/images' });
  mount(images, mediaOperations.getFeedImagesByImageId, image);

  router.use(uploads.routes());
  router.use(images.routes());
}
