import { expect } from 'chai';
import { COSTS } from '../../commands/credits/tiers.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp, signUpWithAgent } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const HOUR = 3600_000;

interface ChargedRoute {
  method: string;
  /** The route as docs/ROUTES.md lists it. */
  route: string;
  action: keyof typeof COSTS | 'schedule_post_refund';
  /** The request, built afresh for the dry run and for the real call (each names its own path). */
  call(): Promise<{ path: string; headers?: Record<string, string>; apiKey?: string; body?: unknown }>;
}

describe('api: cost headers and dry runs on every charged route', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  it('every charged write answers X-Credits-Cost and X-Credits-Remaining, and ?dry_run=1 answers the cost, passes every check and appends nothing', async () => {
    const { user, agent: a } = await signUpWithAgent(svc, outbox);
    const b = await svc.register();
    const c = await svc.register();
    const target = await signUp(svc, outbox);
    svc.clock.advance(2 * HOUR); // past the unclaimed agents' DM lock
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: b.api_key,
      body: { title: 'Signal', body: 'Fresh', post_type: 'signal_found', room_slug: 'lead-gen' },
    });
    expect(post.status, post.text).to.equal(200);
    const postId = post.body.post_id as string;
    const comment = await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: b.api_key, body: { content: 'First' } });
    const commentId = comment.body.comment_id as string;
    const inbound = await svc.req('POST', `/api/protocol/agents/${b.agent_id}/dm`, {
      apiKey: b.api_key,
      body: { to_user_id: user.user_id, message: 'Hello owner' },
    });
    expect(inbound.status, inbound.text).to.equal(200);
    const thread = await svc.req('POST', '/api/agent/group-dm', {
      apiKey: a.api_key,
      body: { participant_agent_ids: [b.agent_id, c.agent_id], first_message: 'Hi both' },
    });
    const threadId = thread.body.thread_id as string;
    const publishAt = () => new Date(svc.clock.now().getTime() + HOUR).toISOString();
    const scheduleOne = async () => {
      const r = await svc.req('POST', '/api/feed/posts/schedule', {
        apiKey: a.api_key,
        body: { title: 'Later', body: 'Soon', post_type: 'signal_found', publish_at: publishAt() },
      });
      expect(r.status, r.text).to.equal(200);
      return r.body.post_id as string;
    };
    const toCancel = await scheduleOne();
    const key = { apiKey: a.api_key };
    // Access tokens live 15 minutes: sign in again on the clock moved past the DM lock.
    const login = await svc.req('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(login.status, login.text).to.equal(200);
    const asUser = { headers: bearer(login.body.access_token as string) };
    let n = 0;
    const text = () => `message ${++n}`;
    const listing = () => ({ title: `Listing ${text()}`, description: 'Work to do', category: 'engineering', price: 10, pricing_type: 'fixed' });
    /** A fresh listing of another agent (b), so each response is the first to it. */
    const othersListing = async () => {
      const l = await svc.req('POST', '/api/agent/marketplace', { apiKey: b.api_key, body: listing() });
      expect(l.status, l.text).to.equal(201);
      return l.body.intent_id as string;
    };

    const routes: ChargedRoute[] = [
      {
        method: 'POST',
        route: '/api/feed/posts',
        action: 'post',
        call: async () => ({ path: '/api/feed/posts', ...key, body: { title: text(), body: 'b', post_type: 'signal_found' } }),
      },
      {
        method: 'POST',
        route: '/api/agent/posts',
        action: 'post',
        call: async () => ({ path: '/api/agent/posts', ...key, body: { content: `Legacy ${text()}`, room: 'lead-gen' } }),
      },
      {
        method: 'POST',
        route: '/api/feed/posts/:post_id/comments',
        action: 'comment',
        call: async () => ({ path: `/api/feed/posts/${postId}/comments`, ...key, body: { content: text() } }),
      },
      {
        method: 'POST',
        route: '/api/feed/posts/:post_id/comments/:comment_id/reply',
        action: 'reply',
        call: async () => ({ path: `/api/feed/posts/${postId}/comments/${commentId}/reply`, ...key, body: { content: text() } }),
      },
      {
        method: 'POST',
        route: '/api/agent/posts/:post_id/comments',
        action: 'comment',
        call: async () => ({ path: `/api/agent/posts/${postId}/comments`, ...key, body: { content: text() } }),
      },
      {
        method: 'POST',
        route: '/api/agent/posts/:post_id/comments/:comment_id/reply',
        action: 'reply',
        call: async () => ({ path: `/api/agent/posts/${postId}/comments/${commentId}/reply`, ...key, body: { content: text() } }),
      },
      {
        method: 'POST',
        route: '/api/feed/posts/:id/boost',
        action: 'signal_boost',
        call: async () => ({ path: `/api/feed/posts/${postId}/boost`, ...key, body: {} }),
      },
      {
        method: 'POST',
        route: '/api/feed/posts/schedule',
        action: 'schedule_post',
        call: async () => ({
          path: '/api/feed/posts/schedule',
          ...key,
          body: { title: text(), body: 'b', post_type: 'signal_found', publish_at: publishAt() },
        }),
      },
      {
        method: 'DELETE',
        route: '/api/feed/posts/scheduled/:post_id',
        action: 'schedule_post_refund',
        call: async () => ({ path: `/api/feed/posts/scheduled/${toCancel}`, ...key }),
      },
      {
        method: 'POST',
        route: '/api/protocol/agents/:id/dm',
        action: 'dm',
        call: async () => ({ path: `/api/protocol/agents/${a.agent_id}/dm`, ...key, body: { to_agent_id: c.agent_id, message: text() } }),
      },
      {
        method: 'POST',
        route: '/api/agent/a2a/message',
        action: 'a2a_message',
        call: async () => ({ path: '/api/agent/a2a/message', ...key, body: { to_agent_id: b.agent_id, intent: 'intro_request', payload: { note: text() } } }),
      },
      {
        method: 'POST',
        route: '/api/agent/group-dm',
        action: 'mesh_thread_create',
        call: async () => ({ path: '/api/agent/group-dm', ...key, body: { participant_agent_ids: [b.agent_id, c.agent_id], first_message: text() } }),
      },
      {
        method: 'POST',
        route: '/api/agent/group-dm/:thread_id/message',
        action: 'mesh_thread_message',
        call: async () => ({ path: `/api/agent/group-dm/${threadId}/message`, ...key, body: { message: text() } }),
      },
      {
        method: 'POST',
        route: '/api/agent/my-inbox/:agent_id/reply',
        action: 'owner_dm_reply',
        call: async () => ({ path: `/api/agent/my-inbox/${b.agent_id}/reply`, ...asUser, body: { message: text() } }),
      },
      {
        method: 'POST',
        route: '/api/agent/match',
        action: 'matching_run',
        call: async () => ({ path: '/api/agent/match', ...key, body: { gives: ['lead-gen'], asks: [`topic-${++n}`] } }),
      },
      {
        method: 'POST',
        route: '/api/agent/intros',
        action: 'intro_request',
        call: async () => ({ path: '/api/agent/intros', ...key, body: { member_id: target.user_id, reason: 'We both do ops' } }),
      },
      {
        method: 'POST',
        route: '/api/agent/chat/execute-action',
        action: 'post',
        call: async () => ({
          path: '/api/agent/chat/execute-action',
          ...asUser,
          body: { action_type: 'post_to_protocol_room', target_id: 'lead-gen', target_name: 'Lead Gen', draft_content: `Looking for leads ${text()}` },
        }),
      },
      {
        method: 'POST',
        route: '/api/agent/marketplace',
        action: 'marketplace_post',
        call: async () => ({ path: '/api/agent/marketplace', ...key, body: listing() }),
      },
      {
        method: 'POST',
        route: '/api/marketplace',
        action: 'marketplace_post',
        call: async () => ({ path: '/api/marketplace', ...asUser, body: listing() }),
      },
      {
        method: 'POST',
        route: '/api/agent/marketplace/:intent_id/respond',
        action: 'marketplace_respond',
        call: async () => ({ path: `/api/agent/marketplace/${await othersListing()}/respond`, ...key, body: { message: text() } }),
      },
      {
        method: 'POST',
        route: '/api/marketplace/:intent_id/respond',
        action: 'marketplace_respond',
        call: async () => ({ path: `/api/marketplace/${await othersListing()}/respond`, ...asUser, body: { message: text() } }),
      },
    ];

    // The list is complete: every charged action is covered, and every listed route exists.
    const listed = new Set(routes.map((r) => r.action));
    const documented = (await import('node:fs')).readFileSync(new URL('../../docs/ROUTES.md', import.meta.url), 'utf8');
    for (const action of Object.keys(COSTS)) expect(listed.has(action as keyof typeof COSTS), `no charged route listed for ${action}`).to.equal(true);
    for (const r of routes) expect(documented, r.route).to.include(`| ${r.method} | \`${r.route}\` |`);

    const log = svc.running.services.log;
    const balance = async () => (await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, key)).body.balance as number;
    const cost = (r: ChargedRoute) => (r.action === 'schedule_post_refund' ? -COSTS.schedule_post : COSTS[r.action]) / 1000;
    // The request is built before the log head is read: building one may append (another agent's listing to respond to).
    const send = async (r: ChargedRoute, request: Awaited<ReturnType<ChargedRoute['call']>>, dry: boolean): Promise<TestResponse> => {
      const { path, ...opts } = request;
      return svc.req(r.method, dry ? `${path}?dry_run=1` : path, opts);
    };

    for (const r of routes) {
      const label = `${r.method} ${r.route}`;
      const dryRequest = await r.call();
      const head = await log.headPosition();
      const before = await balance();
      const dry = await send(r, dryRequest, true);
      expect(dry.status, `${label} dry run: ${dry.text}`).to.equal(299);
      expect(dry.body, label).to.include({ dry_run: true, would_pass: true, cost: cost(r), balance: before });
      expect(Number(dry.headers['x-credits-cost']), label).to.equal(cost(r));
      expect(Number(dry.headers['x-credits-remaining']), label).to.equal(Math.round((before - cost(r)) * 100) / 100);
      expect(await log.headPosition(), `${label} dry run appended`).to.equal(head);
      expect(await balance(), label).to.equal(before);

      const real = await send(r, await r.call(), false);
      expect(real.status, `${label}: ${real.text}`).to.be.oneOf([200, 201]);
      expect(Number(real.headers['x-credits-cost']), label).to.equal(cost(r));
      const after = await balance();
      expect(after, label).to.equal(Math.round((before - cost(r)) * 100) / 100);
      expect(Number(real.headers['x-credits-remaining']), label).to.equal(after);
    }
  });

  it('a dry run that would fail answers the real status marked would_pass: false (validation, balance), and appends nothing', async () => {
    const a = await svc.register();
    const head = await svc.running.services.log.headPosition();
    const invalid = await svc.req('POST', '/api/feed/posts?dry_run=1', { apiKey: a.api_key, body: { title: 5 } });
    expect(invalid.status).to.equal(422);
    expect(invalid.body).to.include({ code: 'validation_failed', dry_run: true, would_pass: false });
    // Spend the free allocation (50 credits) with matching runs of 1 credit.
    for (let i = 0; i < 50; i++) {
      const r = await svc.req('POST', '/api/agent/match', { apiKey: a.api_key, body: { gives: ['lead-gen'], asks: [`topic-${i}`] } });
      expect(r.status, r.text).to.equal(200);
    }
    const head2 = await svc.running.services.log.headPosition();
    const broke = await svc.req('POST', '/api/agent/match?dry_run=1', { apiKey: a.api_key, body: { gives: ['lead-gen'], asks: ['more'] } });
    expect(broke.status).to.equal(402);
    expect(broke.body).to.include({
      code: 'insufficient_credits',
      dry_run: true,
      would_pass: false,
      cost: 1,
      upgrade_url: `/api/protocol/agents/${a.agent_id}/upgrade`,
    });
    expect(broke.headers).to.include({ 'x-credits-cost': '1', 'x-credits-remaining': '0' });
    expect(await svc.running.services.log.headPosition()).to.equal(head2);
    expect(head2).to.be.greaterThan(head);
    const real = await svc.req('POST', '/api/agent/match', { apiKey: a.api_key, body: { gives: ['lead-gen'], asks: ['more'] } });
    expect(real.status).to.equal(402);
    expect(real.headers).to.include({ 'x-credits-cost': '1', 'x-credits-remaining': '0' });
  });
});
