import { expect } from 'chai';
import { allOperations } from '../../api/app.ts';
import type { Operation } from '../../api/operations.ts';
import { isApiOperation } from '../../api/operations.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';

const remaining = (res: TestResponse) => Number(res.headers['ratelimit-remaining']);

/**
 * A request counts once in its operation's rate-limit window: `mount` counts the declared
 * `rateLimit` (api/operations.ts) and no handler counts it again. Each write operation with a
 * declared limit that `mount` counts is sent twice by the same caller (a body it refuses, so
 * nothing is written); its window's `RateLimit-Remaining` must go down by one.
 */
describe('API: each request counts once against its operation’s rate limit', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  it('every limited write of an agent or a signed-in user uses one unit of its window per request', async () => {
    const { user, agent } = await signUpWithAgent(svc, outbox);
    const agentId = agent.body.agent_id as string;
    const limited = allOperations().filter(
      (op: Operation) => isApiOperation(op) && op.method !== 'GET' && op.rateLimit !== undefined && op.limitCountedBy === undefined && op.auth !== 'none',
    );
    // Deactivating the agent goes last: it ends the key's other requests.
    limited.sort((a, b) => Number(a.id === 'deleteProtocolMe') - Number(b.id === 'deleteProtocolMe'));
    expect(limited.length).to.be.greaterThan(50);
    const twice: string[] = [];
    let checked = 0;
    for (const op of limited) {
      const path = op.path.replace(/:(\w+)/g, (_m, name: string) => (name === 'id' || name === 'agent_id' ? agentId : 'missing'));
      const auth = op.auth === 'key' ? { apiKey: agent.api_key as string } : { headers: { authorization: `Bearer ${user.access_token}` } };
      // A body no operation takes: refused (422) after the limit is counted, so nothing changes.
      const send = () => svc.req(op.method, path, { ...auth, body: { not_a_field: true }, unchecked: true });
      const first = await send();
      const second = await send();
      // Refused before the limit (the wrong kind of caller for the operation): nothing to count.
      if (first.headers['ratelimit-limit'] === undefined || [401, 403, 429].includes(second.status)) continue;
      checked++;
      const used = remaining(first) - remaining(second);
      if (used !== 1) twice.push(`${op.method} ${op.path}: ${used} units (${first.status}, ${second.status})`);
    }
    expect(twice).to.deep.equal([]);
    expect(checked).to.be.greaterThan(50);
  });
});
