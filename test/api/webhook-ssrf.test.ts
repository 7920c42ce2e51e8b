import { expect } from 'chai';
import type { Resolver } from '../../commands/webhooks/target.ts';
import { systemResolver } from '../../commands/webhooks/target.ts';
import { HOUR } from '../../events/kernel/clock.ts';
import type { WebhookWorker } from '../../workers/webhooks/deliveries.ts';
import { sendWebhook } from '../../workers/webhooks/http.ts';
import { defined } from '../helpers/defined.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { startCanary, until } from '../helpers/webhook-receiver.ts';
import { LOCAL_NAMES, NON_PUBLIC_V4, NON_PUBLIC_V6, ODD_V4_HOSTS, PUBLIC } from '../helpers/ssrf-corpus.ts';

// The SSRF corpus (issue 21, defect 6): every non-public address form and local name is refused
// when a webhook URL is set (through each of the three ways of setting one) and again at connect
// time, and a canary listening on loopback never sees a connection.

const hostOf = (a: string) => (a.includes(':') ? `[${a}]` : a);
const family = (a: string) => (a.includes(':') ? 6 : 4);

type Agent = { agent_id: string; api_key: string };

describe('api: SSRF corpus (configuration and connect time, no loopback allowance)', () => {
  let svc: TestService;
  let worker: WebhookWorker;
  let agent: Agent;
  let canary: Awaited<ReturnType<typeof startCanary>>;
  /** What names resolve to, by name (the services' resolver at configuration time). */
  const dns = new Map<string, string[]>();
  const resolver: Resolver = async (host) => {
    const answer = dns.get(host);
    if (!answer) throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
    return answer.map((address) => ({ address, family: family(address) }));
  };
  let nonPublicUrls: string[];

  before(async () => {
    svc = await startTestService();
    svc.running.services.resolver = resolver;
    worker = defined(svc.running.workers, 'the workers').webhooks;
    canary = await startCanary();
    agent = (await svc.register()) as Agent;
    svc.clock.advance(HOUR);
    const literals = [...NON_PUBLIC_V4, ...NON_PUBLIC_V6].map((a) => `https://${hostOf(a)}:${canary.port}/hook`);
    const odd = ODD_V4_HOSTS.map((h) => `https://${h}:${canary.port}/hook`);
    const local = LOCAL_NAMES.map((n) => `https://${n}:${canary.port}/hook`);
    // Names whose every answer, or one answer among public ones, is non-public.
    const resolving = [...NON_PUBLIC_V4, ...NON_PUBLIC_V6].map((a, i) => {
      const name = `n${i}.rebind.example.test`;
      dns.set(name, i % 3 === 0 ? ['93.184.216.34', a] : [a]);
      return `https://${name}:${canary.port}/hook`;
    });
    nonPublicUrls = [...literals, ...odd, ...local, ...resolving];
  });
  after(async () => {
    await canary.close();
    await svc.stop();
  });

  it('has a corpus of at least 100 non-public addresses and names', () => {
    expect(nonPublicUrls.length).to.be.at.least(100);
  });

  it('refuses every non-public target with 422 through PATCH .../webhook, PATCH /api/protocol/me and registration: 0 accepted', async () => {
    const accepted: string[] = [];
    for (const url of nonPublicUrls) {
      const hook = await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: url } });
      const me = await svc.req('PATCH', '/api/protocol/me', { apiKey: agent.api_key, body: { webhook_url: url } });
      for (const [path, r] of [
        ['PATCH .../webhook', hook],
        ['PATCH /me', me],
      ] as const) {
        if (r.status !== 422) accepted.push(`${path} ${url} -> ${r.status}`);
        else expect(r.body.detail[0].loc, url).to.deep.equal(['body', 'webhook_url']);
      }
    }
    // Registration: every URL (each would-be registration is refused before anything is written).
    for (const [i, url] of nonPublicUrls.entries()) {
      const r = await svc.req('POST', '/api/protocol/register', {
        body: { name: `SSRF ${i}`, capabilities: ['lead-gen'], owner_name: 'Owner', owner_email: `ssrf${i}.${process.pid}@example.com`, webhook_url: url },
      });
      if (r.status !== 422) accepted.push(`register ${url} -> ${r.status}`);
    }
    expect(accepted).to.deep.equal([]);
    const cfg = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key });
    expect(cfg.body.webhook_url).to.equal(null);
    expect(canary.hits()).to.equal(0);
  });

  it('accepts public addresses (192.0.3.1 among them) and names that resolve only to public addresses', async () => {
    dns.set('hooks.public.example.test', ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    for (const url of [...PUBLIC.map((a) => `https://${hostOf(a)}/hook`), 'https://hooks.public.example.test/hook', 'https://not-yet.example.test/hook']) {
      const r = await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: url } });
      expect(r.status, url).to.equal(200);
      const me = await svc.req('PATCH', '/api/protocol/me', { apiKey: agent.api_key, body: { webhook_url: url } });
      expect(me.status, `PATCH /me ${url}`).to.equal(200);
    }
    const reg = await svc.register({ webhook_url: 'https://192.0.3.1/hook' });
    expect(reg.agent_id).to.match(/^agt_/);
    expect((await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: null } })).status).to.equal(
      200,
    );
  });

  it('refuses at connect time every non-public answer for a name accepted at configuration (rebinding): 0 canary connections', async () => {
    const url = `https://hooks.rebinding.example.test:${canary.port}/hook`;
    dns.set('hooks.rebinding.example.test', ['93.184.216.34']);
    expect((await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: url } })).status).to.equal(
      200,
    );
    const answers = [...NON_PUBLIC_V4, ...NON_PUBLIC_V6];
    const outcomes: string[] = [];
    try {
      for (const address of answers) {
        worker.resolver = async () => [{ address, family: family(address) }];
        const fired = await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: agent.api_key });
        expect(fired.body.webhook_delivery).to.equal('queued');
        const d = await until(async () => {
          await worker.drain();
          await worker.sweep();
          const docs = await svc.running.services.store.collection('webhook_deliveries').find({ agent_id: agent.agent_id });
          return docs.find((x) => String(x.inbox_id).includes(fired.body.ping_id) && x.status !== 'pending');
        }, `the attempt for ${address}`);
        if (!String(d.last_error).includes('non-public address')) outcomes.push(`${address}: ${String(d.status)} ${String(d.last_error)}`);
      }
    } finally {
      worker.resolver = systemResolver;
    }
    expect(outcomes).to.deep.equal([]);
    const health = await svc.req('GET', '/api/agent/webhooks/health', { apiKey: agent.api_key });
    expect(health.body.attempts.slice(0, 50).every((x: { outcome: string }) => x.outcome === 'refused')).to.equal(true);
    // Each attempt was refused before it connected, and recorded after: nothing is left to reach the canary.
    expect(canary.hits()).to.equal(0);
  });

  it('refuses at connect time every non-public literal and local name, with the system resolver too (localhost., vm): 0 canary connections', async () => {
    const urls = [
      ...[...NON_PUBLIC_V4, ...NON_PUBLIC_V6].map((a) => `https://${hostOf(a)}:${canary.port}/hook`),
      ...ODD_V4_HOSTS.map((h) => `https://${h}:${canary.port}/hook`),
      ...LOCAL_NAMES.map((n) => `https://${n}:${canary.port}/hook`),
      ...LOCAL_NAMES.map((n) => `http://${n}:${canary.port}/hook`),
    ];
    const connected: string[] = [];
    for (const url of urls) {
      const r = await sendWebhook(
        {
          url,
          body: '{}',
          event: 'svc_ping',
          agentId: agent.agent_id,
          deliveryId: 'dlv_ssrf',
          attempt: 1,
          secrets: ['whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='],
          scheme: 'delivery_timestamped',
          timestamp: 0,
          cursor: null,
        },
        { resolver: systemResolver, allowLoopback: false, timeoutMs: 2000 },
      );
      if (r.outcome !== 'refused') connected.push(`${url}: ${r.outcome} ${String(r.error)}`);
    }
    expect(connected).to.deep.equal([]);
    expect(canary.hits()).to.equal(0);
  });
});

describe('api: every way of setting a webhook URL resolves it at configuration (issue 22, item 7)', () => {
  let svc: TestService;
  let agent: Agent;

  before(async () => {
    svc = await startTestService();
    svc.running.services.resolver = async (host) => {
      if (host === 'hooks.loopback.example.test') return [{ address: '127.0.0.1', family: 4 }];
      throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
    };
    agent = (await svc.register()) as Agent;
  });
  after(async () => {
    await svc.stop();
  });

  for (const url of ['https://hooks.loopback.example.test/hook', 'https://vm/hook']) {
    it(`refuses ${url} (it resolves to loopback) with 422 through registration, PATCH /api/protocol/me and PATCH .../webhook`, async () => {
      const reg = await svc.req('POST', '/api/protocol/register', {
        body: {
          name: 'Loopback',
          capabilities: ['lead-gen'],
          owner_name: 'Owner',
          owner_email: `loop.${url.length}.${process.pid}@example.com`,
          webhook_url: url,
        },
      });
      expect(reg.status, 'register').to.equal(422);
      expect(reg.body.detail[0].loc).to.deep.equal(['body', 'webhook_url']);
      const me = await svc.req('PATCH', '/api/protocol/me', { apiKey: agent.api_key, body: { webhook_url: url } });
      expect(me.status, 'PATCH /me').to.equal(422);
      expect(me.body.detail[0].loc).to.deep.equal(['body', 'webhook_url']);
      const hook = await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: url } });
      expect(hook.status, 'PATCH .../webhook').to.equal(422);
      const cfg = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key });
      expect(cfg.body.webhook_url).to.equal(null);
    });
  }

  it('configures a URL set by PATCH /api/protocol/me or at registration like PATCH .../webhook (scheme and filter kept)', async () => {
    svc.running.services.resolver = async () => [{ address: '93.184.216.34', family: 4 }];
    const reg = await svc.register({ webhook_url: 'https://hooks.example.com/a' });
    const cfg = await svc.req('GET', `/api/protocol/agents/${reg.agent_id}/webhook`, { apiKey: reg.api_key });
    expect(cfg.body).to.include({ webhook_url: 'https://hooks.example.com/a', signature_scheme: 'timestamped', status: 'active' });
    await svc.req('PATCH', `/api/protocol/agents/${reg.agent_id}/webhook`, {
      apiKey: reg.api_key,
      body: { events: ['new_dm'], signature_scheme: 'standard_webhooks' },
    });
    const me = await svc.req('PATCH', '/api/protocol/me', { apiKey: reg.api_key, body: { webhook_url: 'https://hooks.example.com/b', name: 'Renamed' } });
    expect(me.status).to.equal(200);
    expect(me.body.name).to.equal('Renamed');
    const after = await svc.req('GET', `/api/protocol/agents/${reg.agent_id}/webhook`, { apiKey: reg.api_key });
    expect(after.body).to.deep.include({ webhook_url: 'https://hooks.example.com/b', signature_scheme: 'standard_webhooks', events: ['new_dm'] });
  });
});
