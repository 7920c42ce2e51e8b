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

// The SSRF corpus (issue 21, defect 6): every non-public address form and local name is refused
// when a webhook URL is set (through each of the three ways of setting one) and again at connect
// time, and a canary listening on loopback never sees a connection.

/** Non-public addresses as a resolver returns them (and as URL literals). */
const NON_PUBLIC_V4 = [
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '100.127.255.254',
  '127.0.0.1',
  '127.1.2.3',
  '127.255.255.254',
  '169.254.0.1',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.254',
  '192.0.0.1',
  '192.0.0.8',
  '192.0.0.170',
  '192.0.2.1',
  '192.0.2.255',
  '192.31.196.1',
  '192.52.193.1',
  '192.88.99.1',
  '192.168.0.1',
  '192.168.255.254',
  '192.175.48.1',
  '198.18.0.1',
  '198.19.255.254',
  '198.51.100.1',
  '198.51.100.254',
  '203.0.113.1',
  '203.0.113.254',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.254',
  '255.255.255.255',
];
const NON_PUBLIC_V6 = [
  '::',
  '::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:192.168.1.1',
  '::ffff:198.51.100.7',
  '::ffff:0:127.0.0.1',
  '::127.0.0.1',
  '::10.0.0.1',
  '::8.8.8.8',
  '64:ff9b::127.0.0.1',
  '64:ff9b::8.8.8.8',
  '64:ff9b:1::a00:1',
  '2002:7f00:1::1',
  '2002:a00:1::1',
  '2002:c0a8:101::1',
  '2002:808:808::1',
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '2001:db8::1',
  '2001:db8:ffff::1',
  '3fff::1',
  '2001:2::1',
  '2001:10::1',
  '2001:20::1',
  '2620:4f:8000::1',
  '100::1',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'febf::1',
  'fec0::1',
  'ff02::1',
  'ff05::2',
  '5f00::1',
  '4000::1',
];
/** Other spellings of non-public IPv4 addresses in a URL (the URL parser reads them as inet_aton does). */
const ODD_V4_HOSTS = ['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '0x7f.1', '017700000001', '10.1', '0xa9fea9fe', '0', '0x0.0'];
/** Names local by their form alone (no resolution needed). */
const LOCAL_NAMES = [
  'localhost',
  'localhost.',
  'LOCALHOST',
  'api.localhost',
  'printer.local',
  'metadata.google.internal',
  'router.home.arpa',
  'host.localdomain',
  'vm',
  'vm.',
  'intranet',
];
/** Public addresses that must stay accepted. */
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '192.0.3.1',
  '198.51.99.1',
  '198.20.0.1',
  '203.0.114.1',
  '100.63.255.255',
  '100.128.0.1',
  '172.15.255.255',
  '172.32.0.1',
  '192.167.255.255',
  '192.169.0.1',
  '169.253.255.255',
  '223.255.255.254',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001::1',
  '2001:200::1',
  '::ffff:8.8.8.8',
];

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
    expect(cfg.body).to.include({ webhook_url: 'https://hooks.example.com/a', signature_scheme: 'delivery_timestamped', status: 'active' });
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
