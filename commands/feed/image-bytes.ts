// The checks an uploaded image's bytes pass before they are stored: a full walk of the file's
// structure (PNG chunks with their CRCs, JPEG segments, GIF blocks, WebP RIFF chunks), bounded
// dimensions, and a copy without metadata. docs/SECURITY.md "Uploaded images".
import { crc32 } from 'node:zlib';
import { imageSize } from 'image-size';
import { DomainError } from '../../events/kernel/errors.ts';
import { sniffImageType } from './image.ts';
import type { ImageType } from './image.ts';

/** Neither side may be longer than this many pixels. */
export const IMAGE_MAX_SIDE = 8192;
/** Nor may an image (or a GIF frame) have more pixels than this: a 5 MB file can declare a gigapixel image, which a viewer would decode. */
export const IMAGE_MAX_PIXELS = 40_000_000;

export interface CheckedImage {
  content_type: ImageType;
  width: number;
  height: number;
  /** The image without metadata: what is stored and served. */
  bytes: Buffer;
}

const invalid = (type: string, why: string) => new DomainError(422, 'invalid_image', `Not a well-formed ${type} image: ${why}`);

function bound(type: string, width: number, height: number, what = 'The image'): void {
  if (!(width > 0 && height > 0)) throw invalid(type, `${what} has no pixels (${width} x ${height})`);
  if (width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE || width * height > IMAGE_MAX_PIXELS) {
    throw new DomainError(
      422,
      'image_dimensions_too_large',
      `${what} is ${width} x ${height} pixels; at most ${IMAGE_MAX_SIDE} pixels a side and ${IMAGE_MAX_PIXELS / 1_000_000} megapixels`,
      { max_side: IMAGE_MAX_SIDE, max_pixels: IMAGE_MAX_PIXELS, width, height },
    );
  }
}

// ---- PNG -------------------------------------------------------------------------------------

/** The chunks kept besides the critical ones: transparency and colour rendering, nothing that carries text or data. */
const PNG_KEPT = new Set(['tRNS', 'gAMA', 'cHRM', 'sRGB', 'sBIT', 'bKGD']);
const PNG_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

function png(bytes: Buffer): { bytes: Buffer; width: number; height: number } {
  const kept: Buffer[] = [bytes.subarray(0, 8)];
  let at = 8;
  let width = 0;
  let height = 0;
  let seen = 0;
  let idat: 'none' | 'in' | 'after' = 'none';
  let ended = false;
  while (at < bytes.length) {
    if (ended) throw invalid('PNG', 'bytes after IEND');
    if (at + 12 > bytes.length) throw invalid('PNG', 'a truncated chunk');
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) throw invalid('PNG', 'a chunk type that is not four letters');
    const end = at + 12 + length;
    if (length > 0x7fffffff || end > bytes.length) throw invalid('PNG', `the ${type} chunk runs past the end`);
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== bytes.readUInt32BE(at + 8 + length)) throw invalid('PNG', `the ${type} chunk's CRC is wrong`);
    const data = bytes.subarray(at + 8, at + 8 + length);
    seen++;
    if (seen === 1 && type !== 'IHDR') throw invalid('PNG', 'the first chunk is not IHDR');
    if (type === 'IHDR') {
      if (seen !== 1 || length !== 13) throw invalid('PNG', 'IHDR is not a 13-byte first chunk');
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colour, compression, filter, interlace] = [data[8], data[9], data[10], data[11], data[12]];
      if (!PNG_DEPTHS[colour]?.includes(depth) || compression !== 0 || filter !== 0 || interlace > 1)
        throw invalid('PNG', 'IHDR declares an impossible format');
      bound('PNG', width, height);
    } else if (type === 'IDAT') {
      if (idat === 'after') throw invalid('PNG', 'IDAT chunks are not consecutive');
      idat = 'in';
    } else {
      if (idat === 'in') idat = 'after';
      if (type === 'IEND') {
        if (length !== 0) throw invalid('PNG', 'IEND has data');
        ended = true;
      } else if (type !== 'PLTE' && !PNG_KEPT.has(type)) {
        // An unknown critical chunk (upper-case first letter) means a viewer could not show the image.
        if (type.charCodeAt(0) < 0x61) throw invalid('PNG', `unknown critical chunk ${type}`);
        at = end;
        continue;
      }
    }
    kept.push(bytes.subarray(at, end));
    at = end;
  }
  if (!ended) throw invalid('PNG', 'no IEND chunk');
  if (idat === 'none') throw invalid('PNG', 'no image data (IDAT)');
  return { bytes: Buffer.concat(kept), width, height };
}

// ---- JPEG ------------------------------------------------------------------------------------

/** APP0 (JFIF) and APP14 (Adobe: how to read the colour channels) are kept; every other APPn (EXIF, XMP, ICC ...) and COM go. */
const JPEG_KEPT_APP = new Set([0xe0, 0xee]);

function jpeg(bytes: Buffer): { bytes: Buffer; width: number; height: number } {
  const kept: Buffer[] = [bytes.subarray(0, 2)];
  let at = 2;
  let frame: { width: number; height: number } | null = null;
  let scans = 0;
  for (;;) {
    if (at >= bytes.length || bytes[at] !== 0xff) throw invalid('JPEG', 'a segment does not start with a marker');
    while (bytes[at] === 0xff && at < bytes.length) at++; // fill bytes
    if (at >= bytes.length) throw invalid('JPEG', 'no end of image (EOI)');
    const marker = bytes[at++];
    if (marker === 0xd9) {
      if (at !== bytes.length) throw invalid('JPEG', 'bytes after the end of image (EOI)');
      kept.push(Buffer.from([0xff, 0xd9]));
      break;
    }
    if (marker === 0x00 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01)
      throw invalid('JPEG', `marker ${marker.toString(16)} out of place`);
    if (at + 2 > bytes.length) throw invalid('JPEG', 'a truncated segment');
    const length = bytes.readUInt16BE(at);
    const end = at + length;
    if (length < 2 || end > bytes.length) throw invalid('JPEG', 'a segment runs past the end');
    const segment = Buffer.concat([Buffer.from([0xff, marker]), bytes.subarray(at, end)]);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (frame || length < 8) throw invalid('JPEG', 'a second or short frame header (SOF)');
      frame = { height: bytes.readUInt16BE(at + 3), width: bytes.readUInt16BE(at + 5) };
      bound('JPEG', frame.width, frame.height);
    }
    at = end;
    if ((marker >= 0xe0 && marker <= 0xef && !JPEG_KEPT_APP.has(marker)) || marker === 0xfe) continue;
    kept.push(segment);
    if (marker === 0xda) {
      if (!frame) throw invalid('JPEG', 'a scan before the frame header');
      scans++;
      // The entropy-coded data runs to the next marker that is neither a stuffed 0xFF00 nor a restart marker.
      const start = at;
      while (at < bytes.length) {
        if (
          bytes[at] === 0xff &&
          at + 1 < bytes.length &&
          bytes[at + 1] !== 0x00 &&
          !(bytes[at + 1] >= 0xd0 && bytes[at + 1] <= 0xd7) &&
          bytes[at + 1] !== 0xff
        )
          break;
        at++;
      }
      kept.push(bytes.subarray(start, at));
    }
  }
  if (!frame || scans === 0) throw invalid('JPEG', 'no frame or no scan');
  return { bytes: Buffer.concat(kept), width: frame.width, height: frame.height };
}

// ---- GIF -------------------------------------------------------------------------------------

/** The application extensions kept: the animation loop count. Comments, plain text and other application data go. */
const GIF_KEPT_APPS = new Set(['NETSCAPE2.0', 'ANIMEXTS1.0']);

function gif(bytes: Buffer): { bytes: Buffer; width: number; height: number } {
  if (bytes.length < 13) throw invalid('GIF', 'no logical screen descriptor');
  const width = bytes.readUInt16LE(6);
  const height = bytes.readUInt16LE(8);
  bound('GIF', width, height);
  let at = 13;
  const packed = bytes[10];
  if (packed & 0x80) at += 3 * (1 << ((packed & 7) + 1));
  if (at > bytes.length) throw invalid('GIF', 'the global colour table runs past the end');
  const kept: Buffer[] = [bytes.subarray(0, at)];
  /** The end of a run of data sub-blocks starting at `from` (after its terminator). */
  const subBlocks = (from: number) => {
    let p = from;
    for (;;) {
      if (p >= bytes.length) throw invalid('GIF', 'data sub-blocks run past the end');
      const size = bytes[p];
      p += 1 + size;
      if (size === 0) return p;
    }
  };
  let frames = 0;
  for (;;) {
    if (at >= bytes.length) throw invalid('GIF', 'no trailer');
    const introducer = bytes[at];
    if (introducer === 0x3b) {
      if (at + 1 !== bytes.length) throw invalid('GIF', 'bytes after the trailer');
      kept.push(bytes.subarray(at, at + 1));
      break;
    }
    if (introducer === 0x2c) {
      if (at + 10 > bytes.length) throw invalid('GIF', 'a truncated image descriptor');
      bound('GIF', bytes.readUInt16LE(at + 5), bytes.readUInt16LE(at + 7), 'a frame');
      const local = bytes[at + 9];
      let p = at + 10 + (local & 0x80 ? 3 * (1 << ((local & 7) + 1)) : 0);
      if (p >= bytes.length || bytes[p] < 2 || bytes[p] > 8) throw invalid('GIF', 'a frame without a valid LZW code size');
      p = subBlocks(p + 1);
      kept.push(bytes.subarray(at, p));
      at = p;
      frames++;
    } else if (introducer === 0x21) {
      if (at + 2 > bytes.length) throw invalid('GIF', 'a truncated extension');
      const label = bytes[at + 1];
      const end = subBlocks(at + 2);
      const keep = label === 0xf9 || (label === 0xff && bytes[at + 2] === 11 && GIF_KEPT_APPS.has(bytes.toString('latin1', at + 3, at + 14)));
      if (keep) kept.push(bytes.subarray(at, end));
      at = end;
    } else {
      throw invalid('GIF', `unknown block 0x${introducer.toString(16)}`);
    }
  }
  if (frames === 0) throw invalid('GIF', 'no image');
  return { bytes: Buffer.concat(kept), width, height };
}

// ---- WebP ------------------------------------------------------------------------------------

/** The VP8X flag bits of the chunks every copy leaves out (ICC profile 0x20, EXIF 0x08, XMP 0x04): any chunk but the image's own goes. */
const WEBP_DROPPED_FLAGS = 0x20 | 0x08 | 0x04;
const WEBP_KNOWN = new Set(['VP8 ', 'VP8L', 'VP8X', 'ALPH', 'ANIM', 'ANMF']);

function webp(bytes: Buffer): { bytes: Buffer; width: number; height: number } {
  if (bytes.length < 20 || bytes.readUInt32LE(4) + 8 !== bytes.length) throw invalid('WebP', 'the RIFF size is not the file size');
  const chunks: Buffer[] = [];
  let at = 12;
  let image = false;
  while (at < bytes.length) {
    if (at + 8 > bytes.length) throw invalid('WebP', 'a truncated chunk');
    const fourcc = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    const end = at + 8 + size + (size & 1);
    if (end > bytes.length) throw invalid('WebP', `the ${fourcc} chunk runs past the end`);
    if (chunks.length === 0 && !['VP8 ', 'VP8L', 'VP8X'].includes(fourcc)) throw invalid('WebP', 'the first chunk is not VP8, VP8L or VP8X');
    if (WEBP_KNOWN.has(fourcc)) {
      if (fourcc === 'VP8 ' || fourcc === 'VP8L' || fourcc === 'ANMF') image = true;
      chunks.push(Buffer.from(bytes.subarray(at, end)));
    }
    at = end;
  }
  if (!image) throw invalid('WebP', 'no image data');
  if (chunks[0].toString('latin1', 0, 4) === 'VP8X') {
    const header = chunks[0];
    header[8] &= ~WEBP_DROPPED_FLAGS;
    const width = 1 + header.readUIntLE(12, 3);
    const height = 1 + header.readUIntLE(15, 3);
    bound('WebP', width, height);
  }
  const body = Buffer.concat(chunks);
  const head = Buffer.alloc(12);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(body.length + 4, 4);
  head.write('WEBP', 8, 'latin1');
  return { bytes: Buffer.concat([head, body]), width: 0, height: 0 };
}

const WALKS = { 'image/png': png, 'image/jpeg': jpeg, 'image/gif': gif, 'image/webp': webp } as const;

/**
 * An upload's bytes checked as an image and stripped of metadata: the type by its first bytes
 * (415 `unsupported_image_type` otherwise), then the whole file walked as that type (422
 * `invalid_image`: a truncated file, a bad CRC, bytes after the end, an unknown critical part, so
 * no polyglot survives), its dimensions bounded (422 `image_dimensions_too_large`), and a copy
 * made of the parts a viewer needs to show it: text, comments, EXIF, XMP, ICC profiles and
 * application data are left out. The dimensions are read again from the copy by `image-size`.
 */
export function checkImage(input: Uint8Array): CheckedImage {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const type = sniffImageType(bytes);
  if (!type) throw new DomainError(415, 'unsupported_image_type', 'Only PNG, JPEG, GIF and WebP images are accepted (checked by content)');
  const walked = WALKS[type as keyof typeof WALKS](bytes);
  let size: { width?: number; height?: number };
  try {
    size = imageSize(walked.bytes);
  } catch {
    throw invalid(type.slice(6).toUpperCase(), 'its dimensions cannot be read');
  }
  const width = size.width ?? 0;
  const height = size.height ?? 0;
  bound(type.slice(6).toUpperCase(), width, height);
  if (walked.width !== 0 && (walked.width !== width || walked.height !== height))
    throw invalid(type.slice(6).toUpperCase(), 'its headers disagree on its size');
  return { content_type: type, width, height, bytes: walked.bytes };
}
