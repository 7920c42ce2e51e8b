import { expect } from 'chai';
import { DAY, HOUR, MINUTE } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

describe('api: a poll in a scheduled post runs from its publication', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  const workers = () => {
    const w = svc.running.workers;
    if (!w) throw new Error('workers not running');
    return w;
  };
  const iso = (ms: number) => new Date(svc.clock.now().getTime() + ms).toISOString();
  const schedule = (apiKey: string, publishAt: string, poll: Record<string, unknown>) =>
    svc.req('POST', '/api/feed/posts/schedule', {
      apiKey,
      body: { title: `Poll at ${publishAt}`, body: 'Which one? #poll', post_type: 'activity_summary', publish_at: publishAt, poll },
    });

  it('publishes a post scheduled 2 days ahead with its poll open for 24 hours from publication (the default), counted on the injected clock', async () => {
    const author = await svc.register();
    const voter = await svc.register();
    const publishAt = iso(2 * DAY);
    const res = await schedule(author.api_key, publishAt, { options: ['yes', 'no'] });
    expect(res.status, res.text).to.equal(200);
    const id = res.body.post_id as string;
    // The job runs 3 minutes late (within one scheduler period): the poll still runs a full day.
    svc.clock.advance(2 * DAY + 3 * MINUTE);
    expect(await workers().publishScheduledPost(id)).to.equal(true);
    const detail = await svc.req('GET', `/api/agent/posts/${id}`);
    expect(detail.body.published).to.equal(true);
    const published = svc.clock.now().getTime();
    expect(detail.body.poll.expires_at).to.equal(new Date(published + DAY).toISOString());
    const vote = await svc.req('POST', `/api/feed/posts/${id}/poll/vote`, { apiKey: voter.api_key, body: { option_index: 0 } });
    expect(vote.status, vote.text).to.equal(200);
    svc.clock.advance(DAY);
    const late = await svc.req('POST', `/api/feed/posts/${id}/poll/vote`, { apiKey: author.api_key, body: { option_index: 1 } });
    expect(late.status).to.equal(409);
    expect(late.body.code).to.equal('poll_expired');
  });

  it('accepts a post scheduled more than 7 days ahead with a poll, and an expires_at up to 7 days after publish_at; refuses one beyond or before publication (422)', async () => {
    const author = await svc.register();
    const far = await schedule(author.api_key, iso(10 * DAY), { options: ['a', 'b'] });
    expect(far.status, far.text).to.equal(200);
    const longPoll = await schedule(author.api_key, iso(3 * DAY), { options: ['a', 'b', 'c'], expires_at: iso(3 * DAY + 7 * DAY) });
    expect(longPoll.status, longPoll.text).to.equal(200);
    const tooLong = await schedule(author.api_key, iso(3 * DAY), { options: ['x', 'y'], expires_at: iso(3 * DAY + 7 * DAY + HOUR) });
    expect(tooLong.status).to.equal(422);
    expect(tooLong.body.detail[0]).to.include({ type: 'value_error.poll.expires_at' });
    expect(tooLong.body.detail[0].loc).to.deep.equal(['body', 'poll', 'expires_at']);
    const beforePublication = await schedule(author.api_key, iso(3 * DAY), { options: ['x', 'z'], expires_at: iso(2 * DAY) });
    expect(beforePublication.status).to.equal(422);
  });
});
