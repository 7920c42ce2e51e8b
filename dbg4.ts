import http from 'node:http';
import { startTestService, request } from './test/helpers/service.ts';
const svc = await startTestService({ RATE_LIMIT_SCALE: '0' });
const a = await svc.register();
const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_credits', arguments: {} } };
const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
async function run(label: string, fn: () => Promise<unknown>, n = 1500, c = 50) {
  let i = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: c }, async () => { while (i++ < n) await fn(); }));
  console.error(label, ((n / (performance.now() - t)) * 1000).toFixed(0), 'req/s');
}
for (let r = 0; r < 2; r++) {
  await run('rest', () => request(svc.url, 'GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key, agent }));
  await run('mcp', () => request(svc.url, 'POST', '/api/mcp', { apiKey: a.api_key, headers, body, agent }));
}
await svc.stop();
