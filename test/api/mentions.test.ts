import { expect } from 'chai';
import { DAY } from '../../events/kernel/clock.ts';
import { defined } from '../helpers/defined.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { startReceiver, until } from '../helpers/webhook-receiver.ts';

type Agent = { agent_id: string; api_key: string; body: { webhook_secret: string } };

describe('api: an @handle of an agent in a post, comment or reply notifies it (mention)', function () {
  this.timeout(120_000);
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ WEBHOOK_ALLOW_LOOPBACK: '1' });
  });
  after(async () => {
    await svc.stop();
  });

  const mentions = async (x: Agent) =>
    (
      (await svc.req('GET', '/api/agent/notifications?limit=100', { apiKey: x.api_key })).body.notifications as Array<{
        type: string;
        from_agent_id: string;
        data: Record<string, unknown>;
      }>
    ).filter((n) => n.type === 'mention');
  const publish = (x: Agent, title: string, body: string) =>
    svc.req('POST', '/api/feed/posts', { apiKey: x.api_key, body: { title, body, post_type: 'signal_found', room_slug: 'lead-gen' } });

  it('notifies each agent a post names by handle or id once, never its author, not an unknown handle', async () => {
    const author = await svc.register({ name: 'Mention Author' });
    const scout = await svc.register({ name: 'Scout Bot One' });
    const other = await svc.register({ name: 'Deal Finder' });
    const post = await publish(
      author,
      'Hello @scoutbotone',
      `Twice @ScoutBotOne, by id @${other.agent_id}, myself @mentionauthor, nobody @nosuchagent, mail x@dealfinder.com`,
    );
    expect(post.status, post.text).to.equal(200);
    const [n] = await mentions(scout);
    expect(await mentions(scout)).to.have.length(1);
    expect(n).to.deep.include({ from_agent_id: author.agent_id });
    expect(n.data).to.deep.include({ post_id: post.body.post_id, comment_id: null, from_agent_name: 'Mention Author' });
    expect(await mentions(other)).to.have.length(1);
    expect(await mentions(author)).to.deep.equal([]);
  });

  it('notifies from comments and replies (once per item), and refuses nothing: a mention is free beyond the comment', async () => {
    const author = await svc.register({ name: 'Post Writer' });
    const commenter = await svc.register({ name: 'Comment Writer' });
    const named = await svc.register({ name: 'Named Agent' });
    const post = await publish(author, 'A post', 'Nothing to see');
    const c = await svc.req('POST', `/api/feed/posts/${post.body.post_id}/comments`, {
      apiKey: commenter.api_key,
      body: { content: 'Ask @namedagent and @NamedAgent' },
    });
    expect(c.status, c.text).to.equal(200);
    expect(c.body.credits_charged).to.equal(0.1);
    const r = await svc.req('POST', `/api/feed/posts/${post.body.post_id}/comments/${c.body.comment_id}/reply`, {
      apiKey: author.api_key,
      body: { content: `Good idea, @namedagent, and thanks @commentwriter` },
    });
    expect(r.status, r.text).to.equal(200);
    const seen = await mentions(named);
    expect(seen.map((n) => n.data.comment_id)).to.deep.equal([r.body.comment_id, c.body.comment_id]);
    expect((await mentions(commenter)).map((n) => n.data.comment_id)).to.deep.equal([r.body.comment_id]);
  });

  it('does not notify an agent that blocks the author, nor a deactivated one', async () => {
    const author = await svc.register({ name: 'Pushy Author' });
    const blocker = await svc.register({ name: 'Blocking Agent' });
    const gone = await svc.register({ name: 'Gone Agent' });
    expect((await svc.req('POST', `/api/agent/blocks/${author.agent_id}`, { apiKey: blocker.api_key })).status).to.equal(200);
    expect((await svc.req('DELETE', '/api/protocol/me', { apiKey: gone.api_key })).status).to.equal(200);
    expect((await publish(author, 'Hey @blockingagent', 'and @goneagent')).status).to.equal(200);
    expect(await mentions(blocker)).to.deep.equal([]);
    expect(await svc.running.services.store.collection('notifications').find({ agent_id: gone.agent_id, type: 'mention' })).to.deep.equal([]);
  });

  it("notifies a scheduled post's mentions when it is published, not when it is scheduled", async () => {
    const author = await svc.register({ name: 'Planner' });
    const named = await svc.register({ name: 'Planned For' });
    const res = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: author.api_key,
      body: { title: 'Tomorrow', body: 'See you @plannedfor', post_type: 'signal_found', publish_at: new Date(svc.clock.now().getTime() + DAY).toISOString() },
    });
    expect(res.status, res.text).to.equal(200);
    expect(await mentions(named)).to.deep.equal([]);
    svc.clock.advance(DAY);
    expect(await defined(svc.running.workers, 'workers').publishScheduledPost(res.body.post_id)).to.equal(true);
    expect((await mentions(named)).map((n) => n.data.post_id)).to.deep.equal([res.body.post_id]);
  });

  it('delivers mention by webhook to an agent that subscribes to it, and not to one whose filter leaves it out', async () => {
    const author = await svc.register({ name: 'Hook Author' });
    const subscribed = await svc.register({ name: 'Hook Listener' });
    const filtered = await svc.register({ name: 'Hook Filtered' });
    const receiver = await startReceiver({ secret: subscribed.body.webhook_secret, now: () => svc.clock.now().getTime() });
    const other = await startReceiver({ secret: filtered.body.webhook_secret, now: () => svc.clock.now().getTime() });
    try {
      const hook = await svc.req('PATCH', `/api/protocol/agents/${subscribed.agent_id}/webhook`, {
        apiKey: subscribed.api_key,
        body: { webhook_url: receiver.url, events: ['mention'] },
      });
      expect(hook.status, hook.text).to.equal(200);
      expect(hook.body.available_events).to.include('mention');
      const hook2 = await svc.req('PATCH', `/api/protocol/agents/${filtered.agent_id}/webhook`, {
        apiKey: filtered.api_key,
        body: { webhook_url: other.url, events: ['new_dm'] },
      });
      expect(hook2.status, hook2.text).to.equal(200);
      const post = await publish(author, 'Calling @hooklistener', 'and @hookfiltered');
      const worker = defined(svc.running.workers, 'the workers').webhooks;
      await until(async () => {
        await worker.drain();
        await worker.sweep();
        return receiver.accepted.length > 0;
      }, 'the mention webhook delivery');
      expect(receiver.accepted[0].body).to.deep.include({ event: 'mention', agent_id: subscribed.agent_id });
      expect(receiver.accepted[0].body.data).to.deep.include({ post_id: post.body.post_id, from_agent_id: author.agent_id, comment_id: null });
      await worker.drain();
      expect(other.accepted).to.deep.equal([]);
      const inbox = await svc.req('GET', `/api/protocol/agents/${filtered.agent_id}/inbox`, { apiKey: filtered.api_key });
      expect(inbox.body.events.map((e: { event: string }) => e.event)).to.include('mention');
    } finally {
      await receiver.close();
      await other.close();
    }
  });
});
