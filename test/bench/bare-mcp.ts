// The MCP SDK's own serving path with nothing of ours behind it: bare Koa + koa-body, and on POST
// the SDK's handlers as the service uses them (2026-07-28: createMcpHandler's per-request handler;
// 2025-11-25: a stateless transport answering JSON) with a per-request low-level Server whose one
// tool answers a constant. `npm run bench -- mcp` measures it
// beside the service's tool call, to show what the SDK's path alone costs on this machine.
import { createMcpHandler, isLegacyRequest, Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { serveBare } from './bare-server.ts';

const factory = () => {
  const server = new Server({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler('tools/list', () => ({ tools: [{ name: 'get_credits', inputSchema: { type: 'object' } }] }));
  server.setRequestHandler('tools/call', () => {
    const body = { agent_id: 'agt_bare', balance: 50, used: 0, tier: 'free' };
    return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  });
  return server;
};
// Served as the service serves it (api/routes/mcp/mcp.ts): 2026-07-28 by the per-request handler,
// 2025-era requests by a stateless transport answering JSON.
const { fetch: serveModern } = createMcpHandler(factory, { legacy: 'reject' });
const serveLegacy = async (request: Request, parsedBody: unknown): Promise<Response> => {
  const server = factory();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  }
};

serveBare(async (ctx) => {
  // The request as the service hands it to the SDK (webRequest in api/routes/mcp/mcp.ts): the
  // method, the headers the SDK reads and the URL, no body and no signal; cheaper than a Request.
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (typeof value === 'string' && /^(accept|content-type|origin|host|mcp-.*)$/.test(name)) headers.set(name, value);
  }
  const request = { method: 'POST', url: `http://${ctx.req.headers.host ?? 'localhost'}/mcp`, headers, signal: undefined } as unknown as Request;
  const body = ctx.request.body;
  const response = (await isLegacyRequest(request, body)) ? await serveLegacy(request, body) : await serveModern(request, { parsedBody: body });
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') ctx.set(name, value);
  });
  ctx.status = response.status;
  ctx.body = Buffer.from(await response.arrayBuffer());
});
