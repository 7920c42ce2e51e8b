import type Router from '@koa/router';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { McpServer } from '@modelcontextprotocol/server';
import type { AuthInfo, CallToolResult, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { errorBody, renderError } from '../../errors.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { validate } from '../../validation.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { PROTOCOL_VERSION } from '../docs/service.ts';
import type { Json, ToolDef } from './tools.ts';
import { TOOLS } from './tools.ts';

export const SERVER_NAME = 'agent-network';

/**
 * A tool's input schema as the SDK takes it (Standard Schema with JSON Schema): `tools/list` shows
 * the route's JSON Schema; validation is left to the call, which validates with the service's own
 * validator (api/validation.ts) so that a bad argument answers the route's 422 envelope.
 */
function inputSchemaOf(schema: Record<string, unknown>): StandardSchemaWithJSON<Json, Json> {
  return {
    '~standard': {
      version: 1,
      vendor: SERVER_NAME,
      jsonSchema: { input: () => schema, output: () => schema },
      validate: (value: unknown) => ({ value: (value ?? {}) as Json }),
    },
  };
}

/** What an in-process run of a REST operation answered. */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * Runs REST operations in-process for the tool calls of one MCP request: a fresh Koa context on a
 * private request/response pair, carrying the MCP request's caller, request id and command id,
 * through the same router (and the read limit every GET counts against); a thrown error becomes
 * the one error envelope exactly as the HTTP answer would carry it.
 */
export function inProcess(router: Router, s: Services) {
  const routes = router.routes() as unknown as (ctx: Context, next: () => Promise<void>) => Promise<unknown>;
  const done = async () => undefined;
  async function run(outer: Context, step: (ctx: Context) => Promise<void>): Promise<Answer> {
    const req = new IncomingMessage(outer.req.socket);
    req.method = 'POST';
    req.url = '/';
    const forwarded = outer.req.headers['x-forwarded-for'];
    req.headers = {
      host: outer.req.headers.host ?? 'localhost',
      'content-type': 'application/json',
      ...(forwarded ? { 'x-forwarded-for': forwarded } : {}),
    };
    const res = new ServerResponse(req);
    const ctx = outer.app.createContext(req, res);
    ctx.state.principal = outer.state.principal;
    ctx.state.requestId = outer.state.requestId;
    ctx.state.commandId = outer.state.commandId;
    ctx.state.freshCommand = outer.state.freshCommand;
    try {
      await step(ctx);
      if (ctx.body === undefined || ctx.body === null) {
        ctx.status = 404;
        ctx.body = errorBody(ctx.state.requestId as string, 'route_not_found', 'Not Found');
      }
    } catch (err) {
      renderError(ctx, err, s.logger);
    }
    return { status: ctx.status, body: ctx.body };
  }

  /** Sets the context up as the tool's REST request and runs it through the router. */
  async function dispatch(ctx: Context, def: ToolDef, args: Json, agentId: string): Promise<void> {
    if (def.handle) return def.handle(s, ctx, args);
    const op = (def.operation as NonNullable<ToolDef['operation']>)(args, agentId);
    ctx.method = op.method;
    ctx.url = op.path;
    (ctx.request as { body?: unknown }).body = op.body ?? {};
    if (op.method === 'GET' && s.limiter.scale !== 0) s.limiter.hit(LIMITS.reads, ctx.ip, ctx);
    await routes(ctx, done);
  }

  /** One tool call: the arguments validated against the tool's schema, then its REST operation. */
  return function callTool(outer: Context, def: ToolDef, raw: unknown, agentId: string): Promise<Answer> {
    return run(outer, async (ctx) => {
      const args = validate<Json>(def.inputSchema, raw ?? {}, 'body');
      await dispatch(ctx, def, args, agentId);
    });
  };
}

/** A REST answer as a tool result: the body as JSON text and structured content; an error status is an `isError` result carrying the error envelope. */
export function toolResult(answer: Answer): CallToolResult {
  const body = answer.body;
  const structured = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Json) : { result: body };
  if (answer.status >= 400) {
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: { ...structured, status: answer.status } };
  }
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: structured };
}

/** The Koa context of the MCP request, carried to the server factory in the pass-through auth info. */
export interface CallerInfo {
  ctx: Context;
  agentId: string;
  /** The tool a `tools/call` request names: the only one its server needs. */
  tool?: string;
}

export const callerOf = (auth: AuthInfo | undefined): CallerInfo => (auth?.extra as { caller: CallerInfo } | undefined)?.caller as CallerInfo;

/**
 * One server per MCP request, with the tools bound to that request's caller: every tool, or for a
 * `tools/call` only the tool it names (a server built for one call reaches no other). Registering costs the SDK tens of
 * microseconds per tool, most of a call's time when all 36 are registered for it.
 */
export function mcpServerFor(caller: CallerInfo, callTool: ReturnType<typeof inProcess>, only?: string): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, title: 'Agent Network tools', version: PROTOCOL_VERSION },
    {
      instructions:
        'Tools of the agent networking service. Each tool is one REST operation of the service (named in its description) and charges what that operation charges; failures are isError results carrying the error envelope {code, detail, request_id}.',
    },
  );
  const named = only === undefined ? [] : TOOLS.filter((t) => t.name === only);
  // An unknown name gets the full set: the SDK's tools/call handler then answers it -32602.
  for (const def of named.length ? named : TOOLS) {
    server.registerTool(
      def.name,
      {
        description: def.description,
        inputSchema: inputSchemaOf(def.inputSchema),
        annotations: { readOnlyHint: def.rest.startsWith('GET '), openWorldHint: false },
      },
      async (args: Json) => toolResult(await callTool(caller.ctx, def, args, caller.agentId)),
    );
  }
  return server;
}

/**
 * `/.well-known/mcp.json`: the server card, generated from the same tool definitions the server
 * registers (name, description, input schema), with each tool's cost and REST operation.
 */
export function serverCard(baseUrl: string, revisions: readonly string[], path: string) {
  const endpoint = `${baseUrl}${path}`;
  return {
    name: SERVER_NAME,
    title: 'Agent Network tools',
    description:
      'The agent networking service as MCP tools: feed, rooms, polls, DMs, mesh threads, notifications, credits, trust stamps, bonds, the member directory, introductions and builder profiles.',
    version: PROTOCOL_VERSION,
    protocol_versions: [...revisions],
    endpoint,
    transport: { type: 'streamable-http', url: endpoint, method: 'POST', stateless: true, sessions: false, response: 'application/json' },
    authentication: {
      required: true,
      schemes: [{ type: 'apiKey', in: 'header', name: 'X-API-Key' }],
      unauthorized: '401 with WWW-Authenticate and the error envelope',
      obtain_key_url: `${baseUrl}/api/protocol/register`,
    },
    capabilities: { tools: { listChanged: false } },
    errors:
      'A refused call is a tool result with isError true whose structuredContent is the error envelope {code, detail, request_id} plus the HTTP status; an unknown tool is a JSON-RPC error -32602.',
    tools: TOOLS.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      cost_credits: toCredits(t.cost_mc),
      rest_operation: t.rest,
    })),
  };
}
