// Messaging benchmarks for `npm run bench` (section "messaging"): webhook deliveries per second to a
// loopback receiver, and A2A Ed25519 sign/verify rates, each next to a ceiling measured in the same run.
import { generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretBox } from '../../commands/agents/secrets.ts';
import { canonicalBytes, ensurePassport, signA2A, verifySignature, a2aSignedDocument } from '../../commands/messaging/passport.ts';
import { CommandBus } from '../../commands/handler.ts';
import { ManualClock } from '../../events/kernel/clock.ts';
import { sendWebhook } from '../../workers/webhooks/http.ts';
import type { EventLog } from '../../events/store/port.ts';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function pool(total: number, concurrency: number, fn: () => Promise<unknown>): Promise<number> {
  let started = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        await fn();
      }
    }),
  );
  return total / ((performance.now() - t) / 1000);
}

export async function messagingBenchmarks(say: (line: string) => void): Promise<void> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/hook`;
  const body = JSON.stringify({
    event: 'new_dm',
    agent_id: 'agt_bench',
    data: { from_agent_id: 'agt_x', from_agent_name: 'X', message: 'x'.repeat(200), dm_id: 'dm_x' },
    timestamp: new Date().toISOString(),
  });
  const N = 5000;
  const C = 16;
  try {
    const raw = await pool(
      N,
      C,
      () =>
        new Promise<void>((resolve, reject) => {
          const r = http.request(
            url,
            { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } },
            (res) => {
              res.resume();
              res.on('end', () => resolve());
            },
          );
          r.on('error', reject);
          r.end(body);
        }),
    );
    const ours = await pool(N, C, async () => {
      const r = await sendWebhook(
        {
          url,
          body,
          event: 'new_dm',
          agentId: 'agt_bench',
          deliveryId: 'dlv_bench',
          attempt: 1,
          secrets: ['whsec_benchmark_secret'],
          scheme: 'timestamped',
          timestamp: Math.floor(Date.now() / 1000),
          cursor: null,
        },
        { resolver: async () => [{ address: '127.0.0.1', family: 4 }], allowLoopback: true, timeoutMs: 10_000 },
      );
      if (r.outcome !== 'delivered') throw new Error(`delivery failed: ${r.error}`);
    });
    say(`## Webhook delivery to a loopback receiver (${N} POSTs, ${C} at a time, new connection each)`);
    say('');
    say('| path | deliveries/s | ratio |');
    say('|---|---|---|');
    say(`| raw node:http POST (ceiling) | ${raw.toFixed(0)} | 1.00 |`);
    say(`| sendWebhook: address check + pinned connection + HMAC signing (variant B) | ${ours.toFixed(0)} | ${(ours / raw).toFixed(2)} |`);
    say('');
  } finally {
    server.close();
  }

  const dir = mkdtempSync(join(tmpdir(), 'bench-a2a-'));
  const log: EventLog = SqliteEventLog.open({ path: join(dir, 'events.sqlite') });
  try {
    const secrets = new SecretBox('bench-secret-key-0123456789-abcdefghijklmnop');
    const bus = new CommandBus(log, new ManualClock());
    const passport = await ensurePassport(bus, secrets, 'agt_bench', new Date());
    const key = passport.current;
    if (!key) throw new Error('no key');
    const message = {
      message_id: 'msg_bench',
      from_agent_id: 'agt_bench',
      to_agent_id: 'agt_other',
      intent: 'deal_offer',
      payload: { reason: 'benchmark', amount: 1200, sector: 'fintech', notes: 'x'.repeat(200) },
    };
    const M = 2000;
    const rate = (fn: () => void) => {
      const t = performance.now();
      for (let i = 0; i < M; i++) fn();
      return M / ((performance.now() - t) / 1000);
    };
    const bytes = canonicalBytes(a2aSignedDocument({ ...message, signed_at: new Date().toISOString() }));
    const node = generateKeyPairSync('ed25519');
    const nodeSig = nodeSign(null, bytes, node.privateKey);
    const sig = signA2A(key, secrets, message, new Date().toISOString());
    const doc = a2aSignedDocument({ ...message, signed_at: sig.signed_at });
    const rows = [
      ['sign: node:crypto Ed25519 over the same bytes (ceiling)', rate(() => nodeSign(null, bytes, node.privateKey)), 0],
      ['sign: signA2A (@noble/ed25519 + RFC 8785 canonical JSON)', rate(() => signA2A(key, secrets, message, sig.signed_at)), 0],
      ['verify: node:crypto Ed25519 (ceiling)', rate(() => nodeVerify(null, bytes, node.publicKey, nodeSig)), 0],
      ['verify: verifySignature (@noble/ed25519 + canonical JSON)', rate(() => verifySignature(key.public_key, doc, sig.value)), 0],
    ] as Array<[string, number, number]>;
    say(`## A2A signatures (Ed25519, ${M} operations each)`);
    say('');
    say('| path | ops/s | ratio |');
    say('|---|---|---|');
    for (const [label, ops] of rows) {
      const ceiling = label.startsWith('sign') ? rows[0][1] : rows[2][1];
      say(`| ${label} | ${ops.toFixed(0)} | ${(ops / ceiling).toFixed(2)} |`);
    }
    say('');
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
