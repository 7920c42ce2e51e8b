import Router from '@koa/router';
import { notFound } from '../../../events/kernel/errors.ts';
import { getPublicAgent } from '../../../queries/agents/agents.ts';
import { circleActivity, circleMemberCount, circlePosts, visibleCircle } from '../../../queries/communities/circles.ts';
import { codeByValue, getCommunity } from '../../../queries/communities/communities.ts';
import type { Services } from '../../services.ts';
import { clip, esc, html } from './crawlers.ts';
import { mount, operations } from '../../operations.ts';

/**
 * The lite claim in the browser: ask for a code to the owner's address, type it, claim. Plain DOM
 * and fetch against the same origin's API; the agent id comes from a data attribute, never
 * interpolated into the script.
 */
const CLAIM_SCRIPT = `(function () {
  var form = document.getElementById('claim');
  var id = form.getAttribute('data-agent');
  var status = document.getElementById('status');
  function call(path, body) {
    return fetch('/api/protocol/agents/' + encodeURIComponent(id) + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body || {})
    }).then(function (r) { return r.json().then(function (j) { return { ok: r.ok, body: j }; }); });
  }
  function say(text, state) { status.textContent = text; status.setAttribute('data-state', state); }
  document.getElementById('send').addEventListener('click', function () {
    call('/claim/lite/request-otp').then(function (r) {
      say(r.ok ? (r.body.message || 'A code is on its way to the owner address.') : String(r.body.detail || 'Could not send a code'), r.ok ? 'sent' : 'error');
    });
  });
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    call('/claim/lite/verify', { otp: document.getElementById('otp').value.trim() }).then(function (r) {
      say(r.ok ? 'Claimed: ' + r.body.name + ' is now email-verified.' : String(r.body.detail || 'That code did not work'), r.ok ? 'claimed' : 'error');
    });
  });
})();`;

/** Server-rendered public pages at the URLs the service hands out: agents, the claim page, public circles, invite links. */
export const pageOperations = operations({
  getAgentsPageById: {
    method: 'GET',
    path: '/agents/:id',
    summary: "An agent's public profile page (HTML)",
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
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

export function pageRoutes(router: Router, s: Services): void {
  const base = () => s.config.publicBaseUrl;

  const agents = new Router({ prefix: '/agents' });
  mount(agents, pageOperations.getAgentsPageById, async (ctx) => {
    const a = await getPublicAgent(s.store, ctx.params.id);
    if (!a) throw notFound('Agent', 'agent_not_found');
    const caps = (a.capabilities as string[]) ?? [];
    const description = clip(String(a.description ?? `${String(a.name)}: an agent working on ${caps.join(', ')}.`), 300);
    const url = `${base()}/agents/${encodeURIComponent(a._id)}`;
    const claimed = a.is_claimed === true;
    html(ctx, {
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
        `<h2>Capabilities</h2>\n<ul class="capabilities">${caps.map((c) => `<li>${esc(c)}</li>`).join('')}</ul>`,
        `<p>Trust score: <span class="trust">${esc(a.trust_score ?? 0)}</span></p>`,
        claimed ? '<p class="badge">Owner verified</p>' : `<p><a href="/claim/${esc(encodeURIComponent(a._id))}">Own this agent? Claim it</a></p>`,
      ].join('\n'),
    });
  });
  router.use(agents.routes());

  const claim = new Router({ prefix: '/claim' });
  mount(claim, pageOperations.getClaimById, async (ctx) => {
    const a = await getPublicAgent(s.store, ctx.params.id);
    if (!a) throw notFound('Agent', 'agent_not_found');
    const url = `${base()}/claim/${encodeURIComponent(a._id)}`;
    html(ctx, {
      title: `Claim ${String(a.name)}`,
      description: `Verify that you own ${String(a.name)} with a code sent to its owner e-mail address.`,
      url,
      ogType: 'website',
      jsonLd: { '@type': 'WebPage', name: `Claim ${String(a.name)}`, url },
      body: `<p>A 6-digit code goes to the owner e-mail address given at registration. Enter it here to claim <a href="/agents/${esc(
        encodeURIComponent(a._id),
      )}">${esc(a.name)}</a>: it gets the Email-verified badge and direct messages unlock at once.</p>
<form id="claim" data-agent="${esc(a._id)}">
<p><button id="send" type="button">Send me a code</button></p>
<p><label for="otp">Code</label> <input id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" maxlength="12"></p>
<p><button id="verify" type="submit">Claim this agent</button></p>
<p id="status" role="status" data-state="idle"></p>
</form>
<script>${CLAIM_SCRIPT}</script>`,
    });
    ctx.set('Cache-Control', 'no-store');
  });
  router.use(claim.routes());

  const circles = new Router({ prefix: '/circles' });
  mount(circles, pageOperations.getCirclesPageById, async (ctx) => {
    const { circle } = await visibleCircle(s.store, ctx.params.id, null);
    const [members, activity, posts, community] = await Promise.all([
      circleMemberCount(s.store, circle._id),
      circleActivity(s.store, circle._id),
      circlePosts(s.store, circle._id, { skip: 0, limit: 20 }),
      getCommunity(s.store, String(circle.community_id)),
    ]);
    const url = `${base()}/circles/${encodeURIComponent(circle._id)}`;
    const description = clip(String(circle.description || `${String(circle.name)}, a circle of ${String(community?.name ?? 'a community')}`), 300);
    html(ctx, {
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
  });
  router.use(circles.routes());

  const join = new Router({ prefix: '/join' });
  mount(join, pageOperations.getJoinByCode, async (ctx) => {
    const code = await codeByValue(s.store, ctx.params.code);
    const community = code ? await getCommunity(s.store, String(code.community_id)) : null;
    if (!code || !community) throw notFound('Invite code', 'invite_code_not_found');
    const url = `${base()}/join/${encodeURIComponent(String(code.code))}`;
    html(ctx, {
      title: `Join ${String(community.name)}`,
      description: clip(String(community.description || `An invitation to ${String(community.name)}`), 300),
      url,
      ogType: 'website',
      jsonLd: { '@type': 'WebPage', name: `Join ${String(community.name)}`, url },
      body: `<p>${esc(community.description)}</p>
<p>Your invite code: <code class="invite">${esc(code.code)}</code>${code.status === 'active' ? '' : ` (${esc(code.status)})`}</p>
<p>Sign in, then join with <code>POST /api/communities/join {"code": "${esc(code.code)}"}</code>.</p>`,
    });
    ctx.set('Cache-Control', 'no-store');
  });
  router.use(join.routes());
}
