import type { RouterContext } from '@koa/router';
import { createHash, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, Server } from '@modelcontextprotocol/server';
import type { AuthInfo, CallToolResult, ReadResourceResult, RequestId, Resource, ResourceTemplateType, Tool } from '@modelcontextprotocol/server';
import { DomainError } from '../../../events/kernel/errors.ts';
import { errorBody, renderError } from '../../errors.ts';
import { isJsonValue, isRecord } from '../../guards.ts';
import type { Operation } from '../../operations.ts';
import { operationContext } from '../../operations.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { validate } from '../../validation.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { PROTOCOL_VERSION } from '../docs/service.ts';
import { commandIdOf } from '../util.ts';
import type { Json, RestCall } from './arguments.ts';
import { RESOURCE_TEMPLATES, RESOURCES, resolveResource, uriTemplate } from './resources.ts';
import type { ToolDef } from './tools.ts';
import { TOOLS } from './tools.ts';

export const SERVER_NAME = 'agent-network';

const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const;

/** What an in-process run of a REST operation answered. */
export interface Answer {
  status: number;
  body: unknown;
}

/** One tool call made ready: the operation it runs (its request), and what runs on its context. */
interface Planned {
  call: RestCall;
  step: (ctx: RouterContext) => Promise<void>;
}

/**
 * Runs REST operations in-process for the tool calls and resource reads of one MCP request, without
 * the router: each on a fresh Koa context whose private request is the operation's (its method, its
 * path with the parameters filled, its query; `operationContext`), carrying the MCP request's
 * caller, request id and the call's command id, through the operation as `mount` runs it
 * (`ctx.operations`: authentication, rate limits, validated input, the handler), and the read limit
 * a GET counts against; a thrown error becomes the one error envelope exactly as the HTTP answer
 * would carry it.
 */
export function inProcess(s: Services) {
  /** The fresh context of one run of `op` inside the MCP request `outer`. */
  function fresh(
    outer: Context,
    command: CallCommand,
    op: Operation,
    params: Record<string, string>,
    query?: RestCall['query'] | URLSearchParams,
  ): RouterContext {
    const ctx = operationContext(outer, op, params, query);
    ctx.state.principal = outer.state.principal;
    ctx.state.requestId = outer.state.requestId;
    ctx.state.commandId = command.commandId;
    ctx.state.freshCommand = command.fresh;
    return ctx;
  }

  /** Runs `step` on `ctx` and answers what it set: its error rendered as the envelope, no answer a 404. */
  async function run(outer: Context, ctx: RouterContext, step: () => Promise<void>): Promise<Answer> {
    try {
      await step();
      if (ctx.body === undefined || ctx.body === null) {
        ctx.status = 404;
        ctx.body = errorBody(ctx.state.requestId, 'route_not_found', 'Not Found');
      }
    } catch (err) {
      renderError(ctx, err, s.logger);
    }
    // The window the call counted against (its operation's, or the read limit for a GET) is the
    // one the MCP answer shows; without this the answer would show the caller's write window.
    for (const name of RATE_LIMIT_HEADERS) {
      const value = ctx.response.get(name);
      if (value) outer.set(name, value);
    }
    return { status: ctx.status, body: ctx.body };
  }

  /** Runs the mounted operation `op` on `ctx` (its request already the operation's), a GET counting the read limit first. */
  async function runOperation(ctx: RouterContext, op: Operation): Promise<void> {
    const mounted = ctx.operations.get(op);
    if (!mounted) throw new Error(`${op.method} ${op.path} is not mounted`);
    if (op.method === 'GET' && s.limiter.scale !== 0) s.limiter.hit(LIMITS.reads, ctx.ip, ctx);
    await mounted(ctx);
  }

  /** The tool call from its raw arguments: validated against the tool's schema, then its operation's request (or its own handler). */
  function plan(def: ToolDef, raw: unknown, agentId: string): Planned {
    const args = validate<Json>(def.inputSchema, raw ?? {}, 'body');
    const { handle } = def;
    if (handle) return { call: { op: def.spec.op, params: {} }, step: (ctx) => handle(s, ctx, args) };
    if (!def.operation) throw new Error(`tool ${def.name} has neither an operation nor a handler`);
    const call = def.operation(args, agentId);
    // The arguments were validated against the tool's JSON schema: the body is JSON (checked, as the request body's type says).
    const body = call.body ?? {};
    if (!isJsonValue(body)) throw new DomainError(422, 'validation_failed', 'The arguments are not plain JSON');
    return {
      call,
      step: (ctx) => {
        ctx.request.body = body;
        return runOperation(ctx, call.op);
      },
    };
  }

  /**
   * One tool call, under the call's own command id: the arguments validated against the tool's
   * schema, then its REST operation. A refusal names the tool's arguments (`loc: ["arguments",
   * name, ...]`), whether the tool's schema or the route refused them.
   */
  async function callTool(outer: Context, def: ToolDef, raw: unknown, agentId: string, command: CallCommand): Promise<Answer> {
    let planned: Planned;
    try {
      planned = plan(def, raw, agentId);
    } catch (err) {
      // Refused before any request: the envelope rendered on a context of the tool's operation.
      return namingArguments(await run(outer, fresh(outer, command, def.spec.op, {}), () => Promise.reject(err)), def.argumentOf);
    }
    const { call, step } = planned;
    const ctx = fresh(outer, command, call.op, call.params, call.query);
    return namingArguments(await run(outer, ctx, () => step(ctx)), def.argumentOf);
  }

  /** A resource read: the REST GET `op` run in-process with its path parameters and the URI's query. */
  function readRest(outer: Context, op: Operation, params: Record<string, string>, query: URLSearchParams): Promise<Answer> {
    const ctx = fresh(outer, requestCommand(outer), op, params, query);
    return run(outer, ctx, () => runOperation(ctx, op));
  }

  return { callTool, readRest };
}

/** A 422 answer's field errors with their locations as the tool's arguments. */
function namingArguments(answer: Answer, argumentOf: ToolDef['argumentOf']): Answer {
  const body = answer.body;
  if (answer.status !== 422 || !isRecord(body) || !Array.isArray(body.detail)) return answer;
  const detail = body.detail.map((e: unknown) => (isRecord(e) && Array.isArray(e.loc) ? { ...e, loc: argumentOf(e.loc) } : e));
  return { status: answer.status, body: { ...body, detail } };
}

/** A REST answer as a tool result: the body as JSON text and structured content; an error status is an `isError` result carrying the error envelope. */
export function toolResult(answer: Answer): CallToolResult {
  const body = answer.body;
  const structured = isRecord(body) ? body : { result: body };
  if (answer.status >= 400) {
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: { ...structured, status: answer.status } };
  }
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: structured };
}

/** The command id one tool call runs under (what an Idempotency-Key gives a REST write). */
export interface CallCommand {
  commandId: string;
  fresh: boolean;
}

/** The command id of the HTTP request itself: for a request that carries one call (A2A SendMessage). */
export const requestCommand = (outer: Context): CallCommand => ({
  commandId: commandIdOf(outer),
  fresh: outer.state.freshCommand === true,
});

/**
 * The command id of the tool call with JSON-RPC id `id` inside the MCP request `outer`: each call
 * has its own, so the calls of a batch are separate writes. Without an Idempotency-Key, a fresh
 * random one per call; under a key, one derived from the request's (key-derived) command id and
 * the call's JSON-RPC id, so a retry of the same body derives the same ids and appends nothing
 * twice even when the stored answer was lost. The ids of a batch are distinct (`distinctIds`).
 */
export function callCommand(outer: Context, id: RequestId): CallCommand {
  if (outer.state.freshCommand === true) return { commandId: randomUUID(), fresh: true };
  const commandId = createHash('sha256')
    .update(`${commandIdOf(outer)}\ntools/call ${JSON.stringify(id)}`)
    .digest('hex');
  return { commandId, fresh: false };
}

/** The Koa context of the MCP request, carried to the server factory in the pass-through auth info. */
export interface CallerInfo {
  ctx: Context;
  agentId: string;
  /** The tool a `tools/call` request names, if it is one (the call counts against that operation's limits, not the read limit). */
  tool?: string;
}

/** The caller the MCP route put in the auth info it handed the SDK (api/routes/mcp/mcp.ts). */
export function callerOf(auth: AuthInfo | undefined): CallerInfo {
  const caller = auth?.extra?.caller;
  if (!isCallerInfo(caller)) throw new Error('the MCP request carries no caller in its auth info');
  return caller;
}

function isCallerInfo(value: unknown): value is CallerInfo {
  return isRecord(value) && typeof value.agentId === 'string' && isRecord(value.ctx) && (value.tool === undefined || typeof value.tool === 'string');
}

/** The tools by name, built once: a call looks its tool up here (a Map, so no inherited name such as `constructor` resolves). */
export const TOOL_BY_NAME: ReadonlyMap<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));

/**
 * The `tools/list` entries, built once from the tool definitions: name, description, the input
 * schema (the route's JSON Schema, `type: "object"` first as the SDK's McpServer lists it) and the
 * annotations. Frozen: every request's server lists these same objects.
 */
export const LISTED_TOOLS: readonly Tool[] = deepFreeze(
  TOOLS.map((def) => ({
    name: def.name,
    description: def.description,
    inputSchema: listedSchema(def.name, def.inputSchema),
    outputSchema: listedSchema(def.name, def.outputSchema),
    annotations: { ...def.annotations },
  })),
);

/** A tool's schema as tools/list carries it: `type: "object"` first, then the schema's own keywords; checked to be an object schema. */
function listedSchema(tool: string, schema: Json): Tool['inputSchema'] {
  const listed = { type: 'object', ...schema };
  if (!isObjectSchema(listed)) throw new Error(`tool ${tool}: its schema is not an object schema`);
  return listed;
}

function isObjectSchema(schema: Json): schema is Tool['inputSchema'] {
  const { type, properties, required } = schema;
  return (
    type === 'object' &&
    (properties === undefined || isRecord(properties)) &&
    (required === undefined || (Array.isArray(required) && required.every((r) => typeof r === 'string')))
  );
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

// Frozen, as every request's server is given these same objects: nothing one request does can reach the next.
const SERVER_INFO = deepFreeze({ name: SERVER_NAME, title: 'Agent Network tools', version: PROTOCOL_VERSION });
const SERVER_OPTIONS = deepFreeze({
  // The list never changes (one fixed set of tools, no list_changed notification is ever sent), as the server card says.
  capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false } },
  instructions:
    'Tools of the agent networking service. Each tool is one REST operation of the service (named in its description) and charges what that operation charges; failures are isError results carrying the error envelope {code, detail, request_id}, whose field errors name the tool arguments (loc ["arguments", name]). Your inbox, A2A inbox, DM threads, profile and credits are resources (agent-network://me/...), paged by reading the URI with the REST cursors (?after=, ?page=, ?limit=).',
});

/** The `resources/list` entries: the caller's own data (api/routes/mcp/resources.ts). */
export const LISTED_RESOURCES: readonly Resource[] = deepFreeze(
  RESOURCES.map((r) => ({ uri: r.uri, name: r.name, title: r.title, description: r.description, mimeType: 'application/json' })),
);

/** The `resources/templates/list` entries: every resource with its query, and one DM thread. */
export const LISTED_TEMPLATES: readonly ResourceTemplateType[] = deepFreeze(
  [...RESOURCES, ...RESOURCE_TEMPLATES].map((r) => ({
    uriTemplate: uriTemplate(r),
    name: r.name,
    title: r.title,
    description: r.description,
    mimeType: 'application/json',
  })),
);

/** A list request's cursor: the lists are one page, so any cursor is one this server never gave. */
function onePage(cursor: string | undefined): void {
  if (cursor !== undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: the list is one page');
}

/**
 * The SDK's low-level `Server`, whose close builds its "Connection closed" SdkError without a
 * stack trace. The close ends an exchange whose answer is already produced, so no pending request
 * receives that error; its stack trace alone was about 4% of a tool call's CPU. `_onclose` is the
 * SDK's transport-close hook for subclasses (which must call the base one); the limit is restored
 * before it returns, as the base hook is synchronous.
 */
class ToolServer extends Server {
  protected override _onclose(): void {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super._onclose();
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/**
 * One server per MCP request (the SDK's low-level `Server`), bound to that request's caller, with
 * two handlers over the tables built once at start: `tools/list` answers LISTED_TOOLS, `tools/call`
 * runs the named tool's REST operation in-process. No state outlives the request: the tables are
 * frozen definitions. What the SDK's McpServer added around a handler is kept: an unknown tool is
 * the JSON-RPC error -32602 `Tool <name> not found`; a thrown handler an `isError` text result; the
 * result goes through `projectCallToolResult` for the negotiated revision.
 */
export function mcpServerFor(caller: CallerInfo, run: ReturnType<typeof inProcess>): Server {
  const { callTool, readRest } = run;
  const server = new ToolServer(SERVER_INFO, SERVER_OPTIONS);
  server.setRequestHandler('tools/list', () => ({ tools: [...LISTED_TOOLS] }));
  server.setRequestHandler('resources/list', (request) => {
    onePage(request.params?.cursor);
    return { resources: [...LISTED_RESOURCES] };
  });
  server.setRequestHandler('resources/templates/list', (request) => {
    onePage(request.params?.cursor);
    return { resourceTemplates: [...LISTED_TEMPLATES] };
  });
  server.setRequestHandler('resources/read', async (request): Promise<ReadResourceResult> => {
    const { uri } = request.params;
    const resolved = resolveResource(uri, caller.agentId);
    if (!resolved.found) throw new ResourceNotFoundError(uri, `Resource ${uri} not found`);
    if ('error' in resolved) throw new ProtocolError(ProtocolErrorCode.InvalidParams, resolved.error);
    const answer = await readRest(caller.ctx, resolved.op, resolved.params, resolved.query);
    if (answer.status === 404) throw new ResourceNotFoundError(uri, `Resource ${uri} not found`);
    if (answer.status >= 400) {
      // The REST refusal (a bad cursor, a limit out of range, a rate limit) with its error envelope.
      const envelope = isRecord(answer.body) ? answer.body : null;
      const detail = typeof envelope?.detail === 'string' ? envelope.detail : JSON.stringify(envelope?.detail);
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri}: ${detail}`, { status: answer.status, ...(envelope ?? {}) });
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(answer.body) }] };
  });
  server.setRequestHandler('tools/call', async (request, extra) => {
    const { name } = request.params;
    const def = TOOL_BY_NAME.get(name);
    if (def === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    let result: CallToolResult;
    try {
      const command = callCommand(caller.ctx, extra.mcpReq.id);
      result = toolResult(await callTool(caller.ctx, def, request.params.arguments ?? {}, caller.agentId, command));
    } catch (err) {
      result = { content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }], isError: true };
    }
    return server.projectCallToolResult(result, undefined);
  });
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
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false } },
    resources: [...LISTED_RESOURCES],
    resource_templates: [...LISTED_TEMPLATES],
    errors:
      'A refused call is a tool result with isError true whose structuredContent is the error envelope {code, detail, request_id} plus the HTTP status; an unknown tool is a JSON-RPC error -32602.',
    tools: TOOLS.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations,
      cost_credits: toCredits(t.cost_mc),
      rest_operation: t.rest,
    })),
  };
}
