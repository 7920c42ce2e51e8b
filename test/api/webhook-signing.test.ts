import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { HOUR } from '../../events/kernel/clock.ts';
import { ManualClock } from '../../events/kernel/clock.ts';
import { cursorOf } from '../../queries/cursor.ts';
import type { WebhookWorker } from '../../workers/webhooks/deliveries.ts';
import { defined } from '../helpers/defined.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import type { Receiver, Received, Scheme } from '../helpers/webhook-receiver.ts';
import { startReceiver, until, verifyWebhook } from '../helpers/webhook-receiver.ts';

// Deliveries are checked twice, by two receivers that share nothing with the service's signing
// code: the verifier of docs/WEBHOOKS.md (test/helpers/webhook-receiver.ts) for every scheme, and
// the `standardwebhooks` npm package for the Standard Webhooks scheme. The package checks the
// timestamp against the real clock, so the injected clock starts at the real time here.

type Agent = { agent_id: string; api_key: string; body: { webhook_secret: string } };

describe('api: webhook signing schemes, secret rotation and the delivery cursor', () => {
  let svc: TestService;
  let worker: WebhookWorker;
  let agent: Agent;
  let receiver: Receiver;
  const seconds = () => Math.floor(svc.clock.now().getTime() / 1000);

  const patch = (body: unknown) => svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body });
  const rotate = (body: unknown = {}) => svc.req('POST', `/api/protocol/agents/${agent.agent_id}/webhook/regenerate-secret`, { apiKey: agent.api_key, body });

  /** Fires an svc_ping and returns the request that delivered it (its first attempt). */
  async function ping(): Promise<Received> {
    const fired = await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: agent.api_key });
    expect(fired.body.webhook_delivery).to.equal('queued');
    return until(async () => {
      await worker.drain();
      await worker.sweep();
      return receiver.received.find((r) => (JSON.parse(r.raw.toString('utf8')) as { data: { ping_id?: string } }).data.ping_id === fired.body.ping_id);
    }, 'the svc_ping delivery');
  }

  const standardVerifies = (secret: string, r: Received) => {
    try {
      new Webhook(secret).verify(r.raw.toString('utf8'), r.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };

  /**
   * A receiver that is nothing but the `standardwebhooks` package: 204 when `verify` passes, 401
   * when it throws. The package reads the time from Date.now(); the receiver's clock is the test's
   * injected clock, so Date.now answers it for the length of the (synchronous) call.
   */
  async function standardReceiver(secret: string) {
    const verdicts: Array<{ ok: boolean; id: string }> = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let ok = true;
        const realNow = Date.now;
        Date.now = () => svc.clock.now().getTime();
        try {
          new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        } catch {
          ok = false;
        } finally {
          Date.now = realNow;
        }
        verdicts.push({ ok, id: String(req.headers['webhook-id']) });
        res.writeHead(ok ? 204 : 401).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/standard`,
      verdicts,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  /** Fires an svc_ping and waits for its delivery to finish; returns the delivery's read-model document. */
  async function delivered() {
    const fired = await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: agent.api_key });
    return until(async () => {
      await worker.drain();
      await worker.sweep();
      const docs = await svc.running.services.store.collection('webhook_deliveries').find({ agent_id: agent.agent_id });
      return docs.find((d) => String(d.inbox_id).includes(fired.body.ping_id) && d.attempts === 1);
    }, 'the delivery');
  }

  before(async () => {
    svc = await startTestService({ WEBHOOK_ALLOW_LOOPBACK: '1' }, { clock: new ManualClock(new Date()) });
    worker = defined(svc.running.workers, 'the workers').webhooks;
    agent = (await svc.register()) as Agent;
    receiver = await startReceiver({ secret: agent.body.webhook_secret, now: () => svc.clock.now().getTime() });
    expect((await patch({ webhook_url: receiver.url })).status).to.equal(200);
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  it('signs with each scheme as docs/WEBHOOKS.md says: the docs receiver verifies all four, standardwebhooks verifies standard_webhooks', async () => {
    const secret = agent.body.webhook_secret;
    for (const scheme of ['delivery_timestamped', 'standard_webhooks', 'timestamped', 'body'] as Scheme[]) {
      const r = await patch({ signature_scheme: scheme });
      expect(r.body.signature_scheme, scheme).to.equal(scheme);
      receiver.scheme = scheme;
      const got = await ping();
      expect(got.verified, scheme).to.equal(true);
      expect(verifyWebhook(scheme, [secret], got.headers, got.raw, seconds()), scheme).to.equal(true);
      expect(verifyWebhook(scheme, ['whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='], got.headers, got.raw, seconds()), `${scheme} wrong secret`).to.equal(
        false,
      );
      const tampered = Buffer.from(got.raw.toString('utf8').replace('svc_ping', 'svc_pinG'));
      expect(verifyWebhook(scheme, [secret], got.headers, tampered, seconds()), `${scheme} tampered`).to.equal(false);
      if (scheme === 'standard_webhooks') {
        expect(got.headers['webhook-id']).to.equal(got.headers['x-svc-delivery']);
        expect(got.headers['webhook-timestamp']).to.equal(String(seconds()));
        expect(got.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
        expect(standardVerifies(secret, got)).to.equal(true);
        expect(standardVerifies(secret, { ...got, raw: tampered })).to.equal(false);
      }
      if (scheme === 'delivery_timestamped') {
        // The delivery id is signed: the same request under another X-Svc-Delivery does not verify.
        const other = { ...got.headers, 'x-svc-delivery': 'dlv_another' };
        expect(verifyWebhook(scheme, [secret], other, got.raw, seconds())).to.equal(false);
        expect(verifyWebhook('timestamped', [secret], got.headers, got.raw, seconds())).to.equal(false);
      }
    }
  });

  it('carries the inbox cursor of the delivered entry (cursorOf the inbox document) in X-Svc-Cursor and the body', async () => {
    receiver.scheme = 'delivery_timestamped';
    expect((await patch({ signature_scheme: 'delivery_timestamped' })).status).to.equal(200);
    const got = await ping();
    const body = JSON.parse(got.raw.toString('utf8')) as { cursor: string; data: { ping_id: string } };
    const entry = defined(
      await svc.running.services.store.collection('inbox_events').findOne({ agent_id: agent.agent_id, 'payload.ping_id': body.data.ping_id }),
      'the inbox entry',
    );
    expect(got.headers['x-svc-cursor']).to.equal(cursorOf(entry));
    expect(body.cursor).to.equal(cursorOf(entry));
  });

  it('signs with both secrets for 24 h after a rotation (standardwebhooks verifies with either), then with the new one only', async () => {
    const old = agent.body.webhook_secret;
    await patch({ signature_scheme: 'standard_webhooks' });
    receiver.scheme = 'standard_webhooks';
    const rotated = await rotate();
    expect(rotated.status).to.equal(200);
    const fresh: string = rotated.body.webhook_secret;
    expect(fresh).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.body.previous_secret_valid_until).to.equal(new Date(svc.clock.now().getTime() + 24 * HOUR).toISOString());
    const cfg = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key });
    expect(cfg.body.previous_secret_valid_until).to.equal(rotated.body.previous_secret_valid_until);
    receiver.secrets = [fresh];

    // During the overlap: two signatures in every scheme's header, each secret verifies alone.
    const std = await ping();
    expect(String(std.headers['webhook-signature']).split(' ')).to.have.length(2);
    expect(standardVerifies(fresh, std), 'standardwebhooks, new secret').to.equal(true);
    expect(standardVerifies(old, std), 'standardwebhooks, previous secret').to.equal(true);
    expect(verifyWebhook('standard_webhooks', [old], std.headers, std.raw, seconds())).to.equal(true);
    expect(verifyWebhook('standard_webhooks', [fresh], std.headers, std.raw, seconds())).to.equal(true);

    for (const scheme of ['delivery_timestamped', 'timestamped', 'body'] as Scheme[]) {
      await patch({ signature_scheme: scheme });
      receiver.scheme = scheme;
      const got = await ping();
      expect(verifyWebhook(scheme, [fresh], got.headers, got.raw, seconds()), `${scheme} new`).to.equal(true);
      expect(verifyWebhook(scheme, [old], got.headers, got.raw, seconds()), `${scheme} previous`).to.equal(true);
      if (scheme === 'delivery_timestamped') expect(String(got.headers['x-svc-signature']).split(',')).to.have.length(2);
      // The earlier schemes keep one signature in X-Svc-Signature, the current secret's, as their receivers expect.
      else {
        expect(String(got.headers['x-svc-signature'])).to.match(/^sha256=[0-9a-f]{64}$/);
        expect(verifyWebhook(scheme, [old], { ...got.headers, 'x-svc-signature-previous': undefined }, got.raw, seconds())).to.equal(false);
        expect(got.headers['x-svc-signature-previous']).to.match(/^sha256=[0-9a-f]{64}$/);
      }
    }

    // Past the overlap (the injected clock): one signature, the previous secret no longer verifies.
    svc.clock.advance(24 * HOUR);
    for (const scheme of ['standard_webhooks', 'delivery_timestamped', 'timestamped'] as Scheme[]) {
      await patch({ signature_scheme: scheme });
      receiver.scheme = scheme;
      const got = await ping();
      expect(verifyWebhook(scheme, [fresh], got.headers, got.raw, seconds()), `${scheme} new, after`).to.equal(true);
      expect(verifyWebhook(scheme, [old], got.headers, got.raw, seconds()), `${scheme} previous, after`).to.equal(false);
      expect(got.headers).to.not.have.property('x-svc-signature-previous');
      if (scheme === 'standard_webhooks') expect(String(got.headers['webhook-signature']).split(' ')).to.have.length(1);
    }
    const after = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key });
    expect(after.body.previous_secret_valid_until).to.equal(null);
    agent.body.webhook_secret = fresh;
  });

  it('is delivered (2xx) to receivers that are only the standardwebhooks package, with the previous and with the new secret during a rotation', async () => {
    const old = agent.body.webhook_secret;
    const withOld = await standardReceiver(old);
    try {
      expect((await patch({ webhook_url: withOld.url, signature_scheme: 'standard_webhooks' })).status).to.equal(200);
      expect(await delivered()).to.include({ status: 'delivered', last_status_code: 204 });
      const rotated = await rotate();
      const withNew = await standardReceiver(rotated.body.webhook_secret);
      try {
        // Within the overlap: a receiver still holding the previous secret and one already moved to the new one both accept.
        expect(await delivered()).to.include({ status: 'delivered', last_status_code: 204 });
        expect((await patch({ webhook_url: withNew.url })).status).to.equal(200);
        expect(await delivered()).to.include({ status: 'delivered', last_status_code: 204 });
        // After the overlap the previous secret no longer verifies.
        svc.clock.advance(24 * HOUR);
        expect((await patch({ webhook_url: withOld.url })).status).to.equal(200);
        const late = await delivered();
        expect(late.last_status_code).to.equal(401);
      } finally {
        await withNew.close();
      }
      agent.body.webhook_secret = rotated.body.webhook_secret;
    } finally {
      await withOld.close();
      await patch({ webhook_url: receiver.url });
    }
  });

  it('stops the previous secret at once with keep_previous_seconds 0, and refuses a value out of range with 422', async () => {
    const old = agent.body.webhook_secret;
    expect((await rotate({ keep_previous_seconds: 86_401 })).status).to.equal(422);
    const rotated = await rotate({ keep_previous_seconds: 0 });
    expect(rotated.body.previous_secret_valid_until).to.equal(null);
    receiver.secrets = [rotated.body.webhook_secret];
    await patch({ signature_scheme: 'delivery_timestamped' });
    receiver.scheme = 'delivery_timestamped';
    const got = await ping();
    expect(String(got.headers['x-svc-signature']).split(',')).to.have.length(1);
    expect(verifyWebhook('delivery_timestamped', [old], got.headers, got.raw, seconds())).to.equal(false);
    expect(verifyWebhook('delivery_timestamped', [rotated.body.webhook_secret], got.headers, got.raw, seconds())).to.equal(true);
  });

  it('records rotations and scheme choices as events on the agent stream', async () => {
    const events = await svc.running.services.log.readStream(`agent-${agent.agent_id}`);
    const rotations = events.filter((e) => e.type === 'WebhookSecretRotated');
    expect(rotations).to.have.length(3);
    expect(events.filter((e) => e.type === 'WebhookConfigured').map((e) => (e.data as { signature_scheme: string }).signature_scheme)).to.include.members([
      'delivery_timestamped',
      'standard_webhooks',
      'timestamped',
      'body',
    ]);
  });
});
