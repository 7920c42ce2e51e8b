import Router from '@koa/router';
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { ROUTE_MODULES, routerFor } from '../../api/app.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

const DOC = new URL('../../docs/ROUTES.md', import.meta.url);

/** One row per served method and full path, with the route module that declares it. */
function render(svc: TestService): string {
  const rows: string[] = [];
  for (const [file, register] of ROUTE_MODULES) {
    const router = new Router();
    register(router, svc.running.services);
    for (const layer of router.stack) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) rows.push(`| ${method} | \`${layer.path}\` | ${file} |`);
    }
  }
  return [
    '# Routes',
    '',
    'Every method and full path the service serves, with the file that declares it (generated from',
    '`ROUTE_MODULES` in api/app.ts by `npm run routes`; `npm test` fails when this page is stale).',
    '',
    '| method | path | declared in |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

describe('docs/ROUTES.md', function () {
  this.timeout(300_000);
  let svc: TestService;
  before(async () => (svc = await startTestService()));
  after(() => svc.stop());

  it('lists exactly the routes the root router serves, each with its file (run `npm run routes` after changing routes)', () => {
    const page = render(svc);
    if (process.env.UPDATE_ROUTES === '1') writeFileSync(DOC, page);
    expect(readFileSync(DOC, 'utf8')).to.equal(page);
    // The per-module listing is the whole router: no route is registered outside ROUTE_MODULES.
    const served = routerFor(svc.running.services).stack.flatMap((l) => l.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${l.path}`));
    const listed = [...page.matchAll(/^\| (\w+) \| `([^`]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(listed).to.deep.equal(served);
  });
});
