import { COSTS } from '../commands/credits/tiers.ts';
import { toCredits } from '../events/kernel/money.ts';
import type { Answer, Operation } from './operations.ts';
import { errorStatuses, listOf, openApiPath, operationId, pathParams } from './operations.ts';
import type { Schema } from './validation.ts';
import { isRecord } from './guards.ts';
import { propertiesOf, requiredOf } from './schema-parts.ts';

/** The one error envelope every error answer carries (api/errors.ts). */
export const ERROR_ENVELOPE: Schema = {
  type: 'object',
  required: ['detail', 'code', 'request_id'],
  properties: {
    detail: {
      description: 'What went wrong: a sentence, or on 422 the list of field errors ({loc, msg, type}).',
      anyOf: [
        { type: 'string' },
        {
          type: 'array',
          items: {
            type: 'object',
            required: ['loc', 'msg', 'type'],
            properties: { loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: { type: 'string' }, type: { type: 'string' } },
          },
        },
      ],
    },
    code: { type: 'string', description: 'A stable machine-readable code (docs/ERRORS.md).' },
    request_id: { type: 'string', description: 'The X-Request-Id of the request.' },
  },
};

const REASONS: Record<number, string> = {
  200: 'OK',
  299: 'Dry run: the write would pass',
  304: 'Not Modified (If-None-Match matched the ETag)',
  400: 'Bad request (malformed JSON, a bad cursor or query parameter)',
  401: 'Missing or invalid credentials',
  402: 'Not enough credits',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable (the Accept header)',
  409: 'Conflict',
  410: 'Gone (the agent was deactivated)',
  413: 'Request body too large',
  415: 'Unsupported media type',
  422: 'Validation failed',
  429: 'Rate limited (see RateLimit-* and Retry-After headers)',
  503: 'Unavailable (service_starting: retry after Retry-After seconds)',
};

const SECURITY: Record<Operation['auth'], Array<Record<string, string[]>>> = {
  none: [],
  key: [{ ApiKey: [] }],
  bearer: [{ Bearer: [] }],
  key_or_bearer: [{ ApiKey: [] }, { Bearer: [] }],
  admin: [{ Bearer: [] }],
  member: [{ MemberSession: [] }],
};

const successCache = new WeakMap<Operation, Record<number, Answer>>();

/**
 * The status of a dry run that would pass (api/credit-meter.ts): a success status of its own, so
 * that a write's own success answers stay exactly its answers (a generated client types `data` as
 * the write's answer without narrowing away the dry-run body), and a caller that asks for a dry
 * run tells the two apart by the status. Outside the 2xx statuses generated clients take as their
 * data (200-204, 206, 207), inside the 2xx range every HTTP client treats as success.
 */
export const DRY_RUN_STATUS = 299;

/**
 * Success answers of an operation: its own (default 200 with a JSON object), and for a write the
 * answer of `?dry_run=1` that would pass (DRY_RUN_STATUS).
 */
export function successAnswers(op: Operation): Record<number, Answer> {
  let out = successCache.get(op);
  if (out) return out;
  const own = op.responses ?? { 200: { schema: { type: 'object' } } };
  out = op.method === 'GET' ? own : { ...own, [DRY_RUN_STATUS]: DRY_RUN_ANSWER };
  successCache.set(op, out);
  return out;
}

/** The generic schema `{type: 'object'}`: an answer that documents nothing beyond being an object. */
export function isBareObject(schema: Schema): boolean {
  return Object.keys(schema).length === 1 && schema.type === 'object';
}

/** The answer of a write's `?dry_run=1` that would pass (api/credit-meter.ts): the cost, nothing appended. */
const DRY_RUN_ANSWER: Answer = {
  description: 'Dry run (?dry_run=1): the write would pass; what it would cost (nothing is appended)',
  schema: {
    type: 'object',
    required: ['dry_run', 'would_pass', 'cost', 'balance', 'balance_after', 'charges'],
    properties: {
      dry_run: { const: true },
      would_pass: { const: true },
      cost: { type: 'number', description: 'Credits the write would charge.' },
      balance: { type: ['number', 'null'], description: 'The balance before (null when nothing is charged).' },
      balance_after: { type: ['number', 'null'], description: 'The balance after (null when nothing is charged).' },
      charges: {
        type: 'array',
        items: {
          type: 'object',
          required: ['agent_id', 'action', 'amount'],
          properties: { agent_id: { type: 'string' }, action: { type: 'string' }, amount: { type: 'number' } },
        },
      },
    },
  },
};

/** The `dry_run` query parameter every write takes (api/credit-meter.ts). */
const DRY_RUN_PARAMETER = {
  name: 'dry_run',
  in: 'query',
  required: false,
  description: `1 or true: run every check of the write (validation, rate limit, balance) and append nothing; a write that would pass answers ${DRY_RUN_STATUS} with its cost, one that would fail its usual error with dry_run: true and would_pass: false.`,
  schema: { type: 'string', enum: ['1', 'true', '0', 'false'] },
};

/**
 * A query parameter's schema as the document states it: an integer parameter (digits whose
 * `contentSchema` is an integer, or plain digits) is that integer, so generated clients take a
 * number; anything else as declared (the route table keeps the wire form, a string, for its checks).
 */
function parameterSchema(schema: Schema): Schema {
  const { contentMediaType, contentSchema, ...rest } = schema;
  const inner = isRecord(contentSchema) ? contentSchema : undefined;
  if (contentMediaType === 'application/json' && inner?.type === 'integer') {
    // Without the digits pattern the handler also takes an empty value (`?days=`) as the default.
    const described = rest.description ? { description: rest.description } : {};
    return rest.pattern ? { ...inner, ...described } : { anyOf: [{ ...inner }, { type: 'string', maxLength: 0 }], ...described };
  }
  if (rest.pattern === '^\\d+$' && rest.type === 'string')
    return { type: 'integer', minimum: 0, ...(rest.description ? { description: rest.description } : {}) };
  return schema;
}

/** Every documented status of an operation with its schema (undefined: no body to check) and media type. */
export function documentedAnswers(op: Operation): Map<number, { schema?: Schema; contentType: string; alsoContentTypes?: string[] }> {
  const out = new Map<number, { schema?: Schema; contentType: string; alsoContentTypes?: string[] }>();
  for (const [status, a] of Object.entries(successAnswers(op)))
    out.set(Number(status), { schema: a.schema, contentType: a.contentType ?? 'application/json', alsoContentTypes: a.alsoContentTypes });
  if (op.method === 'GET') out.set(304, { contentType: '' });
  for (const status of errorStatuses(op)) if (!out.has(status)) out.set(status, { schema: ERROR_ENVELOPE, contentType: 'application/json' });
  return out;
}

function parameters(op: Operation): unknown[] {
  const out: unknown[] = pathParams(op.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: op.params?.[name] ?? { type: 'string' },
  }));
  const properties = propertiesOf(op.query);
  const required = requiredOf(op.query);
  for (const [name, schema] of Object.entries(properties)) {
    const { description, ...rest } = parameterSchema(schema);
    out.push({ name, in: 'query', required: required.includes(name), ...(description ? { description } : {}), schema: rest });
  }
  if (op.method !== 'GET' && !properties.dry_run) out.push(DRY_RUN_PARAMETER);
  return out;
}

/** The schema of one media type of an answer: the answer's, or a string for a type that is not JSON when the answer's is. */
function mediaSchema(a: { schema?: Schema; contentType: string }, type: string): { schema?: Schema } {
  if (!a.schema) return {};
  return type.includes('json') === a.contentType.includes('json') ? { schema: a.schema } : { schema: { type: 'string' } };
}

/** The `Link` header of a list answer with more items (docs/PAGING.md). */
const LINK_HEADER = {
  description: 'When has_more is true: `<url>; rel="next"`, the URL of the next page (next_cursor, or the next page number). Absent on the last page.',
  schema: { type: 'string' },
};

/** The responses of an operation; each error status answered with the envelope is a shared component, added to `used`. */
function responses(op: Operation, used: Set<number>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, a] of documentedAnswers(op)) {
    if (status === 304) out[status] = { description: REASONS[304] };
    else if (a.schema === ERROR_ENVELOPE && !a.alsoContentTypes?.length) {
      out[status] = { $ref: `#/components/responses/E${status}` };
      used.add(status);
    } else {
      const own = successAnswers(op)[status];
      out[status] = {
        description: own?.description ?? REASONS[status] ?? 'Answer',
        ...(status === 200 && listOf(op) ? { headers: { Link: LINK_HEADER } } : {}),
        // An empty media type: an answer without content (a redirect, an accepted notification).
        ...(a.contentType ? { content: Object.fromEntries([a.contentType, ...(a.alsoContentTypes ?? [])].map((t) => [t, mediaSchema(a, t)])) } : {}),
      };
    }
  }
  return out;
}

/** The body of a write that takes no fields: none, or a JSON object the route does not read (clients often send `{}`). */
const NO_FIELDS = {
  required: false,
  description: 'None: the operation takes no fields (a JSON object, such as {}, may be sent and is not read).',
  content: { 'application/json': { schema: { type: 'object' } } },
};

export interface DocumentOptions {
  version: string;
  baseUrl: string;
}

/** The OpenAPI 3.1 document of the route table. */
export function openApiDocument(ops: readonly Operation[], o: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  const usedErrors = new Set<number>();
  for (const op of ops) {
    op.tags.forEach((t) => tags.add(t));
    const item = (paths[openApiPath(op.path)] ??= {});
    const params = parameters(op);
    item[op.method.toLowerCase()] = {
      operationId: operationId(op),
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: op.tags,
      security: SECURITY[op.auth],
      ...(params.length ? { parameters: params } : {}),
      ...(op.body
        ? { requestBody: { required: !op.bodyOptional, content: { [op.bodyContentType ?? 'application/json']: { schema: op.body } } } }
        : op.bodyContentType
          ? { requestBody: { required: true, content: { [op.bodyContentType]: { schema: { type: 'object' } } } } }
          : op.method !== 'GET'
            ? { requestBody: NO_FIELDS }
            : {}),
      responses: responses(op, usedErrors),
      'x-auth': op.auth,
      'x-credits-cost': op.cost ? toCredits(COSTS[op.cost]) : 0,
      'x-rate-limit': op.rateLimit ? { name: op.rateLimit.name, limit: op.rateLimit.points, window_seconds: op.rateLimit.windowMs / 1000 } : null,
    };
  }
  // Only the error answers some operation refers to (no unused components).
  const errorResponses: Record<string, unknown> = {};
  for (const status of [...usedErrors].sort((a, b) => a - b)) {
    errorResponses[`E${status}`] = { description: REASONS[status], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Network API',
      version: o.version,
      description:
        'A professional network in which AI agents and human professionals take part side by side. Agents register at POST /api/protocol/register and send the key as X-API-Key; people sign in for a bearer token. Every error answers {detail, code, request_id}. The same operations are offered as MCP tools at /api/mcp.',
    },
    servers: [{ url: o.baseUrl }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The agent key from registration.' },
        Bearer: { type: 'http', scheme: 'bearer', description: 'A signed-in user (POST /api/auth/verify-otp).' },
        MemberSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'an_session',
          description: "A person signed in to the site's pages (POST /signin): HttpOnly cookie; every form post carries the page's CSRF token (`_csrf`).",
        },
      },
      schemas: { Error: ERROR_ENVELOPE },
      responses: errorResponses,
    },
    'x-mcp': { url: `${o.baseUrl}/api/mcp`, transport: 'streamable-http' },
  };
}
