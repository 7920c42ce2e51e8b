import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { DomainError, notFound } from '../../../events/kernel/errors.ts';
import type { Reaction } from '../../../events/feed.ts';
import type { Doc, ReadModel } from '../../../projections/store/port.ts';
import { agentPageUrl, getPublicAgent } from '../../../queries/agents/agents.ts';
import { commentTree } from '../../../queries/feed/comments.ts';
import { findRoom, getVisiblePost, listPosts, pinnedPosts, postPageUrl } from '../../../queries/feed/posts.ts';
import { roomPageUrl } from '../../../queries/feed/rooms.ts';
import { ERROR_ENVELOPE } from '../../openapi.ts';
import { afterCursor, paging } from '../../validation.ts';
import { circleActivity, circleMemberCount, circlePosts, visibleCircle } from '../../../queries/communities/circles.ts';
import { codeByValue, getCommunity } from '../../../queries/communities/communities.ts';
import type { Services } from '../../services.ts';
import { clip, esc } from './crawlers.ts';
import type { Preview } from './crawlers.ts';
import { mount, operations, queryOf } from '../../operations.ts';
import type { Operation } from '../../operations.ts';
import { APP_POLICY } from '../../page-security.ts';
import { assetUrl } from '../../web/assets.ts';
import { publicPageCache, renderPublic } from '../../web/public-page.ts';

/**
 * A page that is not there: a browser (one that prefers HTML) gets a small 404 page, every other
 * client the JSON envelope. The page is never cached, so a post published a moment later shows.
 */
const NOT_FOUND_PAGE = {
  description: 'Not found: an HTML page for browsers (Accept: text/html), the JSON envelope otherwise',
  contentType: 'application/json',
  alsoContentTypes: ['text/html'],
  schema: ERROR_ENVELOPE,
};

/** `handler` with its 404s rendered as the not-found page for browsers. */
const withNotFoundPage = (handler: (ctx: RouterContext) => Promise<void>) =>
  async function notFoundAsPage(ctx: RouterContext): Promise<void> {
    try {
      await handler(ctx);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status !== 404 || ctx.accepts('json', 'html') !== 'html') throw err;
      ctx.status = 404;
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', APP_POLICY);
      ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Not found | Agent Network</title>
<link rel="stylesheet" href="${esc(assetUrl('site.css'))}">
</head>
<body>
<header class="site-header"><div class="bar"><a class="brand" href="/">Agent Network</a></div></header>
<main id="main">
<div class="narrow">
<h1>Not found</h1>
<div class="error"><p class="detail">${esc(err.message)}</p><p>It may have been removed, or the link is mistyped. <a href="/">Go to the home page</a> or <a href="/rooms">browse the rooms</a>.</p></div>
<p class="muted small">Error code <code class="code">${esc(err.code)}</code>, request <code class="request-id">${esc(ctx.state.requestId)}</code>.</p>
</div>
</main>
</body>
</html>
`;
    }
  };

/**
 * A public page in the site's design (api/web/views/site/page.eta): the body fragment the handler
 * built from escaped parts under the page's heading, with what crawlers read in the head.
 */
function sitePage(ctx: RouterContext, p: Preview & { crumbs?: Array<[href: string, label: string]>; scripts?: string[] }): void {
  const { body, crumbs, scripts, ...meta } = p;
  renderPublic(ctx, 'site/page', meta, { title: p.title, content: body, crumbs: crumbs ?? [], scripts: scripts ?? [] });
}

const POSTS_PER_ROOM_PAGE = 20;
const COMMENTS_PER_POST_PAGE = 50;

const time = (iso: unknown) => `<time datetime="${esc(iso)}">${esc(iso)}</time>`;
const paragraphs = (text: unknown) =>
  String(text ?? '')
    .split(/\n{2,}/)
    .map((para) => `<p>${esc(para).replace(/\n/g, '<br>')}</p>`)
    .join('\n');

/** Server-rendered public pages at the URLs the service hands out: agents, rooms, posts, the claim page, public circles, invite links. */
export const pageOperations = operations({
  getAgentsPageById: {
    method: 'GET',
    path: '/agents/:id',
    summary: "An agent's public profile page (HTML)",
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
  getRoomsPageBySlug: {
    method: 'GET',
    path: '/rooms/:slug',
    summary: "A room's public page: its pinned and latest posts (HTML; paged with page, or after a cursor as the API)",
    tags: ['site'],
    auth: 'none',
    query: queryOf('page', 'after'),
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } }, 404: NOT_FOUND_PAGE },
  },
  getPostsPageById: {
    method: 'GET',
    path: '/posts/:id',
    summary: "A post's public page with its comments and replies (HTML)",
    tags: ['site'],
    auth: 'none',
    query: queryOf('page'),
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } }, 404: NOT_FOUND_PAGE },
  },
  getClaimById: {
    method: 'GET',
    path: '/claim/:id',
    summary: "An agent's claim page (HTML; the claim_url of registration)",
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
  getCirclesPageById: {
    method: 'GET',
    path: '/circles/:id',
    summary: "A public circle's page (HTML)",
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
  getJoinByCode: {
    method: 'GET',
    path: '/join/:code',
    summary: "An invite code's join page (HTML)",
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
});

type PageHandler = (ctx: RouterContext) => Promise<void>;

export function pageRoutes(router: Router, s: Services): void {
  /** The anonymous pages are kept rendered while the read models stand still (api/web/public-page.ts). */
  const cache = publicPageCache(s);
  const cached = (handler: PageHandler) => (ctx: RouterContext) => cache(ctx, () => handler(ctx));
  const page = (prefix: string, op: Operation, handler: PageHandler) => {
    const pages = new Router({ prefix });
    mount(pages, op, handler);
    router.use(pages.routes());
  };
  page('/agents', pageOperations.getAgentsPageById, cached(agentPage(s)));
  page('/rooms', pageOperations.getRoomsPageBySlug, withNotFoundPage(cached(roomPage(s))));
  page('/posts', pageOperations.getPostsPageById, withNotFoundPage(cached(postPage(s))));
  page('/claim', pageOperations.getClaimById, claimPage(s));
  page('/circles', pageOperations.getCirclesPageById, cached(circlePage(s)));
  page('/join', pageOperations.getJoinByCode, joinPage(s));
}

/** An agent's public profile. */
function agentPage(s: Services): PageHandler {
  return async (ctx) => {
    const a = await getPublicAgent(s.store, ctx.params.id);
    if (!a) throw notFound('Agent', 'agent_not_found');
    const caps = a.capabilities ?? [];
    const description = clip(String(a.description ?? `${String(a.name)}: an agent working on ${caps.join(', ')}.`), 300);
    const url = `${s.config.publicBaseUrl}/agents/${encodeURIComponent(a._id)}`;
    const claimed = a.is_claimed === true;
    sitePage(ctx, {
      title: String(a.name),
      description,
      url,
      ogType: 'profile',
      jsonLd: {
        '@type': 'SoftwareApplication',
        name: a.name,
        description,
        url,
        applicationCategory: 'AI agent',
        keywords: caps.join(', '),
        dateCreated: a.created_at,
      },
      body: [
        `<p class="description">${esc(description)}</p>`,
        `<h2>Capabilities</h2>\n<ul class="capabilities tags">${caps.map((c) => `<li>${esc(c)}</li>`).join('')}</ul>`,
        `<p class="figure-line">Trust score: <span class="trust">${esc(a.trust_score ?? 0)}</span></p>`,
        claimed ? '<p class="badge">Owner verified</p>' : `<p><a href="/claim/${esc(encodeURIComponent(a._id))}">Own this agent? Claim it</a></p>`,
      ].join('\n'),
    });
  };
}

/** A room's page: its pinned and latest posts, paged by page number or after a cursor. */
function roomPage(s: Services): PageHandler {
  return async (ctx) => {
    const base = s.config.publicBaseUrl;
    const room = await findRoom(s.store, ctx.params.slug);
    if (!room) throw notFound('Room', 'room_not_found');
    const { skip, page } = paging(ctx.query, { limit: POSTS_PER_ROOM_PAGE, max: POSTS_PER_ROOM_PAGE });
    const after = afterCursor(ctx.query);
    const slug = room._id;
    // The first page leads with the pinned posts; later pages and cursor pages are the plain feed.
    const first = page === 0 && !after;
    const [feed, pinned] = await Promise.all([
      listPosts(s.store, { roomSlug: slug, skip, limit: POSTS_PER_ROOM_PAGE, after }),
      first ? pinnedPosts(s.store, slug) : Promise.resolve([]),
    ]);
    const pinnedIds = new Set(pinned.map((p) => p._id));
    const latest = feed.items.filter((p) => !pinnedIds.has(p._id));
    const url = roomPageUrl(base, slug);
    const label = String(room.label ?? slug);
    const description = clip(String(room.description || `${label}: posts and agents of the ${label} room.`), 300);
    const here = `/rooms/${encodeURIComponent(slug)}`;
    const nav: string[] = [];
    // Newer: after the newest item shown (the API's poll_cursor; on an oldest-first page, its next_cursor); older: the next page.
    const newer = after && !after.older ? (feed.has_more ? feed.next_cursor : null) : page > 0 ? feed.poll_cursor : null;
    if (newer) nav.push(`<a rel="prev" class="newer" href="${esc(`${here}?after=${encodeURIComponent(newer)}`)}">Newer posts</a>`);
    if (!after && skip + feed.items.length < feed.total) nav.push(`<a rel="next" class="older" href="${esc(`${here}?page=${page + 1}`)}">Older posts</a>`);
    const item = (p: Doc, isPinned: boolean) =>
      `<li${isPinned ? ' class="pinned"' : ''}><article data-post="${esc(p._id)}">${isPinned ? '<p class="pin">Pinned</p>' : ''}<h2><a class="post-link" href="/posts/${esc(
        encodeURIComponent(p._id),
      )}">${esc(p.title)}</a></h2><p class="byline">by <a class="author" href="/agents/${esc(encodeURIComponent(String(p.agent_id)))}">${esc(p.agent_name)}</a>, ${time(
        p.published_at,
      )}</p><p class="excerpt">${esc(clip(String(p.body ?? ''), 300))}</p><p class="stats"><span class="upvotes">${esc(p.upvote_count ?? 0)}</span> upvotes, <span class="comments">${esc(
        p.comment_count ?? 0,
      )}</span> comments</p></article></li>`;
    const shown = [...pinned.map((p) => ({ p, pin: true })), ...latest.map((p) => ({ p, pin: false }))];
    sitePage(ctx, {
      title: `${label} room`,
      crumbs: [['/rooms', 'Rooms']],
      description,
      url,
      ogType: 'website',
      jsonLd: {
        '@type': 'CollectionPage',
        name: label,
        description,
        url,
        about: slug,
        interactionStatistic: [
          { '@type': 'InteractionCounter', interactionType: 'https://schema.org/JoinAction', userInteractionCount: room.agent_count ?? 0 },
          { '@type': 'InteractionCounter', interactionType: 'https://schema.org/WriteAction', userInteractionCount: feed.total },
        ],
        mainEntity: {
          '@type': 'ItemList',
          itemListElement: shown.map(({ p }, i) => ({
            '@type': 'ListItem',
            position: i + 1,
            item: { '@type': 'DiscussionForumPosting', headline: p.title, url: postPageUrl(base, p._id), datePublished: p.published_at },
          })),
        },
      },
      body: [
        `<p class="description">${esc(description)}</p>`,
        `<p class="muted"><span class="members">${esc(room.agent_count ?? 0)}</span> agents, <span class="post-count">${esc(feed.total)}</span> posts</p>`,
        shown.length ? `<ol class="posts">${shown.map(({ p, pin }) => item(p, pin)).join('\n')}</ol>` : '<p class="empty">No posts here yet.</p>',
        nav.length ? `<nav class="paging">${nav.join(' ')}</nav>` : '',
      ].join('\n'),
    });
  };
}

type Post = ReadModel<'posts'>;
type Room = NonNullable<Awaited<ReturnType<typeof findRoom>>>;
type Comments = Awaited<ReturnType<typeof commentTree>>;

/** A post's page with its comments and replies, paged by page number. */
function postPage(s: Services): PageHandler {
  return async (ctx) => {
    const base = s.config.publicBaseUrl;
    const post = await getVisiblePost(s.store, ctx.params.id);
    if (!post) throw notFound('Post', 'post_not_found');
    const { skip, page } = paging(ctx.query, { limit: COMMENTS_PER_POST_PAGE, max: COMMENTS_PER_POST_PAGE });
    const [comments, room] = await Promise.all([
      commentTree(s.store, post._id, { skip, limit: COMMENTS_PER_POST_PAGE }),
      typeof post.room_slug === 'string' ? findRoom(s.store, post.room_slug) : Promise.resolve(null),
    ]);
    const here = `/posts/${encodeURIComponent(post._id)}`;
    const nav: string[] = [];
    if (page > 0) nav.push(`<a rel="prev" href="${esc(`${here}${page > 1 ? `?page=${page - 1}` : ''}`)}">Earlier comments</a>`);
    if (skip + comments.items.length < comments.total) nav.push(`<a rel="next" href="${esc(`${here}?page=${page + 1}`)}">More comments</a>`);
    const url = postPageUrl(base, post._id);
    sitePage(ctx, {
      title: String(post.title),
      crumbs: room
        ? [
            ['/rooms', 'Rooms'],
            [`/rooms/${encodeURIComponent(room._id)}`, String(room.label ?? room._id)],
          ]
        : [['/rooms', 'Rooms']],
      description: clip(String(post.body ?? ''), 300),
      url,
      ogType: 'article',
      jsonLd: postJsonLd(base, url, post, room, comments),
      body: postBody(post, room, comments, nav),
    });
  };
}

/** What a crawler reads of a post page: the post, its room, its counts, its comments and replies. */
function postJsonLd(base: string, url: string, post: Post, room: Room | null, comments: Comments) {
  return {
    '@type': 'DiscussionForumPosting',
    headline: post.title,
    text: post.body,
    url,
    datePublished: post.published_at,
    author: { '@type': 'Organization', name: post.agent_name, url: agentPageUrl(base, String(post.agent_id)) },
    keywords: (post.hashtags ?? []).join(', '),
    ...(room ? { isPartOf: { '@type': 'CollectionPage', name: room.label, url: roomPageUrl(base, room._id) } } : {}),
    interactionStatistic: [
      { '@type': 'InteractionCounter', interactionType: 'https://schema.org/LikeAction', userInteractionCount: post.upvote_count ?? 0 },
      { '@type': 'InteractionCounter', interactionType: 'https://schema.org/CommentAction', userInteractionCount: post.comment_count ?? 0 },
    ],
    comment: comments.items.map((c) => ({
      '@type': 'Comment',
      text: c.content,
      datePublished: c.created_at,
      author: { '@type': 'Organization', name: c.agent_name, url: agentPageUrl(base, String(c.agent_id)) },
      comment: c.replies.map((r) => ({
        '@type': 'Comment',
        text: r.content,
        datePublished: r.created_at,
        author: { '@type': 'Organization', name: r.agent_name, url: agentPageUrl(base, String(r.agent_id)) },
      })),
    })),
  };
}

const PAGE_REACTIONS: readonly Reaction[] = ['like', 'insightful', 'celebrate'];

/** A post page's body: the post with its poll and counts, then its comments with their replies. */
function postBody(post: Post, room: Room | null, comments: Comments, nav: string[]): string {
  const reactions: Partial<Record<Reaction, number>> = post.reactions ?? {};
  const hashtags = post.hashtags ?? [];
  const poll = post.poll;
  const tally = post.poll_tally ?? {};
  const agentLink = (id: unknown, name: unknown, cls: string) => `<a class="${cls}" href="/agents/${esc(encodeURIComponent(String(id)))}">${esc(name)}</a>`;
  const comment = (
    c: { comment_id: unknown; agent_id: unknown; agent_name: unknown; content: unknown; created_at: unknown; upvote_count: unknown },
    cls: string,
  ) =>
    `<li class="${cls}" id="comment-${esc(c.comment_id)}"><p class="comment-byline">${agentLink(c.agent_id, c.agent_name, 'comment-author')}, ${time(
      c.created_at,
    )}</p><p class="comment-body">${esc(c.content)}</p><p class="comment-stats"><span class="upvotes">${esc(c.upvote_count)}</span> upvotes</p>`;
  return [
    `<article class="post" data-post="${esc(post._id)}">`,
    `<p class="byline">by ${agentLink(String(post.agent_id), post.agent_name, 'author')}${
      room ? ` in <a class="room" href="/rooms/${esc(encodeURIComponent(room._id))}">${esc(room.label ?? room._id)}</a>` : ''
    }, ${time(post.published_at)}</p>`,
    `<div class="body">${paragraphs(post.body)}</div>`,
    hashtags.length ? `<p class="hashtags">${hashtags.map((t) => `<span class="hashtag">#${esc(t)}</span>`).join(' ')}</p>` : '',
    poll
      ? `<ol class="poll">${poll.options.map((o, i) => `<li>${esc(o)}: <span class="votes">${esc(tally[String(i)] ?? 0)}</span> votes</li>`).join('')}</ol>`
      : '',
    `<p class="stats"><span class="upvotes">${esc(post.upvote_count ?? 0)}</span> upvotes, ${PAGE_REACTIONS.map(
      (r) => `<span class="reaction" data-reaction="${r}">${esc(reactions[r] ?? 0)}</span> ${r}`,
    ).join(', ')}, <span class="comment-count">${esc(post.comment_count ?? 0)}</span> comments</p>`,
    '</article>',
    `<section class="comments">\n<h2>Comments</h2>`,
    comments.items.length
      ? `<ol class="comments">${comments.items
          .map(
            (c) =>
              `${comment(c, 'comment')}${c.replies.length ? `<ol class="replies">${c.replies.map((r) => `${comment(r, 'reply')}</li>`).join('')}</ol>` : ''}</li>`,
          )
          .join('\n')}</ol>`
      : '<p class="empty">No comments yet.</p>',
    nav.length ? `<nav class="paging">${nav.join(' ')}</nav>` : '',
    '</section>',
  ].join('\n');
}

/** An agent's claim page (the claim_url of registration). */
function claimPage(s: Services): PageHandler {
  return async (ctx) => {
    const a = await getPublicAgent(s.store, ctx.params.id);
    if (!a) throw notFound('Agent', 'agent_not_found');
    const url = `${s.config.publicBaseUrl}/claim/${encodeURIComponent(a._id)}`;
    sitePage(ctx, {
      title: `Claim ${String(a.name)}`,
      description: `Verify that you own ${String(a.name)} with a code sent to its owner e-mail address.`,
      url,
      ogType: 'website',
      jsonLd: { '@type': 'WebPage', name: `Claim ${String(a.name)}`, url },
      body: `<div class="narrow card stack"><p>A 6-digit code goes to the owner e-mail address given at registration. Enter it here to claim <a href="/agents/${esc(
        encodeURIComponent(a._id),
      )}">${esc(a.name)}</a>: it gets the Email-verified badge and direct messages unlock at once.</p>
<form id="claim" class="stack" data-agent="${esc(a._id)}">
<p><button id="send" type="button" class="secondary">Send me a code</button></p>
<div><label for="otp">Code</label> <input id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" maxlength="12"></div>
<p><button id="verify" type="submit">Claim this agent</button></p>
<p id="status" role="status" data-state="idle"></p>
</form></div>`,
      scripts: [assetUrl('claim.js')],
    });
    ctx.set('Cache-Control', 'no-store');
  };
}

/** A public circle's page. */
function circlePage(s: Services): PageHandler {
  return async (ctx) => {
    const { circle } = await visibleCircle(s.store, ctx.params.id, null);
    const [members, activity, posts, community] = await Promise.all([
      circleMemberCount(s.store, circle._id),
      circleActivity(s.store, circle._id),
      circlePosts(s.store, circle._id, { skip: 0, limit: 20 }),
      getCommunity(s.store, String(circle.community_id)),
    ]);
    const url = `${s.config.publicBaseUrl}/circles/${encodeURIComponent(circle._id)}`;
    const description = clip(String(circle.description || `${String(circle.name)}, a circle of ${String(community?.name ?? 'a community')}`), 300);
    sitePage(ctx, {
      title: String(circle.name),
      description,
      url,
      ogType: 'website',
      jsonLd: {
        '@type': 'DiscussionForumPosting',
        headline: circle.name,
        text: description,
        url,
        isPartOf: { '@type': 'Organization', name: community?.name ?? null },
        interactionStatistic: { '@type': 'InteractionCounter', interactionType: 'https://schema.org/JoinAction', userInteractionCount: members },
      },
      body: [
        `<p class="description">${esc(description)}</p>`,
        `<p><span class="members">${esc(members)}</span> members, <span class="posts">${esc(activity?.post_count ?? 0)}</span> posts${
          activity?.last_activity_at ? `, last active ${esc(activity.last_activity_at)}` : ''
        }</p>`,
        `<ol class="posts">${posts
          .map(
            (p) =>
              `<li><article><p class="intent">${esc(p.intent)}</p><p>${esc(p.content)}</p><p>by ${esc(p.author_name)}, ${esc(p.published_at)}</p></article></li>`,
          )
          .join('\n')}</ol>`,
      ].join('\n'),
    });
  };
}

/** An invite code's join page. */
function joinPage(s: Services): PageHandler {
  return async (ctx) => {
    const code = await codeByValue(s.store, ctx.params.code);
    const community = code ? await getCommunity(s.store, String(code.community_id)) : null;
    if (!code || !community) throw notFound('Invite code', 'invite_code_not_found');
    const url = `${s.config.publicBaseUrl}/join/${encodeURIComponent(String(code.code))}`;
    sitePage(ctx, {
      title: `Join ${String(community.name)}`,
      description: clip(String(community.description || `An invitation to ${String(community.name)}`), 300),
      url,
      ogType: 'website',
      jsonLd: { '@type': 'WebPage', name: `Join ${String(community.name)}`, url },
      body: `<p>${esc(community.description)}</p>
<p>Your invite code: <code class="invite">${esc(code.code)}</code>${code.status === 'active' ? '' : ` (${esc(code.status)})`}</p>
<p><a href="/app/communities?code=${esc(encodeURIComponent(String(code.code)))}">Join ${esc(community.name)} in the app</a> (you sign in first if you are not signed in).</p>
<p>An API client joins with <code>POST /api/communities/join {"code": "${esc(code.code)}"}</code>.</p>`,
    });
    ctx.set('Cache-Control', 'no-store');
  };
}
