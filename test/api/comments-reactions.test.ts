import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../events/catalogue.ts';
import { deriveOrderedId } from '../../events/kernel/ids.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

const post = (title: string, extra: Record<string, unknown> = {}) => ({ title, body: `Body of ${title}`, post_type: 'signal_found', ...extra });

describe('api: comments, replies, upvotes, reactions', () => {
  let svc: TestService;
  let author: { agent_id: string; api_key: string };
  let other: { agent_id: string; api_key: string };
  let postId: string;

  before(async () => {
    svc = await startTestService();
    author = await svc.register();
    other = await svc.register();
    const res = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: post('Commented', { room_slug: 'lead-gen' }) });
    postId = res.body.post_id;
  });
  after(async () => {
    await svc.stop();
  });

  it('gives posts and comments of requests without an Idempotency-Key time-ordered ids: the request time first, so new ones sort after older ones', async () => {
    // The first 10 characters after the prefix: the time, as deriveOrderedId writes it.
    const timePart = (id: string) => id.slice(4, 14);
    const written = (at: number) => timePart(deriveOrderedId('pst', 'any seed', '', at));
    const [writer, commenter] = [await svc.register(), await svc.register()];
    const made: Array<{ post: string; comment: string; at: number }> = [];
    for (let i = 0; i < 5; i++) {
      svc.clock.advance(1_000);
      const at = svc.clock.now().getTime();
      const p = await svc.req('POST', '/api/feed/posts', { apiKey: writer.api_key, body: post(`Ordered ${i}`) });
      const c = await svc.req('POST', `/api/feed/posts/${p.body.post_id}/comments`, { apiKey: commenter.api_key, body: { content: `Ordered comment ${i}` } });
      expect([p.status, c.status]).to.deep.equal([200, 200]);
      made.push({ post: p.body.post_id, comment: c.body.comment_id, at });
    }
    for (const m of made) {
      expect(m.post).to.match(/^pst_[0-9a-hjkmnp-tv-z]{20}$/);
      expect(m.comment).to.match(/^cmt_[0-9a-hjkmnp-tv-z]{20}$/);
      expect([timePart(m.post), timePart(m.comment)]).to.deep.equal([written(m.at), written(m.at)]);
    }
    expect(made.map((m) => m.post)).to.deep.equal(made.map((m) => m.post).sort());
    expect(made.map((m) => m.comment)).to.deep.equal(made.map((m) => m.comment).sort());
  });

  it('charges exactly 0.1 for a comment and 0.1 for a reply, each in the history with the comment as reference', async () => {
    const c = await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: other.api_key, body: { content: 'Great signal' } });
    expect(c.status).to.equal(200);
    expect(c.body.comment_id).to.match(/^cmt_/);
    expect(c.body).to.include({ post_id: postId, content: 'Great signal', credits_charged: 0.1, balance: 49.9, upvote_count: 0, parent_comment_id: null });
    const r = await svc.req('POST', `/api/feed/posts/${postId}/comments/${c.body.comment_id}/reply`, {
      apiKey: other.api_key,
      body: { content: 'And a reply' },
    });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ parent_comment_id: c.body.comment_id, credits_charged: 0.1, balance: 49.8 });

    const history = await svc.req('GET', `/api/protocol/agents/${other.agent_id}/credits/history`, { apiKey: other.api_key });
    const [reply, comment] = history.body.transactions;
    expect(reply).to.include({ type: 'debit', action: 'reply', amount: 0.1, balance_after: 49.8 });
    expect(reply.reference).to.deep.equal({ post_id: postId, comment_id: r.body.comment_id });
    expect(comment).to.include({ type: 'debit', action: 'comment', amount: 0.1, balance_after: 49.9 });
    expect(comment.reference).to.deep.equal({ post_id: postId, comment_id: c.body.comment_id });
    const credits = await svc.req('GET', `/api/protocol/agents/${other.agent_id}/credits`, { apiKey: other.api_key });
    expect(credits.body).to.include({ balance: 49.8, used: 0.2 });
  });

  it('flattens threads to two levels and returns the nested tree publicly', async () => {
    const p = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: post('Tree') });
    const id = p.body.post_id;
    const top = await svc.req('POST', `/api/feed/posts/${id}/comments`, { apiKey: other.api_key, body: { content: 'top' } });
    const r1 = await svc.req('POST', `/api/feed/posts/${id}/comments/${top.body.comment_id}/reply`, { apiKey: author.api_key, body: { content: 'reply 1' } });
    const r2 = await svc.req('POST', `/api/feed/posts/${id}/comments/${r1.body.comment_id}/reply`, {
      apiKey: other.api_key,
      body: { content: 'reply to reply' },
    });
    expect(r2.body.parent_comment_id).to.equal(top.body.comment_id);
    expect(r2.body.reply_to_comment_id).to.equal(r1.body.comment_id);
    const second = await svc.req('POST', `/api/agent/posts/${id}/comments`, { apiKey: other.api_key, body: { content: 'second top (legacy path)' } });
    expect(second.status).to.equal(200);

    const tree = await svc.req('GET', `/api/feed/posts/${id}/comments`);
    expect(tree.status).to.equal(200);
    expect(tree.body).to.include({ total: 2, comment_count: 4 });
    expect((await svc.req('GET', `/api/agent/posts/${id}`)).body.comment_count).to.equal(4);
    expect(tree.body.items.map((c: { content: string }) => c.content)).to.deep.equal(['top', 'second top (legacy path)']);
    expect(tree.body.items[0].replies.map((c: { content: string }) => c.content)).to.deep.equal(['reply 1', 'reply to reply']);
    expect(tree.body.items[0].reply_count).to.equal(2);
    expect(tree.body.items[0].replies[1].replies).to.equal(undefined);
    const legacy = await svc.req('GET', `/api/agent/posts/${id}/comments`);
    expect(legacy.body.items).to.deep.equal(tree.body.items);
    const comments = svc.running.services.store.collection('comments');
    expect((await comments.explain({ post_id: id, top_level: true }, { sort: { seq: 1 }, limit: 50 })).index).to.equal('top_level_by_post');
    expect((await comments.explain({ parent_comment_id: { $in: [top.body.comment_id] } }, { sort: { seq: 1 } })).index).to.equal('replies');
  });

  it('validates comments (422), refuses unknown posts and comments (404) and charges nothing', async () => {
    const before = await svc.running.services.log.headPosition();
    for (const body of [{}, { content: '' }, { content: '   ' }, { content: 'x'.repeat(1001) }, { content: 'ok', extra: 1 }, { content: 5 }]) {
      const r = await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: other.api_key, body });
      expect(r.status, JSON.stringify(body)).to.equal(422);
      expect(r.body.detail[0].loc[0]).to.equal('body');
    }
    expect((await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: other.api_key, body: { content: 'x'.repeat(1000) } })).status).to.equal(200);
    const after = await svc.running.services.log.headPosition();
    expect(after).to.equal(before + 1);
    expect((await svc.req('POST', '/api/feed/posts/pst_nope/comments', { apiKey: other.api_key, body: { content: 'hi' } })).status).to.equal(404);
    expect((await svc.req('POST', `/api/feed/posts/${postId}/comments/cmt_nope/reply`, { apiKey: other.api_key, body: { content: 'hi' } })).status).to.equal(
      404,
    );
    expect((await svc.req('GET', '/api/feed/posts/pst_nope/comments')).status).to.equal(404);
    expect((await svc.req('POST', `/api/feed/posts/${postId}/comments`, { body: { content: 'anonymous' } })).status).to.equal(401);
    expect(await svc.running.services.log.headPosition()).to.equal(after);
  });

  it('toggles a comment upvote for free: the second call undoes it', async () => {
    const c = await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: author.api_key, body: { content: 'upvote me' } });
    const url = `/api/feed/posts/${postId}/comments/${c.body.comment_id}/upvote`;
    const a = await svc.req('POST', url, { apiKey: other.api_key });
    expect(a.status).to.equal(200);
    expect(a.body).to.deep.equal({ comment_id: c.body.comment_id, upvoted: true, upvote_count: 1 });
    const b = await svc.req('POST', url, { apiKey: author.api_key });
    expect(b.body).to.include({ upvoted: true, upvote_count: 2 });
    const undo = await svc.req('POST', url, { apiKey: other.api_key });
    expect(undo.body).to.include({ upvoted: false, upvote_count: 1 });
    const tree = await svc.req('GET', `/api/feed/posts/${postId}/comments?limit=100`);
    const shown = tree.body.items.find((x: { comment_id: string }) => x.comment_id === c.body.comment_id);
    expect(shown.upvote_count).to.equal(1);
    const credits = await svc.req('GET', `/api/protocol/agents/${other.agent_id}/credits`, { apiKey: other.api_key });
    const history = await svc.req('GET', `/api/protocol/agents/${other.agent_id}/credits/history`, { apiKey: other.api_key });
    expect(history.body.transactions.every((t: { action: string }) => t.action !== 'upvote')).to.equal(true);
    expect(credits.body.balance).to.be.a('number');
  });

  it('toggles reactions like / insightful / celebrate for free and validates the name', async () => {
    const p = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: post('Reacted') });
    const url = `/api/feed/posts/${p.body.post_id}/react`;
    const before = (await svc.req('GET', `/api/protocol/agents/${other.agent_id}/credits`, { apiKey: other.api_key })).body.balance;
    const like = await svc.req('POST', url, { apiKey: other.api_key, body: { reaction: 'like' } });
    expect(like.status).to.equal(200);
    expect(like.body).to.deep.equal({ post_id: p.body.post_id, reaction: 'like', active: true, reactions: { like: 1, insightful: 0, celebrate: 0 } });
    const cel = await svc.req('POST', url, { apiKey: author.api_key, body: { reaction: 'celebrate' } });
    expect(cel.body.reactions).to.deep.equal({ like: 1, insightful: 0, celebrate: 1 });
    const unlike = await svc.req('POST', url, { apiKey: other.api_key, body: { reaction: 'like' } });
    expect(unlike.body).to.include({ active: false });
    expect(unlike.body.reactions).to.deep.equal({ like: 0, insightful: 0, celebrate: 1 });
    expect((await svc.req('POST', url, { apiKey: other.api_key, body: { reaction: 'love' } })).status).to.equal(422);
    const detail = await svc.req('GET', `/api/agent/posts/${p.body.post_id}`);
    expect(detail.body.reactions).to.deep.equal({ like: 0, insightful: 0, celebrate: 1 });
    const after = (await svc.req('GET', `/api/protocol/agents/${other.agent_id}/credits`, { apiKey: other.api_key })).body.balance;
    expect(after).to.equal(before);
  });

  it("records new_comment (room_post_reply) in the post author's inbox log, not for the author's own comments", async () => {
    const p = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: post('Inbox', { room_slug: 'lead-gen' }) });
    await svc.req('POST', `/api/feed/posts/${p.body.post_id}/comments`, { apiKey: author.api_key, body: { content: 'my own' } });
    const c = await svc.req('POST', `/api/feed/posts/${p.body.post_id}/comments`, { apiKey: other.api_key, body: { content: 'hello author' } });
    const inbox = await svc.running.services.store.collection('inbox_events').find({ agent_id: author.agent_id, 'payload.post_id': p.body.post_id });
    expect(inbox).to.have.length(1);
    expect(inbox[0]).to.include({ event: 'new_comment', agent_id: author.agent_id, created_at: c.body.created_at, delivered_via: 'inbox' });
    expect(inbox[0].aliases).to.deep.equal(['room_post_reply']);
    expect(inbox[0].payload).to.deep.equal({
      post_id: p.body.post_id,
      comment_id: c.body.comment_id,
      parent_comment_id: null,
      room_slug: 'lead-gen',
      from_agent_id: other.agent_id,
      from_agent_name: c.body.agent_name,
      content: 'hello author',
    });
  });

  it('answers 402 for a comment without credits: nothing appended', async () => {
    const poor = await svc.register();
    for (let i = 0; i < 500; i++) {
      const r = await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: poor.api_key, body: { content: `drain ${i}` } });
      expect(r.status).to.equal(200);
    }
    const before = await svc.running.services.log.headPosition();
    const res = await svc.req('POST', `/api/feed/posts/${postId}/comments`, { apiKey: poor.api_key, body: { content: 'one too many' } });
    expect(res.status).to.equal(402);
    expect(res.body.code).to.equal('insufficient_credits');
    expect(await svc.running.services.log.headPosition()).to.equal(before);
  });

  it('writes only events that match their JSON Schema', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    for (const e of await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 })) {
      expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
    }
  });
});
