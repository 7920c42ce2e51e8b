import { expect } from 'chai';
import { bearer, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { ConsoleClient } from '../helpers/console.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { expectOwnScripts } from '../helpers/pages.ts';
import { A_DAY_AND_A_BIT, claimedAgents } from '../helpers/moderation.ts';

const BASE = 'https://net.example.com';
const ROOT_PASSWORD = 'site pages root password';
const XSS_TITLE = `</script><script>alert("t")</script> & 'quotes'`;
const XSS_BODY = `Body <img src=x onerror="alert(1)"> & done`;
const XSS_NAME = `Evil "Bot" <script>alert('x')</script>`;
const XSS_COMMENT = `<script>alert('c')</script> nice`;
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

/** The JSON-LD object of a page (parsed: it must parse). */
function jsonLdOf(res: TestResponse): Record<string, unknown> {
  const m = /<script type="application\/ld\+json">(.*?)<\/script>/s.exec(res.text);
  expect(m, 'the page has JSON-LD').to.not.equal(null);
  expect(m?.[1]).to.not.contain('<');
  return JSON.parse(m?.[1] ?? '{}') as Record<string, unknown>;
}

const hrefs = (res: TestResponse) => [...res.text.matchAll(/\bhref="([^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));

describe('site: room and post pages (issue 18)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let author: { agent_id: string; api_key: string };
  let commenter: { agent_id: string; api_key: string };
  let postId: string;
  let pinnedId: string;
  let commentId: string;

  const publish = async (apiKey: string, title: string, body = `About ${title}`, room_slug: string | null = 'lead-gen') => {
    const res = await svc.req('POST', '/api/feed/posts', { apiKey, body: { title, body, post_type: 'signal_found', room_slug } });
    expect(res.status, res.text).to.equal(200);
    return res.body.post_id as string;
  };

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ PUBLIC_BASE_URL: BASE, ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL, ROOT_PASSWORD);
    author = await svc.register({ name: XSS_NAME, capabilities: ['lead-gen'] });
    commenter = await svc.register({ name: 'Commenter', capabilities: ['lead-gen'] });
    pinnedId = await publish(author.api_key, 'Read this first');
    postId = await publish(author.api_key, XSS_TITLE, XSS_BODY);
    const pin = await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${pinnedId}`, { headers: bearer(root.access_token) });
    expect(pin.status, pin.text).to.equal(200);
    const c = await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: commenter.api_key, body: { content: XSS_COMMENT } });
    expect(c.status, c.text).to.equal(200);
    commentId = c.body.comment_id as string;
    const r = await svc.req('POST', `/api/feed/posts/${postId}/comments/${commentId}/reply`, { apiKey: author.api_key, body: { content: 'A reply' } });
    expect(r.status, r.text).to.equal(200);
    expect((await svc.req('POST', `/api/feed/posts/${postId}/react`, { apiKey: commenter.api_key, body: { reaction: 'insightful' } })).status).to.equal(200);
  });
  after(() => stopWithOutbox(svc, outbox));

  it('renders a room page: name, counts, the pinned post first, the latest posts linking to their pages and authors', async () => {
    const res = await svc.req('GET', '/rooms/lead-gen');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(res.headers['cache-control']).to.equal('public, max-age=300');
    expect(res.text).to.contain('<h1>Lead Gen room</h1>');
    expect(res.text).to.contain('<link rel="canonical" href="https://net.example.com/rooms/lead-gen">');
    expect(res.text).to.contain('<span class="post-count">2</span> posts');
    const order = [...res.text.matchAll(/<article data-post="([^"]+)"/g)].map((m) => m[1]);
    expect(order).to.deep.equal([pinnedId, postId]);
    expect(res.text).to.match(/<li class="pinned"><article data-post="[^"]+"><p class="pin">Pinned<\/p>/);
    const links = hrefs(res);
    expect(links).to.include.members([`/posts/${postId}`, `/posts/${pinnedId}`, `/agents/${author.agent_id}`]);
    const ld = jsonLdOf(res);
    expect(ld).to.include({ '@context': 'https://schema.org', '@type': 'CollectionPage', name: 'Lead Gen', url: `${BASE}/rooms/lead-gen` });
    const items = (ld.mainEntity as { itemListElement: Array<{ item: { headline: string; url: string } }> }).itemListElement;
    expect(items.map((i) => i.item.url)).to.deep.equal([`${BASE}/posts/${pinnedId}`, `${BASE}/posts/${postId}`]);
    expect(items[1].item.headline).to.equal(XSS_TITLE);
  });

  it('escapes hostile post titles, bodies, comments and agent names on both pages (one script element, the JSON-LD parses)', async () => {
    for (const path of ['/rooms/lead-gen', `/posts/${postId}`]) {
      const res = await svc.req('GET', path);
      expect(res.status, path).to.equal(200);
      expect(expectOwnScripts(res.text, 1, path), path).to.deep.equal(['app.js', 'pageview.js']);
      expect(res.text, path).to.not.contain('<img');
      expect(res.text, path).to.contain('&lt;/script&gt;&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;');
      expect(res.text, path).to.contain('Evil &quot;Bot&quot; &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
      jsonLdOf(res);
    }
    const post = await svc.req('GET', `/posts/${postId}`);
    expect(post.text).to.contain('<p class="comment-body">&lt;script&gt;alert(&#39;c&#39;)&lt;/script&gt; nice</p>');
    expect(post.text).to.contain('Body &lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; done');
  });

  it('renders a post page: author and room linked, reactions and counts, comments with their replies, DiscussionForumPosting JSON-LD', async () => {
    const res = await svc.req('GET', `/posts/${postId}`);
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('public, max-age=300');
    expect(res.text).to.contain(`<link rel="canonical" href="${BASE}/posts/${postId}">`);
    expect(res.text).to.contain('<meta property="og:type" content="article">');
    expect(res.text).to.contain(`<a class="author" href="/agents/${author.agent_id}">`);
    expect(res.text).to.contain('<a class="room" href="/rooms/lead-gen">Lead Gen</a>');
    expect(res.text).to.contain('<span class="reaction" data-reaction="insightful">1</span> insightful');
    expect(res.text).to.contain('<span class="comment-count">2</span> comments');
    expect(res.text).to.match(
      new RegExp(`<li class="comment" id="comment-${commentId}">.*<ol class="replies"><li class="reply" id="comment-[^"]+">.*A reply`, 's'),
    );
    expect(res.text).to.contain(`<a class="comment-author" href="/agents/${commenter.agent_id}">Commenter</a>`);
    const ld = jsonLdOf(res);
    expect(ld).to.include({ '@type': 'DiscussionForumPosting', headline: XSS_TITLE, text: XSS_BODY, url: `${BASE}/posts/${postId}` });
    expect(ld.author).to.deep.equal({ '@type': 'Organization', name: XSS_NAME, url: `${BASE}/agents/${author.agent_id}` });
    expect(ld.isPartOf).to.deep.include({ url: `${BASE}/rooms/lead-gen` });
    const comments = ld.comment as Array<{ text: string; comment: Array<{ text: string }> }>;
    expect(comments.map((c) => c.text)).to.deep.equal([XSS_COMMENT]);
    expect(comments[0].comment.map((c) => c.text)).to.deep.equal(['A reply']);
    // A post outside any room links to no room.
    const loose = await publish(commenter.api_key, 'No room', 'Loose', null);
    const page = await svc.req('GET', `/posts/${loose}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.not.contain('class="room"');
    expect(jsonLdOf(page)).to.not.have.property('isPartOf');
  });

  it('pages a room like the API: older posts by page, newer ones after a cursor; a cursor not handed out is 400', async () => {
    const writers = await Promise.all([1, 2, 3].map(() => svc.register({ capabilities: ['b2b-sales'] })));
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) ids.push(await publish(writers[i % 3].api_key, `Paged ${i}`, `Paged body ${i}`, 'b2b-sales'));
    const shown = (res: TestResponse) => [...res.text.matchAll(/<article data-post="([^"]+)"/g)].map((m) => m[1]);
    const first = await svc.req('GET', '/rooms/b2b-sales');
    expect(shown(first)).to.deep.equal(ids.slice(4).reverse());
    expect(hrefs(first)).to.include('/rooms/b2b-sales?page=1');
    expect(first.text).to.not.contain('class="newer"');
    const second = await svc.req('GET', '/rooms/b2b-sales?page=1');
    expect(shown(second)).to.deep.equal(ids.slice(0, 4).reverse());
    expect(second.text).to.not.contain('class="older"');
    const newer = /class="newer" href="([^"]+)"/.exec(second.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    expect(newer).to.match(/^\/rooms\/b2b-sales\?after=/);
    // The poll cursor the API hands out for the same page.
    const api = await svc.req('GET', '/api/feed/topics/b2b-sales/posts?page=1');
    expect(newer).to.equal(`/rooms/b2b-sales?after=${encodeURIComponent(api.body.poll_cursor as string)}`);
    const after = await svc.req('GET', newer);
    expect(after.status).to.equal(200);
    expect(shown(after)).to.deep.equal(ids.slice(4));
    const bad = await svc.req('GET', '/rooms/b2b-sales?after=nonsense!');
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('invalid_cursor');
    const badPage = await svc.req('GET', '/rooms/b2b-sales?page=x');
    expect(badPage.status).to.equal(422);
    expect(badPage.body.code).to.equal('validation_failed');
  });

  it('answers 404 for an unknown room or post: the JSON envelope to API clients, a not-found page to browsers', async () => {
    for (const [path, code] of [
      ['/rooms/no-such-room', 'room_not_found'],
      ['/posts/pst_nope', 'post_not_found'],
    ]) {
      const json = await svc.req('GET', path);
      expect(json.status, path).to.equal(404);
      expect(json.body).to.include({ code });
      expect(json.body.request_id).to.be.a('string');
      const page = await svc.req('GET', path, { headers: BROWSER });
      expect(page.status, path).to.equal(404);
      expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(page.headers['cache-control']).to.equal('no-store');
      expect(page.text).to.contain('<h1>Not found</h1>');
      expect(page.text).to.contain(`<code class="code">${code}</code>`);
      expect(page.text).to.contain('<meta name="robots" content="noindex">');
    }
    const page = await svc.req('GET', `/rooms/%3Cscript%3Ex`, { headers: BROWSER });
    expect(page.status).to.equal(404);
    expect(page.text).to.not.contain('<script');
  });

  it('answers 404 for a post ghosted by flags and for a hidden room (its posts stay, without a room link)', async () => {
    const victim = await svc.register({ capabilities: ['intro-drafting'] });
    const ghosted = await publish(victim.api_key, 'Flag me', 'Flagged body', 'intro-drafting');
    const kept = await publish(victim.api_key, 'Keep me', 'Kept body', 'intro-drafting');
    expect((await svc.req('GET', `/posts/${ghosted}`)).status).to.equal(200);
    // Flags count from claimed agents registered a day earlier (docs/MODERATION.md).
    const flaggers = await claimedAgents(svc, 5, outbox);
    svc.clock.advance(A_DAY_AND_A_BIT);
    for (const flagger of flaggers) {
      const f = await svc.req('POST', `/api/feed/posts/${ghosted}/flag`, { apiKey: flagger.api_key, body: { reason: 'spam' } });
      expect(f.status, f.text).to.equal(200);
    }
    const gone = await svc.req('GET', `/posts/${ghosted}`);
    expect(gone.status).to.equal(404);
    expect(gone.body.code).to.equal('post_not_found');
    const room = await svc.req('GET', '/rooms/intro-drafting');
    expect(room.status).to.equal(200);
    expect(room.text).to.not.contain(ghosted);
    expect(room.text).to.contain(kept);

    // Curated rooms always exist; a custom room can be hidden.
    for (let i = 0; i < 3; i++) await svc.register({ capabilities: ['site-hidden-room'] });
    const inCustom = await publish(victim.api_key, 'Custom room post', 'Custom body', 'site-hidden-room');
    const console = new ConsoleClient(svc);
    expect((await console.signIn(ROOT_EMAIL, ROOT_PASSWORD)).status).to.equal(303);
    const rooms = await console.get('/admin/rooms');
    expect((await console.post('/admin/rooms/site-hidden-room/hide', {}, ConsoleClient.csrfIn(rooms))).status).to.equal(303);
    const hidden = await svc.req('GET', '/rooms/site-hidden-room');
    expect(hidden.status).to.equal(404);
    expect(hidden.body.code).to.equal('room_not_found');
    const post = await svc.req('GET', `/posts/${inCustom}`);
    expect(post.status).to.equal(200);
    expect(post.text).to.not.contain('/rooms/site-hidden-room');
    const sitemap = await svc.req('GET', '/api/sitemap-rooms.xml');
    expect(sitemap.text).to.not.contain('/rooms/site-hidden-room<');
  });

  it('hands out the page URLs (sitemaps, API views, profile_url, preview canonicals) and every one answers 200', async () => {
    const urls = new Set<string>();
    const add = (u: unknown) => {
      expect(u).to.be.a('string');
      urls.add(String(u));
    };
    const agents = await svc.req('GET', '/api/sitemap-agents.xml');
    expect(agents.text).to.contain(`<loc>${BASE}/agents/${author.agent_id}</loc>`);
    const rooms = await svc.req('GET', '/api/sitemap-rooms.xml');
    expect(rooms.text).to.contain(`<loc>${BASE}/rooms/lead-gen</loc>`);
    const posts = await svc.req('GET', '/api/sitemap-posts.xml');
    expect(posts.text).to.contain(`<loc>${BASE}/posts/${postId}</loc>`);
    for (const xml of [agents, rooms, posts]) {
      expect(xml.text).to.not.contain('/api/preview/');
      for (const m of xml.text.matchAll(/<loc>([^<]+)<\/loc>/g)) add(m[1]);
    }
    const feed = await svc.req('GET', '/api/feed/posts?limit=5');
    expect(feed.body.items[0].url).to.match(new RegExp(`^${BASE}/posts/pst_`));
    feed.body.items.forEach((p: { url: string }) => add(p.url));
    const detail = await svc.req('GET', `/api/agent/posts/${postId}`);
    expect(detail.body.url).to.equal(`${BASE}/posts/${postId}`);
    const topics = await svc.req('GET', '/api/feed/topics');
    expect(topics.body.items.find((r: { slug: string }) => r.slug === 'lead-gen').url).to.equal(`${BASE}/rooms/lead-gen`);
    topics.body.items.forEach((r: { url: string }) => add(r.url));
    const room = await svc.req('GET', '/api/feed/topics/lead-gen');
    expect(room.body.room.url).to.equal(`${BASE}/rooms/lead-gen`);
    expect(room.body.items[0].profile_url).to.match(new RegExp(`^${BASE}/agents/`));
    const pinned = await svc.req('GET', '/api/agent/rooms/lead-gen/pinned');
    expect(pinned.body.items[0].url).to.equal(`${BASE}/posts/${pinnedId}`);
    const created = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: 'Fresh', body: 'Fresh body', post_type: 'signal_found' },
    });
    expect(created.body.url).to.equal(`${BASE}/posts/${created.body.post_id}`);
    add(created.body.url);
    const profile = await svc.req('GET', `/api/protocol/agents/${author.agent_id}`);
    expect(profile.body.profile_url).to.equal(`${BASE}/agents/${author.agent_id}`);
    for (const path of [`/api/preview/bot/${author.agent_id}`, '/api/preview/room/lead-gen', `/api/preview/post/${postId}`]) {
      const preview = await svc.req('GET', path);
      const canonical = /<link rel="canonical" href="([^"]+)">/.exec(preview.text)?.[1];
      expect(canonical, path).to.not.contain('/api/preview/');
      add(canonical);
    }
    expect(urls.size).to.be.greaterThan(20);
    const failed: string[] = [];
    for (const url of urls) {
      expect(url.startsWith(`${BASE}/`), url).to.equal(true);
      const res = await svc.req('GET', url.slice(BASE.length));
      if (res.status !== 200) failed.push(`${res.status} ${url}`);
    }
    expect(failed).to.deep.equal([]);
  });
});
