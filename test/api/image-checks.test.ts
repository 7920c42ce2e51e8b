import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_MAX_PIXELS, IMAGE_MAX_SIDE } from '../../commands/feed/image-bytes.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { gif, gifExtension, jpeg, jpegSegment, png, PNG_SIGNATURE, pngChunk, pngHeader, webp } from '../helpers/images.ts';

function multipart(data: Buffer) {
  const boundary = `----test${Math.random().toString(16).slice(2)}`;
  const rawBody = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { rawBody, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const SCRIPT = '<html><body><script>alert(document.cookie)</script></body></html>';
/** Text that must never reach the stored bytes. */
const LEAKS = /script|alert|html|secret|comment|XMP/i;

/** The refused corpus: each upload, the status and the code it gets. */
const REFUSED: Array<[string, Buffer, number, string]> = [
  ['an 8-byte PNG signature alone', PNG_SIGNATURE, 422, 'invalid_image'],
  [
    'a PNG declaring 100000 x 100000 pixels',
    Buffer.concat([PNG_SIGNATURE, pngHeader(100000, 100000), pngChunk('IDAT', Buffer.from([0x78, 0x9c])), pngChunk('IEND')]),
    422,
    'image_dimensions_too_large',
  ],
  [`a PNG one pixel wider than ${IMAGE_MAX_SIDE}`, png({ width: IMAGE_MAX_SIDE + 1, height: 1 }), 422, 'image_dimensions_too_large'],
  [
    `a PNG over ${IMAGE_MAX_PIXELS / 1e6} megapixels within the side bound`,
    Buffer.concat([PNG_SIGNATURE, pngHeader(8000, 6000), pngChunk('IDAT', Buffer.from([1])), pngChunk('IEND')]),
    422,
    'image_dimensions_too_large',
  ],
  ['a PNG with HTML after IEND', Buffer.concat([png(), Buffer.from(SCRIPT)]), 422, 'invalid_image'],
  [
    'a PNG whose chunk CRC is wrong',
    (() => {
      const b = png();
      b[b.length - 20] ^= 0xff;
      return b;
    })(),
    422,
    'invalid_image',
  ],
  ['a PNG without IEND', png().subarray(0, png().length - 12), 422, 'invalid_image'],
  ['a PNG with an unknown critical chunk', png({ extra: [pngChunk('ZZZZ', 'x')] }), 422, 'invalid_image'],
  ['a PNG whose first chunk is not IHDR', Buffer.concat([PNG_SIGNATURE, pngChunk('tEXt', 'a\0b'), png().subarray(8)]), 422, 'invalid_image'],
  [
    'a GIF/JS polyglot (GIF89a/*...*/=1;alert(1))',
    gif({ header: Buffer.from('GIF89a/*\x01\x00', 'latin1'), after: Buffer.from('*/=1;alert(1);') }),
    422,
    'image_dimensions_too_large',
  ],
  ['a GIF with script after its trailer', gif({ after: Buffer.from(';alert(1)') }), 422, 'invalid_image'],
  ['a GIF cut short', gif().subarray(0, 30), 422, 'invalid_image'],
  ['a JPEG with HTML after EOI', jpeg({ after: Buffer.from(SCRIPT) }), 422, 'invalid_image'],
  ['a JPEG of three bytes', Buffer.from([0xff, 0xd8, 0xff]), 422, 'invalid_image'],
  ['a JPEG declaring 60000 x 60000', jpeg({ width: 60000, height: 60000 }), 422, 'image_dimensions_too_large'],
  ['a WebP whose RIFF size is not its length', Buffer.concat([webp(), Buffer.from(SCRIPT)]), 422, 'invalid_image'],
  ['a WebP header alone', Buffer.from('RIFF\x04\x00\x00\x00WEBP', 'latin1'), 422, 'invalid_image'],
  ['an SVG', Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), 415, 'unsupported_image_type'],
];

/** The accepted corpus: each upload, its type and size, and what must be gone from the stored copy. */
const ACCEPTED: Array<[string, Buffer, string, [number, number]]> = [
  ['a PNG', png({ width: 3, height: 2 }), 'image/png', [3, 2]],
  [
    'a PNG with an HTML tEXt chunk, an iTXt chunk and EXIF',
    png({ extra: [pngChunk('tEXt', `Comment\0${SCRIPT}`), pngChunk('iTXt', 'XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta/>'), pngChunk('eXIf', 'secret')] }),
    'image/png',
    [2, 2],
  ],
  [`a PNG of ${IMAGE_MAX_SIDE} x 1`, png({ width: IMAGE_MAX_SIDE, height: 1 }), 'image/png', [IMAGE_MAX_SIDE, 1]],
  [
    'a GIF with a script comment, plain text and XMP application data',
    gif({
      extensions: [
        gifExtension(0xfe, SCRIPT),
        gifExtension(0x01, `\x0c${'x'.repeat(11)}secret`),
        gifExtension(0xff, 'secret XMP', 'XMP DataXMP'),
        gifExtension(0xff, '\x01\x00\x00', 'NETSCAPE2.0'),
      ],
    }),
    'image/gif',
    [1, 1],
  ],
  [
    'a JPEG with EXIF, XMP, ICC and a comment',
    jpeg({
      width: 16,
      height: 9,
      extra: [
        jpegSegment(0xe1, 'Exif\0\0secret GPS'),
        jpegSegment(0xe1, 'http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>'),
        jpegSegment(0xe2, 'ICC_PROFILE\0secret'),
        jpegSegment(0xfe, SCRIPT),
      ],
    }),
    'image/jpeg',
    [16, 9],
  ],
  ['a WebP with EXIF', webp({ width: 5, height: 7, exif: `secret ${SCRIPT}` }), 'image/webp', [5, 7]],
];

describe('api: uploaded images are checked whole, bounded and stripped', () => {
  let svc: TestService;
  let apiKey: string;
  before(async () => {
    svc = await startTestService();
    apiKey = (await svc.register()).api_key;
  });
  after(() => svc.stop());
  const blobs = () => {
    const dir = join(svc.dataDir, 'blobs');
    return existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('img_')) : [];
  };

  for (const [what, bytes, status, code] of REFUSED) {
    it(`refuses ${what} (${status} ${code}) and keeps no bytes`, async () => {
      const before = blobs().length;
      const r = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(bytes) });
      expect(r.status, r.text).to.equal(status);
      expect(r.body.code).to.equal(code);
      expect(blobs().length).to.equal(before);
    });
  }

  for (const [what, bytes, type, [width, height]] of ACCEPTED) {
    it(`stores ${what} without its metadata, the stored copy's size and hash recorded`, async () => {
      const r = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(bytes) });
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ content_type: type, width, height });
      const served = await fetch(new URL(`/api/feed/images/${r.body.image_id}`, svc.url));
      expect(served.status).to.equal(200);
      const stored = Buffer.from(await served.arrayBuffer());
      expect(stored.toString('latin1')).to.not.match(LEAKS);
      expect(stored.length).to.equal(r.body.size_bytes);
      expect(served.headers.get('etag')).to.equal(`"${createHash('sha256').update(stored).digest('hex')}"`);
      // The stored copy is itself a well-formed image of the same type and size.
      const again = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(stored) });
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.include({ content_type: type, width, height, size_bytes: stored.length });
    });
  }

  it('refuses a GIF frame larger than the bound inside a small screen', async () => {
    const frame = gif({ width: 1, height: 1 });
    // The image descriptor's width (offset 13 + 6 colours + 8 control + 5) set to 20000.
    frame.writeUInt16LE(20000, 13 + 6 + 8 + 5);
    const r = await svc.req('POST', '/api/feed/upload-image', { apiKey, ...multipart(frame) });
    expect(r.status, r.text).to.equal(422);
    expect(r.body.code).to.equal('image_dimensions_too_large');
  });
});
