import Router from '@koa/router';
import { expect } from 'chai';
import fc from 'fast-check';
import { routerFor } from '../../api/app.ts';
import { PARAM_SEGMENT, indexedMatch, routeSegments } from '../../api/route-match.ts';
import type { RouteLayer, RouteMatch } from '../../api/route-match.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

/** The router's own match (every layer's expression tested), as the answer to compare with. */
const fullScan = (router: Router) => (router.match as unknown as (path: string, method: string) => RouteMatch).bind(router);
const names = (m: RouteMatch) => ({
  path: m.path.map((l) => String(l.path)),
  pathAndMethod: m.pathAndMethod.map((l) => `${l.methods.join(',')} ${String(l.path)}`),
  route: m.route,
});

/** Request paths near every route: its parameters filled in, cases changed, a trailing slash, one segment more or less. */
function corpus(layers: RouteLayer[]): string[] {
  const out = new Set<string>(['/', '', '/api', '/API/', '//api', '/api//credits', '/nowhere', '/api/%61gent/me']);
  for (const layer of layers) {
    if (typeof layer.path !== 'string') continue;
    const filled = layer.path.replace(/:(\w+)/g, (_, n: string) => `${n}_x1`).replace(/\*\w*/g, 'a/b');
    out.add(filled);
    out.add(`${filled}/`);
    out.add(filled.toUpperCase());
    out.add(`${filled}/extra`);
    out.add(filled.slice(0, filled.lastIndexOf('/')) || '/');
    out.add(filled.replace(/_x1/g, 'A%2Fb'));
  }
  return [...out];
}

describe('api: the indexed route match (api/route-match.ts)', function () {
  this.timeout(300_000);
  let svc: TestService;
  before(async () => (svc = await startTestService()));
  after(() => svc.stop());

  it('routeSegments: the whole literal segments (lower-cased) and whole-segment parameters a route path starts with', () => {
    const P = PARAM_SEGMENT;
    expect(routeSegments('/api/agent/contracts/:id/accept')).to.deep.equal(['api', 'agent', 'contracts', P, 'accept']);
    expect(routeSegments('/api/:a/:b')).to.deep.equal(['api', P, P]);
    expect(routeSegments('/api/Credits')).to.deep.equal(['api', 'credits']);
    expect(routeSegments('/api/credits/')).to.deep.equal(['api', 'credits']);
    expect(routeSegments('/api/x:id')).to.deep.equal(['api']);
    expect(routeSegments('/api/:id.json/x')).to.deep.equal(['api']);
    expect(routeSegments('/api/:id{/:part}')).to.deep.equal(['api']);
    expect(routeSegments('/api/{x}')).to.deep.equal(['api']);
    expect(routeSegments('/api/*rest')).to.deep.equal(['api']);
    expect(routeSegments('/api//x')).to.deep.equal(['api']);
    expect(routeSegments('/')).to.deep.equal([]);
    expect(routeSegments('(.*)')).to.deep.equal([]);
    expect(routeSegments(/^\/api/)).to.deep.equal([]);
  });

  it('answers the same layers in the same order as the full scan, for every method, on paths near every route of the service', () => {
    const router = routerFor(svc.running.services);
    const stack = (router as unknown as { stack: RouteLayer[] }).stack;
    const full = fullScan(router);
    const indexed = indexedMatch(router);
    const paths = corpus(stack);
    expect(paths.length).to.be.greaterThan(1000);
    let matched = 0;
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
        const want = full(path, method);
        if (want.route) matched++;
        expect(names(indexed(path, method)), `${method} ${path}`).to.deep.equal(names(want));
      }
    }
    // The corpus reaches routes (not only misses): every route's own path at least.
    expect(matched).to.be.greaterThan(stack.length);
  });

  it('answers as the full scan on a router with middleware layers, RegExp and wildcard paths, prefixes and options, over random paths', () => {
    const router = new Router();
    const ok = () => undefined;
    router.use(ok);
    router.use('/api', ok);
    router.get('/', ok);
    router.get('/api/items/:id', ok);
    router.post('/api/items/:id/done', ok);
    router.get('/api/items/done/:id', ok);
    router.put('/api/:kind/:id/part', ok);
    router.get('/api/:kind/x1/:n', ok);
    router.get('/api/items/:id{/:part}', ok);
    router.get('/api/item-:id', ok);
    router.get(/^\/re\/(\d+)$/, ok);
    router.all('/files/*rest', ok);
    const nested = new Router({ prefix: '/api/nested' });
    nested.get('/', ok);
    nested.get('/:id', ok);
    router.use(nested.routes());
    const strict = new Router({ strict: true, sensitive: true });
    strict.get('/Exact/', ok);
    router.use(strict.routes());
    const full = fullScan(router);
    const indexed = indexedMatch(router);
    const segment = fc.constantFrom(
      'api',
      'API',
      'items',
      'Items',
      'x1',
      'done',
      'part',
      're',
      '12',
      'files',
      'a',
      'nested',
      'Exact',
      'exact',
      '',
      '%2F',
      'item-x1',
      'item-',
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 5 }), fc.boolean(), fc.constantFrom('GET', 'POST', 'PUT'), (segments, slash, method) => {
        const path = `/${segments.join('/')}${slash ? '/' : ''}`;
        expect(names(indexed(path, method)), `${method} ${path}`).to.deep.equal(names(full(path, method)));
      }),
      { numRuns: 3000 },
    );
  });

  it('builds its index again when routes are added after the first match', () => {
    const router = new Router();
    router.get('/a/:id', () => undefined);
    const indexed = indexedMatch(router);
    expect(indexed('/b/1', 'GET').route).to.equal(false);
    router.get('/b/:id', () => undefined);
    expect(indexed('/b/1', 'GET').route).to.equal(true);
  });
});
