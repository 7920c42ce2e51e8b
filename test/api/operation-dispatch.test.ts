import { expect } from 'chai';
import { mountAll } from '../../api/app.ts';
import { OperationTable } from '../../api/dispatch.ts';
import type { Operation } from '../../api/operations.ts';
import { isApiOperation } from '../../api/operations.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const segments = (path: string) => path.split('/').slice(1);
const isParam = (segment: string) => segment.startsWith(':');

/**
 * A path both patterns match, when there is one: each segment the literal one of them has (a
 * parameter takes any), or a sample value where both are parameters.
 */
function overlap(a: Operation, b: Operation): string | null {
  const sa = segments(a.path);
  const sb = segments(b.path);
  if (sa.length !== sb.length) return null;
  const out: string[] = [];
  for (let i = 0; i < sa.length; i++) {
    if (!isParam(sa[i]) && !isParam(sb[i]) && sa[i] !== sb[i]) return null;
    out.push(!isParam(sa[i]) ? sa[i] : !isParam(sb[i]) ? sb[i] : `x${i}`);
  }
  return `/${out.join('/')}`;
}

describe('API dispatch: the operation table (find-my-way) and the router (@koa/router)', function () {
  this.timeout(300_000);
  let svc: TestService;
  before(async () => (svc = await startTestService()));
  after(() => svc.stop());

  it('find the same operation for every API path, overlapping patterns included, for every method', () => {
    const { router, operations } = mountAll(svc.running.services);
    const table = new OperationTable(operations);
    const api = [...operations.keys()].filter(isApiOperation);
    // Each operation's own paths (sample values for its parameters) the table answers itself;
    // on a path where two patterns overlap it answers the router's operation or leaves it to the router.
    const own = new Set(api.map((a) => overlap(a, a) as string));
    const paths = new Set<string>(own);
    for (const a of api) for (const b of api) if (a !== b) paths.add(overlap(a, b) ?? '/');
    expect(own.size).to.be.greaterThan(150);
    const mismatches: string[] = [];
    let leftToRouter = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        // The router answers with the first route (a layer with methods) registered for the path and method.
        const layer = router.match(path, method).pathAndMethod.find((l) => l.methods.length > 0);
        const byRouter = layer ? String(layer.path) : null;
        const found = table.find(method, path);
        if (found === null && byRouter !== null && !own.has(path)) leftToRouter++;
        else if ((found?.op.path ?? null) !== byRouter) mismatches.push(`${method} ${path}: router ${byRouter}, table ${found?.op.path ?? null}`);
      }
    }
    expect(mismatches).to.deep.equal([]);
    // Only the few paths where a later literal meets an earlier parameter are the router's.
    expect(leftToRouter).to.be.lessThan(30);
  });

  it('leave to the router what it matches more loosely: a trailing or repeated slash, other case, percent-encoding', () => {
    const { operations } = mountAll(svc.running.services);
    const table = new OperationTable(operations);
    expect(table.find('POST', '/api/feed/posts')?.op.path).to.equal('/api/feed/posts');
    expect(table.find('HEAD', '/api/feed/posts')?.op.method).to.equal('GET');
    for (const path of ['/api/feed/posts/', '/API/feed/posts', '/api//feed/posts', '/api/agent/posts/post%5F1', '/signin'])
      expect(table.find('GET', path)).to.equal(null);
  });

  it('answer over HTTP as the router did: loose paths reach their operation, HEAD, 405 with Allow, pages and their form parsing kept to pages', async () => {
    const { api_key: apiKey } = await svc.register();
    const exact = await svc.req('GET', '/api/feed/posts');
    expect(exact.status).to.equal(200);
    for (const path of ['/api/feed/posts/', '/API/FEED/POSTS']) {
      const loose = await svc.req('GET', path, { unchecked: true });
      expect(loose.status, path).to.equal(200);
      expect(loose.body.items).to.deep.equal(exact.body.items);
    }
    const encoded = await svc.req('GET', '/api/agent/posts/post%5Fnone', { apiKey, unchecked: true });
    expect(encoded.status).to.equal(404);
    expect(encoded.body.code).to.not.equal('route_not_found');
    const head = await svc.req('HEAD', '/api/feed/posts');
    expect(head.status).to.equal(200);
    expect(head.text).to.equal('');
    const wrong = await svc.req('DELETE', '/api/feed/posts', { unchecked: true });
    expect(wrong.status).to.equal(405);
    expect(String(wrong.headers.allow).split(/,\s*/).sort()).to.deep.equal(['GET', 'HEAD', 'POST']);
    const options = await svc.req('OPTIONS', '/api/feed/posts', { unchecked: true });
    expect(options.status).to.equal(200);
    expect(String(options.headers.allow).split(/,\s*/).sort()).to.deep.equal(['GET', 'HEAD', 'POST']);
    // A form sent to an API write is not parsed by the pages' routers: the route refuses its media type.
    const form = await svc.req('POST', '/api/feed/posts', {
      apiKey,
      rawBody: 'title=x&body=y',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      unchecked: true,
    });
    expect(form.status).to.equal(415);
    const page = await svc.req('GET', '/signin', { unchecked: true });
    expect(page.status).to.equal(200);
    expect(String(page.headers['content-type'])).to.match(/^text\/html/);
  });
});
