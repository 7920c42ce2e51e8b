import { expect } from 'chai';
import { allOperations } from '../../api/app.ts';
import type { Operation } from '../../api/operations.ts';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

/**
 * Authorisation before validation on every role-gated route: the routes for super admins
 * (`auth: 'admin'`) and every route under /api/admin/ (community admins too), taken from the
 * route table, so a new one is walked as well. A caller without the role who sends an invalid body
 * (or query) is told 401/403, never 422 (which would tell it how to shape a request it may not
 * make), nor 415 or 404. The console's pages (GET /admin/...) send the browser to the console's
 * sign-in page instead.
 */
const roleGated = (op: Operation) => op.auth === 'admin' || op.path.startsWith('/api/admin/');

/** Invalid for every body schema: a field no schema has, a wrong type for the usual ones. */
const INVALID_BODY = JSON.stringify({ community_id: 42, user_id: [], code: {}, name: 7, status: 'nope', zz_unknown_field: true });

describe('api: role-gated routes answer 401/403 before any 422 (authorisation before validation)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let member: { access_token: string };
  let agent: { api_key: string };

  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
    member = await signUp(svc, outbox);
    agent = await svc.register();
  });
  after(() => stopWithOutbox(svc, outbox));

  const ops = allOperations().filter(roleGated);

  it('finds the role-gated routes in the route table (community-admin writes among them)', () => {
    expect(ops.length).to.be.at.least(20);
    expect(ops.map((o) => o.id)).to.include.members(['postAdminCommunityAdminCodes', 'postAdminCommunityAdminCircles', 'postAdminCommunities']);
  });

  for (const op of ops) {
    it(`${op.method} ${op.path}: a plain member and a plain agent get 401/403 with an invalid ${op.method === 'GET' ? 'query' : 'body'}`, async () => {
      const path = op.path.replace(/:(\w+)/g, (_m, name: string) => `unknown_${name}`);
      const url = op.method === 'GET' ? `${path}?limit=-5&page=x&community_id=` : path;
      const callers: Array<[string, Record<string, string>]> = [
        ['a plain member', { authorization: `Bearer ${member.access_token}` }],
        ['a plain agent', { 'x-api-key': agent.api_key }],
        ['no credential', {}],
      ];
      for (const [who, headers] of callers) {
        const res = await svc.req(op.method, url, {
          headers: { ...headers, ...(op.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
          ...(op.method === 'GET' ? {} : { rawBody: INVALID_BODY }),
          unchecked: true,
        });
        // The console's pages send a browser without a console session to its sign-in page.
        if (op.path.startsWith('/admin') && op.method === 'GET' && res.status === 302) expect(res.headers.location).to.equal('/admin/login');
        else expect([401, 403], `${who}: ${res.status} ${res.text.slice(0, 300)}`).to.include(res.status);
      }
    });
  }
});
