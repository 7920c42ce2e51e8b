import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { HOUR } from '../../events/kernel/clock.ts';
import type { WebhookWorker } from '../../workers/webhooks/deliveries.ts';
import { defined } from '../helpers/defined.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { until, verifyWebhook } from '../helpers/webhook-receiver.ts';

/**
 * A receiver written only from the interface document (/work/shared/spec/interface-spec.md,
 * "Webhook delivery", variant B): headers X-Svc-Event, X-Svc-Signature, X-Svc-Timestamp,
 * X-Svc-Agent-Id; the signature is the hex HMAC-SHA256 over `<timestamp>.<raw body>` with the
 * webhook secret, optionally prefixed `sha256=`, compared in constant time. It knows nothing of
 * the service's other schemes or headers.
 */
function interfaceVerifies(secret: string, headers: http.IncomingHttpHeaders, raw: Buffer): boolean {
  const timestamp = headers['x-svc-timestamp'];
  const signature = headers['x-svc-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  if (typeof headers['x-svc-event'] !== 'string' || typeof headers['x-svc-agent-id'] !== 'string') return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest();
  const given = Buffer.from(signature.replace(/^sha256=/, ''), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface Got {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
}

describe('api: webhooks sign with variant B by default (a receiver written from the interface document)', () => {
  let svc: TestService;
  let server: http.Server;
  let url: string;
  const got: Got[] = [];

  const worker = (): WebhookWorker => defined(svc.running.workers, 'the workers').webhooks;
  const ping = async (agent: { agent_id: string; api_key: string }): Promise<Got> => {
    const r = await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: agent.api_key });
    expect(r.status, r.text).to.equal(200);
    return until(async () => {
      await worker().drain();
      await worker().sweep();
      return got.find((g) => g.headers['x-svc-agent-id'] === agent.agent_id && JSON.parse(g.raw.toString('utf8')).data?.ping_id === r.body.ping_id);
    }, 'the ping delivery');
  };
  const config = async (agent: { agent_id: string; api_key: string }) =>
    (await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key })).body;

  before(async () => {
    svc = await startTestService({ WEBHOOK_ALLOW_LOOPBACK: '1' });
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ headers: req.headers, raw: Buffer.concat(chunks) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    svc.clock.advance(HOUR);
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await svc.stop();
  });

  it('a webhook given at registration signs with variant B: the interface receiver verifies it', async () => {
    const agent = await svc.register({ webhook_url: url });
    expect((await config(agent)).signature_scheme).to.equal('timestamped');
    const g = await ping(agent);
    expect(interfaceVerifies(agent.body.webhook_secret as string, g.headers, g.raw)).to.equal(true);
    expect(interfaceVerifies('whsec_not_the_secret', g.headers, g.raw)).to.equal(false);
    expect(g.headers['x-svc-event']).to.equal('svc_ping');
  });

  it('a webhook configured with PATCH .../webhook or PATCH /api/protocol/me signs with variant B', async () => {
    for (const how of ['webhook', 'me'] as const) {
      const agent = await svc.register();
      expect((await config(agent)).signature_scheme, how).to.equal('timestamped');
      const r =
        how === 'webhook'
          ? await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: url } })
          : await svc.req('PATCH', '/api/protocol/me', { apiKey: agent.api_key, body: { webhook_url: url } });
      expect(r.status, r.text).to.equal(200);
      expect((await config(agent)).signature_scheme, how).to.equal('timestamped');
      const g = await ping(agent);
      expect(interfaceVerifies(agent.body.webhook_secret as string, g.headers, g.raw), how).to.equal(true);
    }
  });

  it('a webhook that signs with another scheme keeps it when configured again; once its URL is removed, a new one gets variant B', async () => {
    const agent = await svc.register();
    const patch = (body: unknown) => svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body });
    expect((await patch({ webhook_url: url, signature_scheme: 'delivery_timestamped' })).status).to.equal(200);
    expect((await patch({ events: ['svc_ping', 'new_dm'] })).body.signature_scheme).to.equal('delivery_timestamped');
    expect((await patch({ webhook_url: `${url}?again=1` })).body.signature_scheme).to.equal('delivery_timestamped');
    const secret = agent.body.webhook_secret as string;
    const kept = await ping(agent);
    const now = Math.floor(svc.clock.now().getTime() / 1000);
    expect(verifyWebhook('delivery_timestamped', [secret], kept.headers, kept.raw, now)).to.equal(true);
    expect(interfaceVerifies(secret, kept.headers, kept.raw)).to.equal(false);

    expect((await patch({ webhook_url: null })).status).to.equal(200);
    expect((await config(agent)).signature_scheme).to.equal('timestamped');
    expect((await patch({ webhook_url: url })).body.signature_scheme).to.equal('timestamped');
    const fresh = await ping(agent);
    expect(interfaceVerifies(secret, fresh.headers, fresh.raw)).to.equal(true);
  });
});
