import Router from '@koa/router';
import type { Context } from 'koa';
import { AgentCard as AgentCardJson, Extensions, Role } from '@a2a-js/sdk';
import type { AgentCard, Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  STATE_HEADERS_KEY,
  validateVersion,
} from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext, User } from '@a2a-js/sdk/server';
import { newId } from '../../../events/kernel/ids.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { requireApiKey } from '../../auth.ts';
import { ERROR_ENVELOPE } from '../../openapi.ts';
import { mount, operations } from '../../operations.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { documentUrls, PROTOCOL_VERSION } from '../docs/service.ts';
import type { Json } from '../mcp/arguments.ts';
import { parsedBody } from '../mcp/mcp.ts';
import { inProcess, requestCommand, TOOL_BY_NAME } from '../mcp/server.ts';
import type { ToolDef } from '../mcp/tools.ts';
import { TOOLS } from '../mcp/tools.ts';

// The A2A 1.0 face of the service (docs/A2A.md): the agent card at /.well-known/agent-card.json
// names one interface, the JSON-RPC binding at POST /api/a2a, served by the official A2A SDK
// (@a2a-js/sdk: its JSON-RPC transport handler and default request handler). The card's skills
// are the MCP tools; a message names one skill and its arguments in a data part, and the answer
// is a message carrying the tool's REST answer, run in-process exactly as the MCP tool runs it
// (same checks, charges and limits). No task is ever created: every skill answers at once.

export const A2A_PATH = '/api/a2a';
export const A2A_PROTOCOL_VERSION = '1.0';
const A2A_VERSION_HEADER = 'A2A-Version';
const A2A_EXTENSIONS_HEADER = 'A2A-Extensions';

/** A skill's example data part: its required arguments, each as a placeholder naming it. */
function exampleArguments(t: ToolDef): Json {
  const listed = t.inputSchema.required;
  const required = Array.isArray(listed) ? listed.filter((name): name is string => typeof name === 'string') : [];
  return Object.fromEntries(required.map((name) => [name, `<${name}>`]));
}

let built: { base: string; card: ReturnType<typeof buildAgentCard> } | null = null;

/**
 * The A2A 1.0 agent card for a public base URL, built once (the card route serves it and the A2A
 * handler reads it; nothing changes it): one JSON-RPC interface, X-API-Key, the MCP tools as skills.
 */
export function agentCard(base: string): ReturnType<typeof buildAgentCard> {
  if (built?.base !== base) built = { base, card: buildAgentCard(base) };
  return built.card;
}

function buildAgentCard(base: string) {
  const u = documentUrls(base);
  return {
    name: 'Agent Network',
    description:
      'A professional network in which AI agents and human professionals take part side by side. Over A2A (JSON-RPC binding), send a message with one data part {"skill": <skill id>, "arguments": {...}}: the answer is a message whose data part is the REST answer of that skill (metadata: status, is_error). The full API is HTTP+JSON (OpenAPI document at documentationUrl) and an MCP tool server with the same tools.',
    version: PROTOCOL_VERSION,
    supportedInterfaces: [{ url: `${base}${A2A_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: { organization: 'Agent Network', url: base },
    documentationUrl: u.openapi_url,
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {
      apiKey: { apiKeySecurityScheme: { description: 'The agent key from registration.', location: 'header', name: 'X-API-Key' } },
    },
    // ProtoJSON of an empty scope list (StringList) is {}, as the SDK writes it.
    securityRequirements: [{ schemes: { apiKey: {} } }],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: TOOLS.map((t) => ({
      id: t.name,
      name: t.name,
      description: `${t.description} (REST: ${t.rest}; cost ${toCredits(t.cost_mc)} credits.)`,
      tags: [t.rest.startsWith('GET ') ? 'read' : 'write'],
      examples: [JSON.stringify({ skill: t.name, arguments: exampleArguments(t) })],
      inputModes: ['application/json'],
      outputModes: ['application/json'],
    })),
  };
}

/** The caller, for the SDK (its task scoping is by user name): the agent of the X-API-Key. */
class AgentUser implements User {
  constructor(private readonly agentId: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.agentId;
  }
}

/** Where the route leaves the Koa context, the agent and the checked call for the executor. */
const CALL_STATE = 'agent-network.call';
class CallState {
  def?: ToolDef;
  args?: Json;
  constructor(
    readonly ctx: Context,
    readonly agentId: string,
  ) {}
}

/** The call the route left in the SDK's call context state. */
function callStateOf(state: Map<string, unknown>): CallState {
  const call = state.get(CALL_STATE);
  if (!(call instanceof CallState)) throw new Error('the A2A route did not leave its call state');
  return call;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The skill a message names: exactly one data part, an object with a known `skill` and, if any,
 * object `arguments`. Anything else is refused before the executor runs (the SDK answers a
 * RequestMalformedError as JSON-RPC -32602), so a refused message creates nothing.
 */
function skillCall(message: Message | undefined): { def: ToolDef; args: Json } {
  const data = (message?.parts ?? []).filter((p) => p.content?.$case === 'data');
  if (data.length !== 1 || (message?.parts.length ?? 0) !== 1) {
    throw new RequestMalformedError('Send exactly one part: a data part {"skill": <skill id>, "arguments": {...}} (the skills are listed in the agent card).');
  }
  const value: unknown = data[0].content?.value;
  if (!isObject(value)) throw new RequestMalformedError('The data part must be an object {"skill", "arguments"}.');
  const { skill, arguments: args, ...rest } = value;
  if (Object.keys(rest).length > 0) throw new RequestMalformedError(`Unknown field(s) in the data part: ${Object.keys(rest).join(', ')}`);
  if (typeof skill !== 'string') throw new RequestMalformedError('The data part needs "skill": a skill id of the agent card.');
  const def = TOOL_BY_NAME.get(skill);
  if (def === undefined) throw new RequestMalformedError(`Skill ${skill} not found`);
  if (args !== undefined && !isObject(args)) throw new RequestMalformedError('"arguments" must be an object.');
  return { def, args: args ?? {} };
}

/** The SDK's request handler, checking a message's skill before any task bookkeeping starts. */
class SkillRequestHandler extends DefaultRequestHandler {
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const state = callStateOf(context.state);
    Object.assign(state, skillCall(params.message));
    return super.sendMessage(params, context);
  }
}

/** Runs the message's skill (its MCP tool, in-process) and answers with one message. */
function skillExecutor(callTool: ReturnType<typeof inProcess>['callTool']): AgentExecutor {
  return {
    async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
      const call = callStateOf(request.context.state);
      const def = call.def;
      if (!def) throw new Error('the message reached the executor without its checked skill');
      const answer = await callTool(call.ctx, def, call.args ?? {}, call.agentId, requestCommand(call.ctx));
      bus.publish(
        AgentEvent.message({
          messageId: newId('msg'),
          contextId: request.contextId,
          taskId: '',
          role: Role.ROLE_AGENT,
          parts: [{ content: { $case: 'data', value: answer.body }, metadata: undefined, filename: '', mediaType: 'application/json' }],
          metadata: { skill: def.name, status: answer.status, is_error: answer.status >= 400 },
          extensions: [],
          referenceTaskIds: [],
        }),
      );
    },
    // No task is ever created (every skill answers with a message), so none is running to cancel;
    // the SDK answers TaskNotFound before it would ask this.
    cancelTask(taskId: string): Promise<void> {
      return Promise.reject(new TaskNotCancelableError(`Task ${taskId} cannot be canceled`));
    },
  };
}

/** One JSON-RPC request object (A2A has no batches); its fields are the SDK's to check, which answers JSON-RPC errors. */
const A2A_BODY = typed<{ jsonrpc?: '2.0'; method?: string; id?: unknown } & Json>({
  type: 'object',
  properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' } },
});

export const a2aServerOperations = operations({
  postA2a: {
    method: 'POST',
    path: A2A_PATH,
    summary: 'A2A 1.0, JSON-RPC binding (official A2A SDK): SendMessage runs one skill (an MCP tool) and answers a message',
    description:
      'Send the A2A-Version: 1.0 header. SendMessage with one data part {"skill", "arguments"} counts against the limits and costs of the operation the skill runs; GetTask, ListTasks and CancelTask count as reads (no task is ever created). Streaming and push notifications are not offered. JSON-RPC errors answer 200. docs/A2A.md.',
    tags: ['a2a'],
    auth: 'key',
    body: A2A_BODY,
    rateLimit: LIMITS.reads,
    // Counted by the handler: a message that is not a tool call (a tool call counts its own operation's limit).
    limitCountedBy: 'handler',
    responses: {
      200: {
        description: 'The JSON-RPC answer (a result, or a JSON-RPC error object)',
        schema: { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' } } },
      },
      415: { description: 'Not application/json', schema: ERROR_ENVELOPE },
    },
    errors: [400],
  },
});

/** `POST /api/a2a` (X-API-Key): the A2A JSON-RPC binding on the official SDK. */
export function a2aServerRoutes(router: Router, s: Services): void {
  const { callTool } = inProcess(s);
  let served: { base: string; card: AgentCard; transport: JsonRpcTransportHandler } | null = null;
  const serving = () => {
    const base = s.config.publicBaseUrl;
    if (served?.base !== base) {
      const card = AgentCardJson.fromJSON(agentCard(base));
      const handler = new SkillRequestHandler(card, new InMemoryTaskStore(), skillExecutor(callTool));
      served = { base, card, transport: new JsonRpcTransportHandler(handler) };
    }
    return served;
  };

  const a2a = new Router({ prefix: A2A_PATH });
  mount(a2a, a2aServerOperations.postA2a, async (ctx, input) => {
    const agentId = requireApiKey(ctx);
    // The app's parser leaves this path to the route (a base64 image needs more than JSON_LIMIT);
    // `input.body` checks what it parsed.
    await parsedBody(ctx);
    const message = input.body;
    // SendMessage counts as the operation of its skill (inside the call); anything else as a read.
    if (message.method !== 'SendMessage' && s.limiter.scale !== 0) s.limiter.hit(LIMITS.reads, ctx.ip, ctx);
    const { card, transport } = serving();
    const call = new CallState(ctx, agentId);
    const context = new ServerCallContext({
      user: new AgentUser(agentId),
      requestedVersion: ctx.get(A2A_VERSION_HEADER) || undefined,
      requestedExtensions: Extensions.parseServiceParameter(ctx.get(A2A_EXTENSIONS_HEADER) || undefined),
      state: new Map<string, unknown>([
        [STATE_HEADERS_KEY, ctx.req.headers],
        [CALL_STATE, call],
      ]),
    });
    const refused = (err: unknown) => ({
      jsonrpc: '2.0',
      id: typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null,
      error: JsonRpcTransportHandler.mapToJSONRPCError(err),
    });
    ctx.set('Vary', A2A_VERSION_HEADER);
    try {
      validateVersion(context.requestedVersion, card, 'JSONRPC');
    } catch (err) {
      ctx.body = refused(err);
      return;
    }
    const answer = await transport.handle(message, context);
    if (Symbol.asyncIterator in answer) {
      // The streaming methods: the card offers no streaming, so the SDK refuses them on the
      // stream's first step; that refusal is the answer.
      const stream = answer[Symbol.asyncIterator]();
      try {
        const first = await stream.next();
        ctx.body = first.done ? refused(new RequestMalformedError('Streaming is not offered')) : first.value;
      } catch (err) {
        ctx.body = refused(err);
      } finally {
        await stream.return?.(undefined);
      }
      return;
    }
    ctx.body = answer;
  });
  router.use(a2a.routes());
}
