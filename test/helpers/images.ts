// Small images built byte by byte for the upload tests: well-formed PNG, GIF, JPEG and WebP files,
// and the parts (chunks, segments, extensions) to build broken or loaded ones from.
import { crc32, deflateSync } from 'node:zlib';

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const u16le = (n: number) => Buffer.from([n & 0xff, (n >> 8) & 0xff]);
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One PNG chunk: length, type, data and its CRC. */
export function pngChunk(type: string, data: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), Buffer.isBuffer(data) ? data : Buffer.from(data, 'latin1')]);
  return Buffer.concat([u32(body.length - 4), body, u32(crc32(body))]);
}

export function pngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  return pngChunk('IHDR', ihdr);
}

/**
 * A PNG of `width` x `height` grey pixels (the real pixel data, deflated), with `extra` chunks
 * after IHDR; `size`: padded to exactly that many bytes with a second IDAT chunk of filler.
 */
export function png(opts: { width?: number; height?: number; extra?: Buffer[]; size?: number } = {}): Buffer {
  const { width = 2, height = 2, extra = [] } = opts;
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x80)]);
  const idat = pngChunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: height }, () => row))));
  const head = Buffer.concat([PNG_SIGNATURE, pngHeader(width, height), ...extra, idat]);
  const end = pngChunk('IEND');
  if (opts.size === undefined) return Buffer.concat([head, end]);
  const filler = opts.size - head.length - end.length - 12;
  if (filler < 0) throw new Error(`a PNG of ${width} x ${height} takes more than ${opts.size} bytes`);
  return Buffer.concat([head, pngChunk('IDAT', Buffer.alloc(filler, 0x55)), end]);
}

/** A GIF89a of `width` x `height` (one frame, two colours), with `extensions` before the frame and `after` past the trailer. */
export function gif(opts: { width?: number; height?: number; extensions?: Buffer[]; header?: Buffer; after?: Buffer } = {}): Buffer {
  const { width = 1, height = 1, extensions = [] } = opts;
  const header = opts.header ?? Buffer.concat([Buffer.from('GIF89a', 'latin1'), u16le(width), u16le(height)]);
  const screen = Buffer.from([0x80, 0, 0]); // global colour table of 2, background 0, aspect 0
  const colours = Buffer.from([0xff, 0xff, 0xff, 0, 0, 0]);
  const control = Buffer.from([0x21, 0xf9, 4, 1, 0, 0, 0, 0]);
  const frame = Buffer.concat([Buffer.from([0x2c, 0, 0, 0, 0]), u16le(width), u16le(height), Buffer.from([0, 2, 2, 0x44, 0x01, 0])]);
  return Buffer.concat([header, screen, colours, ...extensions, control, frame, Buffer.from([0x3b]), opts.after ?? Buffer.alloc(0)]);
}

/** A GIF extension block (`label`) carrying `text` in sub-blocks: 0xfe a comment, 0xff application data. */
export function gifExtension(label: number, text: string, appId?: string): Buffer {
  const parts: Buffer[] = [Buffer.from([0x21, label])];
  if (appId !== undefined) parts.push(Buffer.from([11]), Buffer.from(appId, 'latin1'));
  const data = Buffer.from(text, 'latin1');
  for (let i = 0; i < data.length; i += 255) {
    const piece = data.subarray(i, i + 255);
    parts.push(Buffer.from([piece.length]), piece);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** A JPEG segment: marker and length-prefixed data. */
export function jpegSegment(marker: number, data: Buffer | string): Buffer {
  const body = Buffer.isBuffer(data) ? data : Buffer.from(data, 'latin1');
  const length = Buffer.alloc(2);
  length.writeUInt16BE(body.length + 2);
  return Buffer.concat([Buffer.from([0xff, marker]), length, body]);
}

/** A baseline JPEG's structure (JFIF, quantisation and Huffman tables, frame, one scan) of `width` x `height`, with `extra` segments after APP0 and `after` past EOI. */
export function jpeg(opts: { width?: number; height?: number; extra?: Buffer[]; after?: Buffer } = {}): Buffer {
  const { width = 8, height = 8, extra = [] } = opts;
  const sof = Buffer.alloc(9);
  sof[0] = 8;
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  sof[5] = 1; // one component
  sof[6] = 1;
  sof[7] = 0x11;
  sof[8] = 0;
  const dht = Buffer.concat([Buffer.from([0x00]), Buffer.from([1, ...Array(15).fill(0)]), Buffer.from([0])]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    jpegSegment(0xe0, Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0', 'latin1')),
    ...extra,
    jpegSegment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    jpegSegment(0xc0, sof),
    jpegSegment(0xc4, dht),
    jpegSegment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])),
    Buffer.from([0x00, 0xff, 0x00, 0x12, 0xff, 0xd0, 0x34]), // entropy-coded data with a stuffed 0xFF and a restart marker
    Buffer.from([0xff, 0xd9]),
    opts.after ?? Buffer.alloc(0),
  ]);
}

/** A RIFF chunk of a WebP file (padded to an even length). */
export function webpChunk(fourcc: string, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(fourcc, 'latin1'), u32le(data.length), data, data.length % 2 ? Buffer.from([0]) : Buffer.alloc(0)]);
}

/** A lossless WebP (VP8L) of `width` x `height`; `exif` adds a VP8X header and an EXIF chunk. */
export function webp(opts: { width?: number; height?: number; exif?: string } = {}): Buffer {
  const { width = 4, height = 4 } = opts;
  const bits = (width - 1) | ((height - 1) << 14);
  const vp8l = webpChunk('VP8L', Buffer.concat([Buffer.from([0x2f]), u32le(bits), Buffer.alloc(8, 0)]));
  const chunks = [vp8l];
  if (opts.exif !== undefined) {
    const x = Buffer.alloc(10);
    x[0] = 0x08; // EXIF present
    x.writeUIntLE(width - 1, 4, 3);
    x.writeUIntLE(height - 1, 7, 3);
    chunks.unshift(webpChunk('VP8X', x));
    chunks.push(webpChunk('EXIF', Buffer.from(opts.exif, 'latin1')));
  }
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), ...chunks]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length), body]);
}
