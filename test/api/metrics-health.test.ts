import { expect } from 'chai';
import { defined } from '../helpers/defined.ts';
import { randomUUID } from 'node:crypto';
import { agentHeartbeatReceived } from '../fixtures/events.ts';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { startReceiver, until } from '../helpers/webhook-receiver.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

describe('metrics and health', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(120_000);
    svc = await startTestService({ METRICS_TOKEN: TOKEN, READY_MAX_LAG_EVENTS: '2', WEBHOOK_ALLOW_LOOPBACK: '1' });
  });
  after(async () => svc?.stop());

  const scrape = async () => {
    const r = await svc.req('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status, r.text).to.equal(200);
    expect(String(r.headers['content-type'])).to.match(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(r.text);
  };

  /** Appends heartbeats straight to the log (no read-your-writes wait): the paused projector does not see them. */
  const appendHeartbeats = async (n: number) => {
    const { bus, clock } = svc.running.services;
    let position = 0;
    for (let i = 0; i < n; i++) {
      const r = await bus.appendRaw(`presence-test-${randomUUID()}`, [agentHeartbeatReceived()], 'no_stream', {
        commandId: randomUUID(),
        actor: 'test',
        requestId: null,
        now: clock.now(),
      });
      position = r.position;
    }
    return position;
  };

  it('refuses /metrics without the METRICS_TOKEN bearer (401) and with a wrong one', async () => {
    const none = await svc.req('GET', '/metrics');
    expect(none.status).to.equal(401);
    expect(none.body.code).to.equal('unauthorized');
    const wrong = await svc.req('GET', '/metrics', { headers: { authorization: 'Bearer not-the-token-at-all' } });
    expect(wrong.status).to.equal(401);
  });

  it('serves /metrics in the Prometheus text format, every family known to prom-client, requests labelled by route template', async () => {
    const agent = await svc.register();
    const post = await svc.req('POST', '/api/feed/posts', { apiKey: agent.api_key, body: { title: 'Metrics', body: 'a post', post_type: 'signal_found' } });
    expect(post.status, post.text).to.equal(200);
    const id = post.body.post_id as string;
    expect((await svc.req('GET', `/api/feed/posts/${id}/comments`)).status).to.equal(200);
    expect((await svc.req('GET', '/no/such/route/xyz')).status).to.equal(404);

    const r = await svc.req('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    const families = parsePrometheusText(r.text);
    const known = (await svc.running.services.metrics.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect([...families.keys()].sort()).to.deep.equal(known);
    for (const name of [
      'http_request_duration_seconds',
      'event_log_append_duration_seconds',
      'event_log_group_commit_appends',
      'projection_lag_events',
      'projection_lag_seconds',
      'webhook_deliveries_total',
      'agenda_jobs',
      'agenda_job_failures_total',
      'worker_backlog',
      'credits_spent_total',
    ]) {
      expect(families.has(name), name).to.equal(true);
    }
    // The template, never the raw URL: no label anywhere holds the post id or the unknown path.
    expect(sampleValue(families, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/feed/posts/:post_id/comments', status: '200' })).to.equal(
      1,
    );
    expect(sampleValue(families, 'http_request_duration_seconds_count', { method: 'POST', route: '/api/feed/posts', status: '200' })).to.equal(1);
    expect(sampleValue(families, 'http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })).to.be.at.least(1);
    expect(r.text).to.not.contain(id);
    expect(r.text).to.not.contain('/no/such/route');
    expect(sampleValue(families, 'event_log_append_duration_seconds_count', { outcome: 'written' })).to.be.at.least(2);
    expect(sampleValue(families, 'event_log_group_commit_appends_count')).to.be.at.least(1);
    expect(sampleValue(families, 'credits_spent_total', { action: 'post' })).to.be.greaterThan(0);
    expect(sampleValue(families, 'agenda_jobs', { state: 'queued' })).to.be.a('number');
    for (const worker of ['contract_mails', 'mail']) expect(sampleValue(families, 'worker_backlog', { worker }), worker).to.be.a('number');
  });

  it('moves the lag metric as events are appended to a paused projector, and back to 0 when it resumes', async function () {
    this.timeout(120_000);
    const runner = defined(svc.running.services.projector, 'the projection runner');
    const before = await scrape();
    expect(sampleValue(before, 'projection_lag_events', { projection: 'presence' })).to.equal(0);
    expect(sampleValue(before, 'projection_lag_seconds', { projection: 'presence' })).to.equal(0);
    await runner.pause();
    try {
      await appendHeartbeats(3);
      const paused = await scrape();
      expect(sampleValue(paused, 'projection_lag_events', { projection: 'presence' })).to.equal(3);
      // Each append moves it: two more, five behind.
      await appendHeartbeats(2);
      const more = await scrape();
      expect(sampleValue(more, 'projection_lag_events', { projection: 'presence' })).to.equal(5);
      svc.clock.advance(90_000);
      const later = await scrape();
      expect(sampleValue(later, 'projection_lag_events', { projection: 'presence' })).to.equal(5);
      expect(sampleValue(later, 'projection_lag_seconds', { projection: 'presence' })).to.be.at.least(90);
      const head = sampleValue(later, 'event_log_head_position');
      expect(head).to.be.a('number');

      const health = await svc.req('GET', '/api/health');
      expect(health.status).to.equal(200);
      expect(health.body.lag_events).to.equal(5);
      expect(health.body.head_position).to.equal(head);
      const ready = await svc.req('GET', '/health/ready');
      expect(ready.status).to.equal(503);
      expect(ready.body.status).to.equal('not_ready');
      expect(ready.body.checks.projections).to.equal('behind');
      expect(ready.body.behind).to.include('presence');
      expect((await svc.req('GET', '/health/live')).status).to.equal(200);
    } finally {
      runner.resume();
    }
    await runner.waitFor(await svc.running.services.log.headPosition());
    const after = await scrape();
    expect(sampleValue(after, 'projection_lag_events', { projection: 'presence' })).to.equal(0);
    expect(sampleValue(after, 'projection_lag_seconds', { projection: 'presence' })).to.equal(0);
    const ready = await svc.req('GET', '/health/ready');
    expect(ready.status).to.equal(200);
    expect(ready.body).to.include({ status: 'ready', lag_events: 0 });
    expect(ready.body.checks).to.deep.equal({ event_log: 'ok', read_store: 'ok', projections: 'ok' });
  });

  it('counts webhook delivery outcomes, credits spent and refunded per action, and failed Agenda jobs', async function () {
    this.timeout(120_000);
    const workers = defined(svc.running.workers, 'the workers');
    const agent = await svc.register();
    const receiver = await startReceiver({ secret: agent.body.webhook_secret as string, now: () => svc.clock.now().getTime() });
    try {
      const hook = await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: receiver.url } });
      expect(hook.status, hook.text).to.equal(200);
      expect((await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: agent.api_key })).status).to.equal(200);
      await until(async () => {
        await workers.webhooks.drain();
        await workers.webhooks.sweep();
        return (sampleValue(await scrape(), 'webhook_deliveries_total', { outcome: 'delivered' }) ?? 0) >= 1 ? true : null;
      }, 'the delivered test delivery counted');
      expect(receiver.received.length).to.be.at.least(1);
    } finally {
      await receiver.close();
    }

    const spentBefore = sampleValue(await scrape(), 'credits_spent_total', { action: 'schedule_post' }) ?? 0;
    const scheduled = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: agent.api_key,
      body: {
        title: 'Later',
        body: 'scheduled, then cancelled',
        post_type: 'signal_found',
        publish_at: new Date(svc.clock.now().getTime() + 3_600_000).toISOString(),
      },
    });
    expect(scheduled.status, scheduled.text).to.equal(200);
    const cancelled = await svc.req('DELETE', `/api/feed/posts/scheduled/${scheduled.body.post_id}`, { apiKey: agent.api_key });
    expect(cancelled.status, cancelled.text).to.equal(200);
    const money = await scrape();
    expect(sampleValue(money, 'credits_spent_total', { action: 'schedule_post' })).to.be.closeTo(spentBefore + 0.1, 1e-9);
    expect(sampleValue(money, 'credits_refunded_total', { action: 'schedule_post_refund' })).to.be.closeTo(0.1, 1e-9);

    // A job that fails is counted under its name once Agenda has run it.
    workers.agenda.define('metrics-test-failing-job', () => Promise.reject(new Error('fails on purpose')));
    await workers.agenda.now('metrics-test-failing-job');
    await until(
      async () => ((sampleValue(await scrape(), 'agenda_job_failures_total', { job: 'metrics-test-failing-job' }) ?? 0) >= 1 ? true : null),
      'the failed job counted',
    );
  });

  it('answers /health/live and /health/ready beside /health', async () => {
    const live = await svc.req('GET', '/health/live');
    expect(live.status).to.equal(200);
    expect(live.body.status).to.equal('ok');
    expect((await svc.req('GET', '/health')).body.status).to.equal('ok');
  });
});

describe('metrics without METRICS_TOKEN', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(120_000);
    svc = await startTestService();
  });
  after(async () => svc?.stop());

  it('is off: /metrics answers 404', async () => {
    const r = await svc.req('GET', '/metrics');
    expect(r.status).to.equal(404);
    expect(r.body.code).to.equal('route_not_found');
  });
});
