import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { Static, TSchema } from '@sinclair/typebox';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { ChargedAction } from '../commands/credits/tiers.ts';
import { DomainError } from '../events/kernel/errors.ts';
import type { Principal } from './auth.ts';
import { principalOf, requireApiKey } from './auth.ts';
import type { LimitRule, RateLimiter } from './rate-limit.ts';
import type { Schema, ValueOf } from './validation.ts';
import { isRecord } from './guards.ts';
import { MAX_PAGE, MAX_SKIP, NO_FIELDS_BODY, validate, validateQuery } from './validation.ts';

/**
 * The route table (docs/OPENAPI.md). Every route is one `Operation`: `mount` registers it and the
 * OpenAPI document (api/openapi.ts) is generated from the same objects, so the two cannot drift
 * (test/api/openapi.test.ts compares them).
 *
 * Auth: `key` X-API-Key (K), `bearer` a signed-in user (J), `key_or_bearer` either (K|J),
 * `admin` a bearer user with the admin role, `member` a person signed in to the site (the member
 * app's cookie session, api/web/member.ts; its forms carry a CSRF token), `none` public (a
 * credential, when sent, is still checked).
 */
export type Auth = 'none' | 'key' | 'bearer' | 'key_or_bearer' | 'admin' | 'member';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

declare module 'koa' {
  interface DefaultContext {
    /** The service's rate limiter (set on the app's context by api/app.ts), counted by `mount`. */
    limiter: RateLimiter;
    /** Every mounted operation as `mount` runs it, for `callOperation` (set on the app's context by api/app.ts). */
    operations: MountedOperations;
  }
}

/** An operation as `mount` runs it: authentication, rate limits, validated input, the handler, the list's paging. */
export type MountedOperation = (ctx: RouterContext) => Promise<void>;
export type MountedOperations = Map<Operation, MountedOperation>;

/** Where `mount` records what it registers while `collectOperations` runs. */
let collecting: MountedOperations | null = null;

/** Runs `register` (which mounts operations) and answers the operations it mounted, in order. */
export function collectOperations(register: () => void): MountedOperations {
  const outer = collecting;
  const mounted: MountedOperations = new Map();
  collecting = mounted;
  try {
    register();
  } finally {
    collecting = outer;
  }
  return mounted;
}

/** A documented answer: a JSON schema, or another media type (its schema, when it has one). */
export interface Answer {
  description?: string;
  schema?: Schema;
  /** Default application/json; '' for an answer without content (a redirect, an accepted notification). */
  contentType?: string;
  /** Other media types the same answer can come in (chosen by a query parameter, e.g. `format=csv`), same schema. */
  alsoContentTypes?: string[];
}

export interface Operation {
  /** The operationId: the op's key in its module's table (set by `operations`). */
  id?: string;
  method: Method;
  /** The full path as the router writes it (`/api/protocol/agents/:id`). */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: Auth;
  /** The request body's schema: `mount` validates the body against it when the handler reads `input.body`. */
  body?: Schema;
  /** The body may be left out (an empty body is `{}`). */
  bodyOptional?: boolean;
  /** Other request media type (multipart upload, an HTML form's application/x-www-form-urlencoded); with `body`, that body's media type. */
  bodyContentType?: string;
  /** Query parameters: an object schema whose properties are the parameters (each arrives as a string). */
  query?: Schema;
  /** Path parameters' schemas by name; a parameter not listed is a plain string. */
  params?: Record<string, Schema>;
  /** Success answers by status; default `{200: {schema: {type: 'object'}}}`. */
  responses?: Record<number, Answer>;
  /** Error statuses beyond the ones every operation of its kind can answer (see `errorStatuses`). */
  errors?: number[];
  /** The charged action (commands/credits/tiers.ts COSTS): its price is x-credits-cost. */
  cost?: ChargedAction;
  /**
   * The rate limit this operation counts against, besides the global read limit (x-rate-limit).
   * `mount` counts it for an API operation (a path under /api/) before the handler runs, per the
   * rule's `per` (api/rate-limit.ts); a page counts its own (it answers a refusal as a page).
   */
  rateLimit?: LimitRule;
  /**
   * 'handler': the handler counts `rateLimit` itself, because only some requests count (failed
   * sign-ins, refused registrations, JSON-RPC messages that are not tool calls).
   */
  limitCountedBy?: 'handler';
  /** More rate limits `mount` counts, before `rateLimit` (e.g. the write limit a schedule also counts). */
  alsoLimits?: LimitRule[];
}

/** Declares a table of operations (keyed by operationId); a typed identity. */
export function operations<T extends Record<string, Operation>>(table: T): T {
  for (const [id, op] of Object.entries(table)) op.id = id;
  return table;
}

/** The error statuses an operation can answer, beyond its own `errors`: by its auth, method and path. */
export function errorStatuses(op: Operation): number[] {
  // 503 service_starting: every request before the read models have caught up at start (api/server.ts).
  const statuses = new Set<number>([400, 422, 429, 503, ...(op.errors ?? [])]);
  // Any credential that is sent is checked, so even a public route can answer 401 to a bad one.
  statuses.add(401);
  if (op.auth !== 'none') statuses.add(403);
  if (op.path.includes(':')) statuses.add(404);
  if (op.method !== 'GET') {
    statuses.add(404);
    statuses.add(409);
    statuses.add(410); // agent_deactivated: a command on a deactivated agent
    statuses.add(413);
    statuses.add(415);
  }
  if (op.cost) statuses.add(402);
  return [...statuses].sort((a, b) => a - b);
}

/**
 * A request body or query typed from the operation's schema: `Static` of a TypeBox schema, the type
 * a plain schema names (`typed<T>(schema)`, api/validation.ts), a JSON object otherwise.
 */
type Typed<S> = S extends TSchema ? Static<S> : [ValueOf<S>] extends [never] ? Record<string, unknown> : ValueOf<S>;

/**
 * What a handler receives besides the context: the request body and query string, validated
 * against the operation's schemas (the 422 shape on failure) and typed from them. Each is
 * validated when the handler first reads it, so the handler's own checks of ownership or role
 * (403) come before any 422 about the input. A handler shared by operations with one body schema
 * can name it alone: `Input<{ body: typeof contentSchema }>`.
 */
export interface Input<O extends Partial<Operation> = Operation> {
  /** The body (`{}` for an optional body left out). Reading it answers 415 for a body that is not JSON. */
  readonly body: O extends { body: infer B } ? Typed<B> : unknown;
  /** The query string's parameters, as strings (the schema checked them). */
  readonly query: O extends { query: infer Q } ? Typed<Q> : Record<string, string | string[] | undefined>;
  /** Validates the body now, for a handler that takes no fields from it (a write without `body`: a JSON object, or none). */
  checkBody(): void;
}

export type Handler<O extends Operation = Operation> = (ctx: RouterContext, input: Input<O>) => unknown;

const unauthorized = (detail: string) => new DomainError(401, 'unauthorized', detail);

/** An API operation: its path is under /api/ (the rest are pages, documents and probes). */
export const isApiOperation = (op: Operation): boolean => op.path.startsWith('/api/');

/**
 * The operation's authentication (`auth`) for an API operation: a caller of the right kind, checked
 * before anything else. Finer checks (a linked agent, ownership of the record, a community role)
 * stay with the handler, which knows the record. Pages sign in with their own cookie sessions,
 * checked by their routers (api/web/member.ts, api/console/session.ts).
 */
function authenticationOf(op: Operation): ((ctx: RouterContext) => void) | null {
  if (!isApiOperation(op)) return null;
  switch (op.auth) {
    case 'none':
    case 'member':
      return null;
    case 'key':
      return (ctx) => void requireApiKey(ctx);
    case 'key_or_bearer':
      return (ctx) => {
        if (!principalOf(ctx)) throw unauthorized('X-API-Key header or bearer token required');
      };
    case 'bearer':
    case 'admin':
      return (ctx) => {
        const p = principalOf(ctx);
        if (!p || p.kind !== 'user') throw unauthorized('A bearer token is required (Authorization: Bearer <ACCESS_TOKEN>)');
        if (op.auth === 'admin' && !p.roles.includes('super_admin')) throw new DomainError(403, 'admin_required', 'This needs the super admin role');
      };
  }
}

/** Whose window a rate limit counts (`LimitRule.per`): the caller by default, else the signed-in user, the client address, or a key of the request. */
function limitKey(ctx: RouterContext, rule: LimitRule): string {
  const per = rule.per ?? 'caller';
  if (typeof per === 'function') return per(ctx);
  const p = principalOf(ctx);
  if (per === 'address' || !p) return ctx.ip;
  if (per === 'user' && p.kind === 'user') return p.userId;
  return p.agentId ?? (p.kind === 'user' ? p.userId : ctx.ip);
}

/** The rate limits `mount` counts for `op`, in order: the documented `rateLimit` last, so its headers are the answer's. */
function limitsOf(op: Operation): LimitRule[] {
  if (!isApiOperation(op)) return [];
  return [...(op.alsoLimits ?? []), ...(op.rateLimit && op.limitCountedBy !== 'handler' ? [op.rateLimit] : [])];
}

/**
 * Registers `op` on `router` (a resource router with a literal prefix that the op's path starts
 * with). The route table does the work: for an API operation the caller is authenticated as
 * `op.auth` says and the operation's rate limits are counted, before the handler runs; the
 * handler gets the body and query validated against the operation's schemas (`Input`); a list
 * operation's answer is completed (`finishPage`). The request names its operation
 * (`ctx.state.operation`) and route template (`ctx.state.route`, the metrics' label).
 */
export function mount<O extends Operation>(router: Router, op: O, handler: Handler<O>): void {
  const prefix = router.opts.prefix ?? '';
  if (!op.path.startsWith(prefix)) throw new Error(`${op.method} ${op.path} is not under its router's prefix ${prefix}`);
  const rel = op.path === prefix ? '/' : op.path.slice(prefix.endsWith('/') ? prefix.length - 1 : prefix.length);
  const list = listOf(op);
  const authenticate = authenticationOf(op);
  const rules = limitsOf(op);
  // A route that takes a JSON body refuses another media type with 415 when the handler reads the body.
  const jsonBody = op.method !== 'GET' && !op.bodyContentType;
  const run = async (ctx: RouterContext): Promise<void> => {
    ctx.state.operation = op;
    ctx.state.route = op.path;
    if (authenticate) authenticate(ctx);
    for (const rule of rules) ctx.limiter.hit(rule, limitKey(ctx, rule), ctx);
    if (op.query) validateQueryOnFirstRead(ctx, op.query);
    const contentType = ctx.req.headers['content-type'];
    if (jsonBody && contentType !== undefined) refuseOtherMediaTypeOnRead(ctx, contentType);
    await handler(ctx, inputOf<O>(ctx, op));
    if (list) finishPage(ctx, list.cursorParam);
  };
  collecting?.set(op, run);
  switch (op.method) {
    case 'GET':
      router.get(rel, run);
      break;
    case 'POST':
      router.post(rel, run);
      break;
    case 'PUT':
      router.put(rel, run);
      break;
    case 'PATCH':
      router.patch(rel, run);
      break;
    case 'DELETE':
      router.delete(rel, run);
      break;
  }
}

/** One call of an operation inside another request (`callOperation`). */
export interface OperationCall {
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Who calls: the outer request's caller unless given. */
  principal?: Principal;
}

/**
 * Runs a mounted operation inside the request `outer` (an action that is another endpoint's
 * work): a fresh context on a private request that carries the outer request's caller, request
 * id, command id and credit meter, through the operation as `mount` runs it (authentication, rate
 * limits, validated input, the handler), without the router. The answer's headers (rate limit,
 * cost) go on the outer answer; an error is thrown as the operation threw it. Answers the
 * operation's body.
 */
export async function callOperation(outer: Context, op: Operation, call: OperationCall): Promise<unknown> {
  const run = outer.operations.get(op);
  if (!run) throw new Error(`${op.method} ${op.path} is not mounted`);
  const ctx = operationContext(outer, op, call.params ?? {}, call.query);
  // koa-body types a parsed body as JSON; a call's body is the caller's value, validated when the handler reads it.
  (ctx.request as { body?: unknown }).body = call.body ?? {};
  const { requestId, commandId, freshCommand, creditMeter, dryRun, principal } = outer.state;
  Object.assign(ctx.state, { requestId, commandId, freshCommand, creditMeter, dryRun, principal: call.principal ?? principal });
  await run(ctx);
  for (const [name, value] of Object.entries(ctx.response.headers)) if (value !== undefined) outer.set(name, typeof value === 'number' ? String(value) : value);
  return ctx.body;
}

/**
 * A fresh context inside the request `outer` for one run of `op` without the router: a private
 * request whose method is the operation's and whose URL is its path with `params` filled in and
 * `query` as the query string (so `ctx.path` and `ctx.query` are what the operation reads), with
 * `ctx.params` set as the router would set them. It carries the outer request's host and client
 * address (X-Forwarded-For) and a JSON Content-Type; no state and no body (the caller sets those).
 */
export function operationContext(
  outer: Context,
  op: Operation,
  params: Record<string, string>,
  query?: OperationCall['query'] | URLSearchParams,
): RouterContext {
  const path = op.path.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
  const search = new URLSearchParams();
  if (query instanceof URLSearchParams) for (const [k, v] of query) search.append(k, v);
  else for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') search.set(k, String(v));
  const req = new IncomingMessage(outer.req.socket);
  req.method = op.method;
  req.url = search.size > 0 ? `${path}?${search.toString()}` : path;
  const forwarded = outer.req.headers['x-forwarded-for'];
  req.headers = { host: outer.req.headers.host ?? 'localhost', 'content-type': 'application/json', ...(forwarded ? { 'x-forwarded-for': forwarded } : {}) };
  // Koa's createContext types a plain Context; the router's `params` is set on the next line.
  const ctx = outer.app.createContext(req, new ServerResponse(req)) as RouterContext;
  ctx.params = params;
  return ctx;
}

/** The handler's `Input`: body and query validated when first read. */
function inputOf<O extends Operation>(ctx: RouterContext, op: Operation): Input<O> {
  // A write that declares no body takes none, or a JSON object it does not read (docs/OPENAPI.md).
  const schema = op.body ?? (op.method !== 'GET' && !op.bodyContentType ? NO_FIELDS_BODY : undefined);
  const optional = op.bodyOptional === true || op.body === undefined;
  let body: unknown;
  let bodyRead = false;
  return {
    get body() {
      if (!bodyRead) {
        const raw: unknown = ctx.request.body;
        body = schema ? validate(schema, raw ?? (optional ? {} : raw)) : raw;
        bodyRead = true;
      }
      // `validate` checked it against the operation's body schema, whose static type Input<O> names.
      return body as Input<O>['body'];
    },
    get query() {
      // The query schema checked it on first read (validateQueryOnFirstRead); Input<O> names its static type.
      return ctx.query as Input<O>['query'];
    },
    checkBody() {
      void this.body;
    },
  };
}

/**
 * A list operation (docs/PAGING.md): a GET whose answer declares `has_more`. `cursorParam` is the
 * query parameter its `next_cursor` goes back in (`after`, or `cursor` on the browse lists), null
 * for a list paged by `page` only.
 */
export function listOf(op: Operation): { cursorParam: 'after' | 'cursor' | null } | null {
  if (op.method !== 'GET') return null;
  const answer = op.responses?.[200]?.schema?.properties;
  if (!isRecord(answer) || !answer.has_more) return null;
  const params = op.query?.properties;
  const query = isRecord(params) ? params : {};
  return { cursorParam: 'after' in query ? 'after' : 'cursor' in query ? 'cursor' : null };
}

/**
 * Completes a list answer (docs/PAGING.md): a page-numbered answer without `has_more` gets it from
 * `total` (more items after this page), and an answer with more items gets a `Link` header whose
 * `rel="next"` URL is this request with `next_cursor` in `cursorParam` (when the answer has one) or
 * the next `page`.
 */
function finishPage(ctx: RouterContext, cursorParam: 'after' | 'cursor' | null): void {
  const body = ctx.body;
  if (ctx.status !== 200 || !isRecord(body) || Buffer.isBuffer(body)) return;
  const { total, page, limit } = body;
  if (body.has_more === undefined && typeof total === 'number' && typeof page === 'number' && typeof limit === 'number') {
    const shown = Object.values(body).find((v): v is unknown[] => Array.isArray(v))?.length ?? 0;
    body.has_more = page * limit + shown < total;
  }
  if (body.has_more !== true) return;
  const params = new URLSearchParams(ctx.querystring);
  if (cursorParam && typeof body.next_cursor === 'string') {
    for (const p of ['page', 'skip', 'since', 'after', 'cursor']) params.delete(p);
    params.set(cursorParam, body.next_cursor);
  } else if (typeof page === 'number') {
    params.set('page', String(page + 1));
  } else return;
  ctx.append('Link', `<${ctx.path}?${params.toString()}>; rel="next"`);
}

/**
 * The one body media type the OpenAPI document declares for a JSON body: a body of any other type
 * (text, a form, XML, or another JSON type such as `application/vnd.api+json`) is 415, so the
 * server takes exactly what the document allows.
 */
const JSON_MEDIA_TYPES = new Set(['application/json']);

function isJsonMediaType(contentType: string): boolean {
  return JSON_MEDIA_TYPES.has((contentType.split(';', 1)[0] ?? '').trim().toLowerCase());
}

/**
 * A body sent with another media type (text/plain, a form, XML) than the JSON a route takes: the
 * handler's first read of the body answers 415 `unsupported_media_type` (docs/ERRORS.md). It is
 * refused when read, so a request without a credential or the role still gets its 401/403 first.
 * An empty body is no body, whatever its Content-Type.
 */
function refuseOtherMediaTypeOnRead(ctx: RouterContext, contentType: string): void {
  const headers = ctx.req.headers;
  if (isJsonMediaType(contentType)) return;
  if (headers['transfer-encoding'] === undefined && (headers['content-length'] === undefined || headers['content-length'] === '0')) return;
  const req = ctx.request;
  let refused = false;
  Object.defineProperty(req, 'body', {
    configurable: true,
    enumerable: true,
    get() {
      if (refused) return undefined;
      refused = true;
      const type = (contentType.split(';', 1)[0] ?? '').trim() || contentType;
      throw new DomainError(415, 'unsupported_media_type', `This route takes a JSON body: send it with Content-Type: application/json (got ${type})`);
    },
    set(value: unknown) {
      Object.defineProperty(req, 'body', { configurable: true, enumerable: true, writable: true, value });
    },
  });
}

function queryAccessor(obj: object): PropertyDescriptor {
  for (let o: object | null = obj; o; o = Object.getPrototypeOf(o)) {
    const d = Object.getOwnPropertyDescriptor(o, 'query');
    if (d?.get) return d;
  }
  throw new Error('the request has no query accessor');
}

/**
 * The query string is validated when the handler first reads it (`ctx.query`, `ctx.request.query`):
 * handlers check the credential first, so a request without one gets its 401/403, not a 422 about
 * its query. A handler that never reads the query has nothing to refuse.
 */
function validateQueryOnFirstRead(ctx: RouterContext, schema: Schema): void {
  const req = ctx.request;
  const accessor = queryAccessor(req);
  let checked = false;
  Object.defineProperty(req, 'query', {
    configurable: true,
    get(this: typeof req) {
      // A property descriptor's getter returns any: Koa's query getter returns the parsed query object.
      const query = accessor.get?.call(this) as Record<string, unknown>;
      if (!checked) {
        checked = true;
        validateQuery(schema, query);
      }
      return query;
    },
    set(this: typeof req, value: unknown) {
      accessor.set?.call(this, value);
    },
  });
}

/** OpenAPI path template of a router path: `/a/:id` -> `/a/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/** The names of a router path's parameters, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
}

/** The operationId of an operation: its method and path in camel case (`GET /api/protocol/agents/:id` -> getProtocolAgentsById). */
export function operationId(op: Operation): string {
  if (op.id) return op.id;
  const words = op.path
    .split('/')
    .filter((p) => p && p !== 'api')
    .map((p) => (p.startsWith(':') ? `by-${p.slice(1)}` : p))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return op.method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

/**
 * An integer query parameter: it arrives as digits (`pattern: ^\d+$`, checked by the query schema,
 * unless `digits` is false because the handler reads other spellings itself) and `contentSchema` is
 * the integer they stand for, with the bounds and default the handler enforces
 * (`contentMediaType: application/json`: the digits are that integer's JSON text). The bounds are
 * annotations, not checked by the query schema: the handler checks them with its own messages.
 * The REST docs show them, and the tool server takes the `contentSchema` as the argument's type
 * (api/routes/mcp/arguments.ts).
 */
export function integerQuery(description: string, range: { minimum: number; maximum: number; default?: number }, digits = true): Schema {
  return {
    type: 'string',
    ...(digits ? { pattern: '^\\d+$' } : {}),
    description,
    contentMediaType: 'application/json',
    contentSchema: { type: 'integer', ...range },
  };
}

/** `limit` of a route whose handler pages with `paging`, `cursorPaging` or `skipLimit` and these bounds (422 out of range). */
export const limitQuery = (max: number, fallback: number): Schema =>
  integerQuery(`Page size, from 1 to ${max} (default ${fallback}).`, { minimum: 1, maximum: max, default: fallback });

/** A path parameter naming a record by its id. */
export const idParam = (description: string): Schema => ({ type: 'string', minLength: 1, maxLength: 64, description });

const QUERY_PARAMS: Record<string, Schema> = {
  limit: { type: 'string', pattern: '^\\d+$', description: 'Page size (an integer within the route bounds).' },
  // Read by `paging` (api/validation.ts) only, with these bounds.
  page: integerQuery('Zero-based page number (page * limit items are skipped).', { minimum: 0, maximum: MAX_PAGE, default: 0 }),
  // Read by `skipLimit` (api/routes/communities/circles.ts) only, with these bounds.
  skip: integerQuery(`How many items to skip, from 0 to ${MAX_SKIP} (default 0).`, { minimum: 0, maximum: MAX_SKIP, default: 0 }),
  after: { type: 'string', description: 'Resume after this cursor (next_cursor of an earlier answer; 0 for the beginning).' },
  cursor: { type: 'string', description: 'The next_cursor of an earlier answer (newest-first lists).' },
  as_of: {
    type: 'string',
    description:
      'Answer as of a log position or an ISO 8601 time (X-As-Of-Position). Authenticated callers only (anonymous: 401 as_of_requires_auth), 30 per minute per caller (429 with Retry-After). Cost bounded whatever the log\'s length: the subject\'s nearest stored version plus at most AS_OF_EVERY (default 500) of its events folded; answers cached per position (docs/OPERATIONS.md "As-of reads").',
  },
  since: { type: 'string', description: 'Only items created at or after this instant (ISO 8601).' },
};

/**
 * A query schema of named string parameters (the common ones described), in order: a name takes
 * its common schema (a plain string when there is none), an object names parameters with their own.
 */
export function queryOf(...params: Array<string | Record<string, Schema>>): Schema {
  const properties: Record<string, Schema> = {};
  for (const p of params) {
    if (typeof p === 'string') properties[p] = QUERY_PARAMS[p] ?? { type: 'string' };
    else Object.assign(properties, p);
  }
  return { type: 'object', properties };
}
