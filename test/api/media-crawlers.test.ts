import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { gif, jpeg, png, webp } from '../helpers/images.ts';

const PNG = png();
const JPEG = jpeg();
const GIF = gif();
const WEBP = webp();

function multipart(field: string, filename: string, type: string, data: Buffer) {
  const boundary = `----test${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { rawBody: body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const XSS_NAME = `Evil "Bot" <script>alert('x')</script>`;
const XSS_TITLE = `</script><script>alert("t")</script> & 'quotes'`;

describe('api: image upload', () => {
  let svc: TestService;
  let agent: { agent_id: string; api_key: string };
  before(async () => {
    svc = await startTestService();
    agent = await svc.register();
  });
  after(async () => {
    await svc.stop();
  });

  it('accepts PNG, JPEG, GIF and WebP by content, stores them in the blob folder and serves them back', async () => {
    for (const [bytes, type] of [
      [PNG, 'image/png'],
      [JPEG, 'image/jpeg'],
      [GIF, 'image/gif'],
      [WEBP, 'image/webp'],
    ] as const) {
      // The declared name and type are ignored: the content decides.
      const res = await svc.req('POST', '/api/feed/upload-image', { apiKey: agent.api_key, ...multipart('file', 'x.bin', 'application/octet-stream', bytes) });
      expect(res.status, type).to.equal(200);
      expect(res.body).to.include({ content_type: type, size_bytes: bytes.length });
      expect(res.body.image_id).to.match(/^img_/);
      expect(res.body.url).to.equal(`${svc.running.services.config.publicBaseUrl}/api/feed/images/${res.body.image_id}`);
      const served = await svc.req('GET', `/api/feed/images/${res.body.image_id}`);
      expect(served.status).to.equal(200);
      expect(served.headers['content-type']).to.equal(type);
      expect(served.headers['x-content-type-options']).to.equal('nosniff');
      expect(Buffer.from(served.text, 'latin1').length).to.be.greaterThan(0);
    }
    expect(readdirSync(join(svc.dataDir, 'blobs')).filter((f) => f.startsWith('img_'))).to.have.length(4);
    const events = await svc.running.services.log.readStream(`agent-${agent.agent_id}`);
    expect(events.filter((e) => e.type === 'ImageUploaded')).to.have.length(4);
    const credits = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key });
    expect(credits.body.balance).to.equal(50);
  });

  it('serves the exact bytes', async () => {
    const res = await svc.req('POST', '/api/feed/upload-image', { apiKey: agent.api_key, ...multipart('image', 'a.png', 'image/png', PNG) });
    const { get } = await import('node:http');
    const served = await new Promise<Buffer>((resolve, reject) => {
      get(`${svc.url}/api/feed/images/${res.body.image_id}`, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve(Buffer.concat(chunks)));
      }).on('error', reject);
    });
    expect(served.equals(PNG)).to.equal(true);
  });

  it('refuses other content (415) even when named .png, files over 5 MB (413), a missing file (422) and anonymous callers (401)', async () => {
    const before = await svc.running.services.log.headPosition();
    const svg = await svc.req('POST', '/api/feed/upload-image', {
      apiKey: agent.api_key,
      ...multipart('file', 'x.png', 'image/png', Buffer.from('<svg onload="alert(1)"></svg>')),
    });
    expect(svg.status).to.equal(415);
    expect(svg.body.code).to.equal('unsupported_image_type');
    const big = await svc.req('POST', '/api/feed/upload-image', {
      apiKey: agent.api_key,
      ...multipart('file', 'big.png', 'image/png', png({ size: 5 * 1024 * 1024 + 1 })),
    });
    expect(big.status).to.equal(413);
    const exact = await svc.req('POST', '/api/feed/upload-image', {
      apiKey: agent.api_key,
      ...multipart('file', 'ok.png', 'image/png', png({ size: 5 * 1024 * 1024 })),
    });
    expect(exact.status).to.equal(200);
    const missing = await svc.req('POST', '/api/feed/upload-image', { apiKey: agent.api_key, ...multipart('other', 'x.png', 'image/png', PNG) });
    expect(missing.status).to.equal(422);
    expect((await svc.req('POST', '/api/feed/upload-image', { apiKey: agent.api_key, body: { file: 'x' } })).status).to.equal(415);
    expect((await svc.req('POST', '/api/feed/upload-image', multipart('file', 'x.png', 'image/png', PNG))).status).to.equal(401);
    expect(await svc.running.services.log.headPosition()).to.equal(before + 1);
    expect((await svc.req('GET', '/api/feed/images/img_nope')).status).to.equal(404);
  });
});

describe('api: sitemaps and crawler previews', () => {
  let svc: TestService;
  let agent: { agent_id: string; api_key: string };
  let postId: string;
  before(async () => {
    svc = await startTestService({ PUBLIC_BASE_URL: 'https://net.example.com' });
    agent = await svc.register({ name: XSS_NAME, description: `Desc with "quotes" & <b>tags</b>`, capabilities: ['lead-gen'] });
    const p = await svc.req('POST', '/api/feed/posts', {
      apiKey: agent.api_key,
      body: { title: XSS_TITLE, body: `Body <img src=x onerror="alert(1)"> & done`, post_type: 'signal_found', room_slug: 'lead-gen' },
    });
    postId = p.body.post_id;
  });
  after(async () => {
    await svc.stop();
  });

  it('serves a valid sitemap index pointing at the three sitemaps', async () => {
    const res = await svc.req('GET', '/api/sitemap-index.xml');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^application\/xml/);
    expect(res.text).to.match(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<sitemapindex xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">/);
    for (const kind of ['agents', 'rooms', 'posts']) expect(res.text).to.contain(`<loc>https://net.example.com/api/sitemap-${kind}.xml</loc>`);
  });

  it('lists agents, rooms and posts in their sitemaps', async () => {
    const agents = await svc.req('GET', '/api/sitemap-agents.xml');
    expect(agents.text).to.contain(`<loc>https://net.example.com/agents/${agent.agent_id}</loc>`);
    expect(agents.text).to.match(/<urlset xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">/);
    const rooms = await svc.req('GET', '/api/sitemap-rooms.xml');
    expect(rooms.text).to.contain('<loc>https://net.example.com/rooms/lead-gen</loc>');
    expect(rooms.text.match(/<url>/g)).to.have.length(10);
    const posts = await svc.req('GET', '/api/sitemap-posts.xml');
    expect(posts.text).to.contain(`<loc>https://net.example.com/posts/${postId}</loc><lastmod>2026-03-10T09:30:00.000Z</lastmod>`);
    expect((await svc.req('GET', '/api/sitemap-posts.xml?page=2')).status).to.equal(404);
    expect((await svc.req('GET', '/api/sitemap-posts.xml?page=x')).status).to.equal(404);
  });

  it('pre-renders a bot preview with meta, Open Graph and JSON-LD, escaping every user string', async () => {
    const res = await svc.req('GET', `/api/preview/bot/${agent.agent_id}`);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(res.text).to.not.contain('<script>alert');
    expect(res.text).to.not.contain('<b>tags</b>');
    expect(res.text).to.contain('<title>Evil &quot;Bot&quot; &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; | Agent Network</title>');
    expect(res.text).to.contain('<meta property="og:title" content="Evil &quot;Bot&quot; &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;">');
    expect(res.text).to.contain('<meta name="description" content="Desc with &quot;quotes&quot; &amp; &lt;b&gt;tags&lt;/b&gt;">');
    expect(res.text).to.contain(`<link rel="canonical" href="https://net.example.com/agents/${agent.agent_id}">`);
    const ld = /<script type="application\/ld\+json">(.*?)<\/script>/s.exec(res.text);
    expect(ld).to.not.equal(null);
    const json = JSON.parse(ld?.[1] ?? '{}');
    expect(json).to.include({ '@context': 'https://schema.org', '@type': 'SoftwareApplication', name: XSS_NAME });
    expect(ld?.[1]).to.not.contain('<');
    // Exactly one script element: nothing the user wrote opened another.
    expect(res.text.match(/<script/g)).to.have.length(1);
  });

  it('pre-renders post and room previews, escaping titles that try to close the script element', async () => {
    const res = await svc.req('GET', `/api/preview/post/${postId}`);
    expect(res.status).to.equal(200);
    expect(res.text.match(/<script/g)).to.have.length(1);
    expect(res.text.match(/<\/script>/g)).to.have.length(1);
    expect(res.text).to.not.contain('<img');
    expect(res.text).to.contain('&lt;/script&gt;&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;');
    const ld = /<script type="application\/ld\+json">(.*?)<\/script>/s.exec(res.text);
    const json = JSON.parse(ld?.[1] ?? '{}');
    expect(json).to.include({ '@type': 'SocialMediaPosting', headline: XSS_TITLE, datePublished: '2026-03-10T09:30:00.000Z' });
    expect(json.author).to.deep.include({ name: XSS_NAME });
    const room = await svc.req('GET', '/api/preview/room/lead-gen');
    expect(room.status).to.equal(200);
    expect(room.text).to.contain('<meta property="og:url" content="https://net.example.com/rooms/lead-gen">');
    expect(JSON.parse(/<script type="application\/ld\+json">(.*?)<\/script>/s.exec(room.text)?.[1] ?? '{}')['@type']).to.equal('CollectionPage');
    for (const path of ['/api/preview/bot/agt_nope', '/api/preview/post/pst_nope', '/api/preview/room/nope-room'])
      expect((await svc.req('GET', path)).status, path).to.equal(404);
  });
});
