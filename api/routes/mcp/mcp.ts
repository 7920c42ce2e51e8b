import Router from '@koa/router';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { DomainError } from '../../../events/kernel/errors.ts';
import { requireApiKey } from '../../auth.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { screenBody } from '../../validation.ts';
import { isRecord } from '../../guards.ts';
import { mount, operations } from '../../operations.ts';
import { ERROR_ENVELOPE } from '../../openapi.ts';
import { callerOf, inProcess, mcpServerFor, serverCard } from './server.ts';
import type { CallerInfo } from './server.ts';
import { GetWellKnownMcpJsonAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

export const MCP_PATH = '/api/mcp';
/** The protocol revisions served: the 2025 one through the stateless fallback, the 2026 one through the per-request envelope. */
export const MCP_REVISIONS = ['2025-11-25', '2026-07-28'] as const;
/** The body limit of a tool call: a 5 MB image as base64 (upload_post_image) fits; other routes keep JSON_LIMIT. */
export const MCP_JSON_LIMIT = '8mb';

const parseJson = koaBody({ jsonLimit: MCP_JSON_LIMIT, jsonStrict: true, multipart: false, urlencoded: false, text: false });

/** The JSON-RPC message (the app's body parser leaves this path to the route), screened as every body is. */
export async function parsedBody(ctx: Context): Promise<unknown> {
  if (!isJsonContentType(ctx.get('content-type'))) throw new DomainError(415, 'unsupported_media_type', 'Send the JSON-RPC message as application/json');
  await parseJson(ctx, async () => undefined);
  const body: unknown = ctx.request.body;
  screenBody(body);
  return body;
}

/** The request headers the SDK reads: content negotiation, the protocol headers (MCP-*), Origin and Host. */
const PASSED_HEADER = /^(accept|content-type|origin|host|last-event-id|mcp-.*)$/;

/**
 * Whether the message is one the SDK's classification can only route to the modern (2026-07-28)
 * handler: a single request or notification (not `initialize`, not a response) whose params carry
 * the per-request envelope claim (the reserved protocol-version `_meta` key). The modern handler
 * classifies it again and answers every ladder error itself, so only the SDK's answer decides;
 * this only spares classifying such a message twice. Anything else asks `isLegacyRequest`.
 */
function claimsModernEnvelope(body: unknown): boolean {
  if (!isRecord(body)) return false;
  if (typeof body.method !== 'string' || body.method === 'initialize' || 'result' in body || 'error' in body) return false;
  const meta = isRecord(body.params) ? body.params._meta : undefined;
  return isRecord(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

/**
 * A batch's requests must carry distinct ids: each tools/call runs under a command id derived
 * from its JSON-RPC id (server.ts `callCommand`), and two answers with one id could not be told
 * apart. A repeated id refuses the whole batch (400 `duplicate_request_id`) before anything runs.
 */
function requireDistinctIds(body: unknown): void {
  if (!Array.isArray(body)) return;
  const seen = new Set<string>();
  const messages: unknown[] = body;
  for (const m of messages) {
    if (!isRecord(m) || typeof m.method !== 'string' || m.id === undefined) continue;
    const id = JSON.stringify(m.id);
    if (seen.has(id)) throw new DomainError(400, 'duplicate_request_id', `The batch repeats the request id ${id}; every request in a batch needs its own id`);
    seen.add(id);
  }
}

/** The tool a `tools/call` message names, if it is one. */
function calledTool(body: unknown): string | undefined {
  if (!isRecord(body) || body.method !== 'tools/call' || !isRecord(body.params)) return undefined;
  const name = body.params.name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The request as the SDK's HTTP entry reads it when it is handed the parsed body: the method, the
 * headers (a web `Headers`) and the URL; no body, and no abort signal (the exchange is never
 * aborted from here, as with a `Request` whose signal never fires). A web `Request` cost a
 * tenth of a tool call (its URL parse and the signal the SDK asks it for); `isLegacyRequest`,
 * the transports and the per-request handler read nothing else of it when the body is given
 * (test/api/mcp.test.ts runs every path through it).
 */
function webRequest(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value !== undefined && PASSED_HEADER.test(name)) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const inbound: Pick<Request, 'method' | 'url' | 'headers'> = { method: ctx.method, url: `http://${ctx.req.headers.host ?? 'localhost'}${MCP_PATH}`, headers };
  // The SDK's type is the whole web Request; what it reads of it when handed the body is these fields (see above).
  return inbound as Request;
}

/**
 * Writes the transport's web Response as the Koa answer. A JSON answer goes out as the
 * transport's bytes; under an Idempotency-Key it is parsed, so the stored replay is JSON.
 */
async function answer(ctx: Context, response: Response): Promise<void> {
  // Headers first: with its Content-Type already set, Koa takes the body without guessing a type.
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') ctx.set(name, value);
  });
  ctx.status = response.status;
  const type = response.headers.get('content-type') ?? '';
  if (response.body === null) ctx.body = '';
  // The DOM typings' ReadableStream (the web Response) and node:stream/web's are the same object at run time.
  else if (type.startsWith('text/event-stream')) ctx.body = Readable.fromWeb(response.body as WebReadableStream);
  else {
    // The bytes as they are (no decoding and re-encoding), but parsed JSON for a stored replay.
    const bytes = Buffer.from(await response.arrayBuffer());
    ctx.body = bytes.length && type.includes('json') && ctx.get('idempotency-key') ? plainJsonOf(bytes) : bytes;
  }
}

/** JSON bytes, parsed. */
function plainJsonOf(bytes: Buffer): unknown {
  const parsed: unknown = JSON.parse(bytes.toString('utf8'));
  return parsed;
}

/** A JSON-RPC 2.0 message or batch (the MCP messages: initialize, tools/list, tools/call, notifications). */
export const JsonRpcBody = {
  oneOf: [
    { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' } } },
    { type: 'array', items: { type: 'object' } },
  ],
} as const;

/** A refusal of the MCP transport (JSON-RPC error object), or of the checks before it (the error envelope). */
const MCP_ERROR = {
  anyOf: [
    ERROR_ENVELOPE,
    {
      type: 'object',
      required: ['jsonrpc', 'error'],
      properties: {
        jsonrpc: { const: '2.0' },
        error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' } } },
      },
    },
  ],
};

export const mcpOperations = operations({
  postMcp: {
    method: 'POST',
    path: MCP_PATH,
    summary: 'MCP tool server (Streamable HTTP, stateless; revisions 2025-11-25 and 2026-07-28): each tool runs its REST operation',
    description:
      'GET and DELETE answer 405 (no sessions). A tools/call counts against the limits and costs of the operation it runs; any other message as a read. docs/MCP.md.',
    tags: ['mcp'],
    auth: 'key',
    body: JsonRpcBody,
    rateLimit: LIMITS.reads,
    // Counted by the handler: a message that is not a tool call (a tool call counts its own operation's limit).
    limitCountedBy: 'handler',
    responses: {
      200: {
        description: 'The JSON-RPC answer',
        contentType: 'application/json',
        alsoContentTypes: ['text/event-stream'],
        schema: { type: ['object', 'array'] },
      },
      202: { description: 'A notification or response accepted (no content)', contentType: '' },
      ...Object.fromEntries(
        [400, 406, 415].map((status) => [status, { description: 'A JSON-RPC error from the MCP transport, or the error envelope', schema: MCP_ERROR }]),
      ),
    },
    errors: [404, 405],
  },
  getWellKnownMcpJson: {
    method: 'GET',
    path: '/.well-known/mcp.json',
    summary: 'The MCP server card (tools, revisions, endpoint)',
    tags: ['mcp'],
    auth: 'none',
    responses: ok(GetWellKnownMcpJsonAnswer),
  },
});

/**
 * `POST /api/mcp` (X-API-Key): the MCP tool server over Streamable HTTP, stateless, one server per
 * request (official SDK). 2026-07-28 requests (per-request `_meta` envelope) go to the SDK's
 * per-request handler; 2025-era requests (the `initialize` handshake, no envelope) to a stateless
 * Streamable HTTP transport answering JSON. GET and DELETE (session streams, session end) answer
 * 405: there are no sessions. `GET /.well-known/mcp.json`: the server card, from the same tools.
 */
export function mcpRoutes(router: Router, s: Services): void {
  const callTool = inProcess(s);
  const factory = (auth: AuthInfo | undefined) => mcpServerFor(callerOf(auth), callTool);
  // The 2026-07-28 leg: the SDK's per-request handler (its web-standard face serves one request; no outbound call).
  const { fetch: serveModern } = createMcpHandler(({ authInfo }) => factory(authInfo), {
    legacy: 'reject',
    onerror: (err) => s.logger.debug({ err }, 'mcp request refused'),
  });

  const legacy = async (request: Request, parsedBody: unknown, authInfo: AuthInfo): Promise<Response> => {
    const server = factory(authInfo);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody, authInfo });
    } finally {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    }
  };

  const mcp = new Router({ prefix: MCP_PATH });
  mount(mcp, mcpOperations.postMcp, async (ctx) => {
    const agentId = requireApiKey(ctx);
    const body = await parsedBody(ctx);
    requireDistinctIds(body);
    const caller: CallerInfo = { ctx, agentId, tool: calledTool(body) };
    // A tools/call counts as its operation does (inside the call); any other message as a read.
    if (caller.tool === undefined && s.limiter.scale !== 0) s.limiter.hit(LIMITS.reads, ctx.ip, ctx);
    const authInfo: AuthInfo = { token: 'x-api-key', clientId: agentId, scopes: [], extra: { caller } };
    const request = webRequest(ctx);
    const response =
      !claimsModernEnvelope(body) && (await isLegacyRequest(request, body))
        ? await legacy(request, body, authInfo)
        : await serveModern(request, { parsedBody: body, authInfo });
    await answer(ctx, response);
  });
  router.use(mcp.routes());

  const card = new Router({ prefix: '/.well-known/mcp.json' });
  let cached: ReturnType<typeof serverCard> | null = null;
  mount(card, mcpOperations.getWellKnownMcpJson, (ctx) => {
    cached ??= serverCard(s.config.publicBaseUrl, MCP_REVISIONS, MCP_PATH);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = cached;
  });
  router.use(card.routes());
}
