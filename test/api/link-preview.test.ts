import { expect } from 'chai';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Resolver } from '../../commands/webhooks/target.ts';
import { fetchPageHtml, parsePreview } from '../../api/link-preview.ts';
import { bearer } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { LOCAL_NAMES, NON_PUBLIC_V4, NON_PUBLIC_V6, ODD_V4_HOSTS } from '../helpers/ssrf-corpus.ts';
import { signUp } from '../helpers/users.ts';
import { startCanary } from '../helpers/webhook-receiver.ts';

const hostOf = (a: string) => (a.includes(':') ? `[${a}]` : a);
const family = (a: string) => (a.includes(':') ? 6 : 4);

describe('api: link previews through the SSRF guard (POST /api/brew-circles/link-preview)', function () {
  this.timeout(300_000);

  describe('the webhook SSRF corpus, no loopback allowance', () => {
    let svc: TestService;
    let outbox: string;
    let user: User;
    let canary: Awaited<ReturnType<typeof startCanary>>;
    const dns = new Map<string, string[]>();
    const resolver: Resolver = async (host) => {
      const answer = dns.get(host);
      if (!answer) throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
      return answer.map((address) => ({ address, family: family(address) }));
    };

    before(async () => {
      ({ svc, outbox } = await startWithOutbox());
      svc.running.services.resolver = resolver;
      canary = await startCanary();
      user = await signUp(svc, outbox);
    });
    after(async () => {
      await canary.close();
      await stopWithOutbox(svc, outbox);
    });

    const preview = (url: string) => svc.req('POST', '/api/brew-circles/link-preview', { headers: bearer(user.access_token), body: { url } });

    it('needs a token and a valid http(s) URL (422 otherwise)', async () => {
      expect((await svc.req('POST', '/api/brew-circles/link-preview', { body: { url: 'https://example.com' } })).status).to.equal(401);
      for (const url of ['not a url', 'ftp://example.com/x', 'javascript:alert(1)', 'file:///etc/passwd', 'https://user:pw@example.com/', '']) {
        const r = await preview(url);
        expect(r.status, url).to.equal(422);
      }
      expect((await svc.req('POST', '/api/brew-circles/link-preview', { headers: bearer(user.access_token), body: {} })).status).to.equal(422);
    });

    it('refuses every non-public literal, spelling, local name and name resolving to one (http and https) with 422: 0 connections to a loopback canary', async () => {
      const resolving = [...NON_PUBLIC_V4, ...NON_PUBLIC_V6].map((a, i) => {
        const name = `n${i}.preview-rebind.example.test`;
        dns.set(name, i % 3 === 0 ? ['93.184.216.34', a] : [a]);
        return name;
      });
      const hosts = [...[...NON_PUBLIC_V4, ...NON_PUBLIC_V6].map(hostOf), ...ODD_V4_HOSTS, ...LOCAL_NAMES, ...resolving];
      expect(hosts.length).to.be.at.least(100);
      const accepted: string[] = [];
      for (const host of hosts)
        for (const scheme of ['http', 'https']) {
          const url = `${scheme}://${host}:${canary.port}/page`;
          const r = await preview(url);
          if (r.status !== 422) accepted.push(`${url} -> ${r.status}`);
          else expect(r.body.detail[0].loc, url).to.deep.equal(['body', 'url']);
        }
      expect(accepted).to.deep.equal([]);
      expect(canary.hits()).to.equal(0);
    });
  });

  describe('fetching and parsing (loopback allowed for the test page server)', () => {
    let svc: TestService;
    let outbox: string;
    let user: User;
    let server: http.Server;
    let base: string;
    let canary: Awaited<ReturnType<typeof startCanary>>;
    const dns = new Map<string, string[]>();

    before(async () => {
      ({ svc, outbox } = await startWithOutbox({ WEBHOOK_ALLOW_LOOPBACK: '1' }));
      svc.running.services.resolver = async (host) => {
        const answer = dns.get(host);
        if (!answer) throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
        return answer.map((address) => ({ address, family: family(address) }));
      };
      canary = await startCanary();
      dns.set('private.preview.example.test', ['10.0.0.7']);
      const page = `<!doctype html><html><head><title>Fallback &amp; title</title>
<meta property="og:title" content="Quarkworks raises a seed round">
<meta property="og:description" content="The round is led by &lt;Acme&gt; Ventures.">
<meta property="og:image" content="/cover.png">
<meta property="og:site_name" content="Quarkworks Blog">
</head><body>hello</body></html>`;
      server = http.createServer((req, res) => {
        const send = (status: number, headers: Record<string, string>, body = '') => {
          res.writeHead(status, headers);
          res.end(body);
        };
        switch (req.url ?? '') {
          case '/page':
            return send(200, { 'content-type': 'text/html; charset=utf-8' }, page);
          case '/title-only':
            return send(200, { 'content-type': 'text/html' }, '<html><head><title>Just a title</title></head></html>');
          case '/redirect':
            return send(302, { location: '/page' });
          case '/to-private':
            return send(302, { location: `http://private.preview.example.test:${canary.port}/page` });
          case '/to-loopback-name':
            return send(301, { location: `http://localhost:${canary.port}/page` });
          case '/to-file':
            return send(302, { location: 'file:///etc/passwd' });
          case '/loop':
            return send(302, { location: '/loop' });
          case '/plain':
            return send(200, { 'content-type': 'text/plain' }, 'og:title');
          case '/big':
            res.writeHead(200, { 'content-type': 'text/html' });
            res.write(page.replace('</head>', ''));
            for (let i = 0; i < 400; i++) res.write('x'.repeat(8192));
            return res.end('</body></html>');
          default:
            return send(404, { 'content-type': 'text/html' }, '<title>Not found</title>');
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      user = await signUp(svc, outbox);
    });
    after(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await canary.close();
      await stopWithOutbox(svc, outbox);
    });

    const preview = (url: string) => svc.req('POST', '/api/brew-circles/link-preview', { headers: bearer(user.access_token), body: { url } });

    it('answers the Open Graph tags, with the image made absolute', async () => {
      const r = await preview(`${base}/page`);
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.deep.equal({
        url: `${base}/page`,
        title: 'Quarkworks raises a seed round',
        description: 'The round is led by <Acme> Ventures.',
        image: `${base}/cover.png`,
        site_name: 'Quarkworks Blog',
      });
      const t = await preview(`${base}/title-only`);
      expect(t.body).to.include({ title: 'Just a title', description: null, image: null, site_name: null });
    });

    it('follows a redirect, re-checking the next hop: a hop to a private address or a local name is 422 with no connection', async () => {
      const r = await preview(`${base}/redirect`);
      expect(r.body).to.include({ url: `${base}/page`, title: 'Quarkworks raises a seed round' });
      for (const path of ['/to-private', '/to-loopback-name', '/to-file']) {
        const refused = await preview(`${base}${path}`);
        expect(refused.status, path).to.equal(422);
      }
      expect(canary.hits()).to.equal(0);
    });

    it('caps redirects and size; a page that is not HTML or does not answer 2xx has no tags', async () => {
      expect((await preview(`${base}/loop`)).body).to.include({ title: null });
      const big = await preview(`${base}/big`);
      expect(big.status).to.equal(200);
      expect(big.body.title).to.equal('Quarkworks raises a seed round');
      expect((await preview(`${base}/plain`)).body).to.include({ title: null });
      expect((await preview(`${base}/missing`)).body).to.include({ title: null });
      const unresolvable = await preview('https://does-not-resolve.example.test/x');
      expect(unresolvable.status).to.equal(200);
      expect(unresolvable.body).to.include({ title: null });
    });
  });
});

describe('link previews: the size and time caps (fetchPageHtml against a local server)', function () {
  this.timeout(60_000);
  let server: http.Server;
  let base: string;
  const closed: string[] = [];
  const closes = new EventEmitter();
  const noDns: Resolver = async (host) => {
    throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
  };

  before(async () => {
    server = http.createServer((req, res) => {
      res.on('close', () => {
        closed.push(req.url ?? '');
        closes.emit('close');
      });
      if (req.url === '/endless') {
        // Writes for as long as the reader reads: only the size cap ends this fetch.
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<html><head><title>Endless</title></head><body>');
        const more = () => {
          while (!res.destroyed && res.write('x'.repeat(16_384)));
          if (!res.destroyed) res.once('drain', more);
        };
        more();
        return;
      }
      // '/silent': headers never come; only the time cap ends this fetch.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const waitClosed = async (path: string) => {
    while (!closed.includes(path)) await once(closes, 'close');
  };

  it('reads an endless page up to maxBytes, parses its head and closes the connection', async () => {
    const page = await fetchPageHtml(`${base}/endless`, { resolver: noDns, allowLoopback: true, maxBytes: 64 * 1024, timeoutMs: 600_000 });
    expect(page.html?.length).to.equal(64 * 1024);
    expect((await parsePreview(page.url, page.html)).title).to.equal('Endless');
    await waitClosed('/endless');
  });

  it('gives up on a server that never answers after timeoutMs: no tags, connection closed', async () => {
    const page = await fetchPageHtml(`${base}/silent`, { resolver: noDns, allowLoopback: true, timeoutMs: 200 });
    expect(page).to.deep.equal({ url: `${base}/silent`, html: null });
    await waitClosed('/silent');
  });
});
