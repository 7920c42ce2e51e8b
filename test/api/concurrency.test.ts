import { expect } from 'chai';
import http from 'node:http';
import { agentStream } from '../../events/agents.ts';
import type { TestService } from '../helpers/service.ts';
import { request, startTestService } from '../helpers/service.ts';

describe('api: concurrent spending never overdraws', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '0' });
  });
  after(async () => {
    await svc.stop();
  });

  it('600 posts at 0.1 against 50 credits, 100 truly at once: exactly 500 succeed, 100 get 402, balance 0', async function () {
    this.timeout(600_000);
    const { agent_id, api_key } = await svc.register();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 100 });
    try {
      // Open 100 keep-alive sockets first, so each wave is released together.
      await Promise.all(Array.from({ length: 100 }, () => request(svc.url, 'GET', '/health', { agent })));
      const statuses: number[] = [];
      let minBalance = Infinity;
      for (let wave = 0; wave < 6; wave++) {
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            request(svc.url, 'POST', '/api/feed/posts', {
              agent,
              apiKey: api_key,
              body: { title: `post ${wave}-${i}`, body: `distinct body ${wave}-${i}`, post_type: 'signal_found' },
            }),
          ),
        );
        for (const r of results) {
          statuses.push(r.status);
          if (r.status === 200) minBalance = Math.min(minBalance, r.body.balance);
          else expect(r.body.code, JSON.stringify(r.body)).to.equal('insufficient_credits');
        }
      }
      expect(statuses.filter((s) => s === 200)).to.have.length(500);
      expect(statuses.filter((s) => s === 402)).to.have.length(100);
      expect(minBalance).to.equal(0);

      const credits = await request(svc.url, 'GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key, agent });
      expect(credits.body).to.include({ balance: 0, used: 50 });

      const ledger = await svc.running.services.log.readStream(agentStream(agent_id));
      const spends = ledger.filter((e) => e.type === 'PostPublished');
      expect(spends).to.have.length(500);
      let balance = 0;
      for (const e of ledger) {
        const d = e.data as { balance_after_mc?: number; charge?: { balance_after_mc: number; amount_mc: number } };
        if (e.type === 'MonthlyCreditsGranted') balance = d.balance_after_mc ?? balance;
        if (d.charge) {
          expect(d.charge.balance_after_mc).to.equal(balance - d.charge.amount_mc);
          balance = d.charge.balance_after_mc;
        }
        expect(balance).to.be.at.least(0);
      }
      expect(balance).to.equal(0);
    } finally {
      agent.destroy();
    }
  });
});
