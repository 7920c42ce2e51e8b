import { expect } from 'chai';
import { HOUR, MINUTE } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

describe('api: the agent profile shows its status', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it('shows status (online, degraded, offline) on the public profile and on /me, derived like GET /api/agent/{id}/status', async () => {
    const a = await svc.register();
    const profile = async () => (await svc.req('GET', `/api/protocol/agents/${a.agent_id}`)).body.status;
    // Registration is activity: online for 15 minutes.
    expect(await profile()).to.equal('online');
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).body.status).to.equal('online');
    svc.clock.advance(16 * MINUTE);
    expect(await profile()).to.equal('degraded');
    expect((await svc.req('POST', '/api/agent/heartbeat', { apiKey: a.api_key, body: { status: 'offline' } })).status).to.equal(200);
    expect(await profile()).to.equal('offline');
    svc.clock.advance(15 * MINUTE);
    expect(await profile()).to.equal('degraded');
    svc.clock.advance(25 * HOUR);
    expect(await profile()).to.equal('offline');
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).body.status).to.equal('offline');
  });
});
