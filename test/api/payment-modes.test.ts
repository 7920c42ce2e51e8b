import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, paymentMode } from '../../api/config.ts';
import type { ServerProcess } from '../helpers/process.ts';
import { bootServerProcess } from '../helpers/process.ts';
import { request, startTestService } from '../helpers/service.ts';

describe('api: payment modes (the sandbox is off in production unless enabled)', function () {
  this.timeout(120_000);

  it('chooses razorpay when configured, else the sandbox outside NODE_ENV=production or with PAYMENTS_SANDBOX=1, else none', () => {
    const mode = (env: Record<string, string>) => paymentMode(loadConfig(env));
    expect(mode({})).to.equal('sandbox');
    expect(mode({ NODE_ENV: 'development' })).to.equal('sandbox');
    expect(mode({ NODE_ENV: 'production' })).to.equal('disabled');
    expect(mode({ NODE_ENV: 'production', PAYMENTS_SANDBOX: '1' })).to.equal('sandbox');
    expect(mode({ PAYMENTS_SANDBOX: '0' })).to.equal('disabled');
    expect(mode({ NODE_ENV: 'production', RAZORPAY_KEY_ID: 'rzp_live_abc', RAZORPAY_KEY_SECRET: 's' })).to.equal('razorpay');
    expect(() => loadConfig({ PAYMENTS_SANDBOX: 'maybe' })).to.throw(/PAYMENTS_SANDBOX/);
  });

  describe('NODE_ENV=production without a provider (npm start as a child process)', () => {
    let dataDir: string;
    let server: ServerProcess;
    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'agent-network-payments-'));
      server = await bootServerProcess(dataDir, { NODE_ENV: 'production', PAYMENTS_SANDBOX: '' });
    });
    after(async () => {
      await server?.stop('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('logs the payment mode at start', () => {
      const line = server.lines.find((l) => l.payment_mode !== undefined);
      expect(line, 'a payment_mode log line').to.not.equal(undefined);
      expect(line).to.include({ payment_mode: 'disabled' });
      expect(String(line?.msg)).to.match(/payments: disabled/);
    });

    it('answers 503 payments_unavailable to top-ups, upgrades, plan orders, verify and sandbox payments; nothing is appended', async () => {
      const reg = await request(server.url, 'POST', '/api/protocol/register', {
        body: { name: 'Prod', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'prod-owner@example.com' },
      });
      expect(reg.status, reg.text).to.equal(200);
      const agent = reg.body.agent_id as string;
      const answers = [
        await request(server.url, 'POST', '/api/credits/topup/order', { apiKey: reg.body.api_key, body: { pack: 'small' } }),
        await request(server.url, 'POST', `/api/protocol/agents/${agent}/upgrade`, { body: { tier: 'pro' } }),
        await request(server.url, 'POST', '/api/credits/topup/verify', { body: { order_id: 'order_x', payment_id: 'pay_x', signature: 'f'.repeat(64) } }),
        await request(server.url, 'POST', '/api/credits/sandbox/pay', { body: { order_id: 'order_x' } }),
      ];
      for (const res of answers) {
        expect(res.status, res.text).to.equal(503);
        expect(res.body.code).to.equal('payments_unavailable');
      }
      const credits = await request(server.url, 'GET', `/api/protocol/agents/${agent}/credits`, { apiKey: reg.body.api_key });
      expect(credits.body).to.include({ tier: 'free', balance: 50 });
    });
  });

  it('PAYMENTS_SANDBOX=1 turns the sandbox on under NODE_ENV=production: an order is paid and verified', async () => {
    const svc = await startTestService({ NODE_ENV: 'production', PAYMENTS_SANDBOX: '1' });
    try {
      const a = await svc.register();
      const order = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/upgrade`, { body: { tier: 'pro' } });
      expect(order.status, order.text).to.equal(200);
      const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: order.body.order_id } });
      expect(paid.status, paid.text).to.equal(200);
      const { order_id, payment_id, signature } = paid.body;
      const v = await svc.req('POST', '/api/credits/topup/verify', { body: { order_id, payment_id, signature } });
      expect(v.status, v.text).to.equal(200);
      expect(v.body).to.include({ tier: 'pro' });
    } finally {
      await svc.stop();
    }
  });
});
