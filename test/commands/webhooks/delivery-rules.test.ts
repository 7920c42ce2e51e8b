import { expect } from 'chai';
import { JITTER, MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from '../../../commands/webhooks/deliver.ts';
import { checkWebhookTarget, RefusedTarget, resolvePublicTarget } from '../../../commands/webhooks/target.ts';

describe('commands: messaging and webhook building blocks', () => {
  it('retries at 30 s, 2, 10, 30 min, 1, 3, 6 h after attempts 1-7 with +/-10 % jitter, and stops after the 8th', () => {
    const now = new Date('2026-03-10T00:00:00.000Z');
    expect(MAX_ATTEMPTS).to.equal(8);
    RETRY_DELAYS_MS.forEach((delay, i) => {
      const low = Date.parse(nextAttemptAt(i + 1, now, () => 0) as string) - now.getTime();
      const high = Date.parse(nextAttemptAt(i + 1, now, () => 1) as string) - now.getTime();
      const mid = Date.parse(nextAttemptAt(i + 1, now, () => 0.5) as string) - now.getTime();
      expect(mid).to.equal(delay);
      expect(low).to.equal(Math.round(delay * (1 - JITTER)));
      expect(high).to.equal(Math.round(delay * (1 + JITTER)));
    });
    expect(nextAttemptAt(8, now)).to.equal(null);
  });

  it('refuses every non-public resolution at connect time, and http unless loopback is explicitly allowed', async () => {
    const resolveTo =
      (...addresses: string[]) =>
      async () =>
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    const refused = async (url: string, resolver: ReturnType<typeof resolveTo>, allow = false) => {
      try {
        await resolvePublicTarget(new URL(url), resolver, allow);
        return false;
      } catch (err) {
        return err instanceof RefusedTarget;
      }
    };
    for (const bad of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.5',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fd12::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
    ]) {
      expect(await refused('https://hook.example.com/x', resolveTo(bad)), bad).to.equal(true);
    }
    expect(await refused('https://hook.example.com/x', resolveTo('93.184.216.34', '10.0.0.1')), 'mixed answer').to.equal(true);
    expect(await refused('https://hook.example.com/x', resolveTo('93.184.216.34'))).to.equal(false);
    expect(await refused('https://hook.example.com/x', resolveTo('2606:2800:220:1:248:1893:25c8:1946'))).to.equal(false);
    expect(await refused('http://hook.example.com/x', resolveTo('93.184.216.34'))).to.equal(true);
    expect(await refused('http://127.0.0.1:9/x', resolveTo(), true)).to.equal(false);
    expect(await refused('http://127.0.0.1:9/x', resolveTo())).to.equal(true);
    expect(await refused('https://10.0.0.1/x', resolveTo(), true)).to.equal(true);
    expect(checkWebhookTarget('http://127.0.0.1:9/x', true)).to.equal(null);
    expect(checkWebhookTarget('http://localhost:9/x', true)).to.be.a('string');
    expect(checkWebhookTarget('http://127.0.0.1:9/x', false)).to.be.a('string');
  });
});
