import { COSTS } from '../../../commands/credits/tiers.ts';
import type { Operation } from '../../operations.ts';
import { openApiPath, pathParams } from '../../operations.ts';
import { isRecord } from '../../guards.ts';
import { plainSchema, propertiesOf, requiredOf } from '../../schema-parts.ts';
import type { Schema } from '../../validation.ts';

// A tool's arguments derived from its REST operation (the route table's `Operation` object): the
// path parameters, then, for a GET, the query parameters, then the body's properties. Query
// parameters arrive as strings and are declared as strings; tool arguments are JSON values, so
// each query parameter's schema goes through `queryArgument`. docs/MCP.md "Input schemas".

/** A tool call's arguments (validated against its input schema), or a request body. */
export type Json = Record<string, unknown>;

/** The REST operation a tool call runs in-process, with its path parameters, query (a GET) and body (a write). */
export interface RestCall {
  op: Operation;
  params: Record<string, string>;
  query?: Record<string, string>;
  body?: Json;
}

/** A path parameter the tool fills with the calling agent's id (its own inbox, account, ...): not an argument. */
export const CALLER = Symbol('the calling agent');

/** How a tool binds its route's path parameters: each is an argument of its own name unless named here. */
export type PathBinding = Record<string, string | typeof CALLER>;

const DIGITS = '^\\d+$';

/**
 * The one conversion of a query parameter's schema (a string on the wire) into a tool argument's
 * schema (a JSON value):
 * - a string with `contentSchema` (and `contentMediaType: application/json`) stands for that JSON
 *   value: the argument is the `contentSchema` (an integer with the bounds and default the handler
 *   enforces, a boolean), with the parameter's description;
 * - a digits string (`pattern: ^\d+$`) without one is an integer from 0;
 * - an enum stays the same enum, without the empty value (a query string can send `?status=`,
 *   which the handlers take as the default; a tool call leaves the argument out);
 * - anything else is taken as declared (type, lengths, pattern, description, examples).
 */
export function queryArgument(param: Schema): Schema {
  const { contentMediaType, contentSchema, ...rest } = param;
  const description = typeof param.description === 'string' ? { description: param.description } : {};
  const content = isRecord(contentSchema) ? contentSchema : undefined;
  if (contentMediaType === 'application/json' && content) return { ...content, ...description };
  if (rest.pattern === DIGITS) return { type: 'integer', minimum: 0, ...description };
  if (Array.isArray(rest.enum)) return { ...rest, enum: rest.enum.filter((v) => v !== '') };
  return { ...rest };
}

/** A path parameter as a tool argument: the route's declared schema (`op.params`), else a non-empty string. */
function pathArgument(op: Operation, name: string): Schema {
  return { ...(op.params?.[name] ?? { type: 'string', minLength: 1 }) };
}

/** The query parameters of an operation, by name (its `query` schema's properties). */
function queryParams(op: Operation): Record<string, Schema> {
  return propertiesOf(op.query);
}

/** What a tool says about its REST operation (tools.ts); the rest is derived by `derive`. */
export interface ToolSpec {
  name: string;
  description: string;
  /** The REST operation the tool runs: its method, path, path parameters, query (a GET) and body. */
  op: Operation;
  /** Path parameters under another argument name (`{ id: 'post_id' }`) or filled with the caller (`{ id: CALLER }`). */
  path?: PathBinding;
  /** Query parameters of a GET route that are not arguments, each with its reason (documented exceptions). */
  omit?: Record<string, string>;
  /** The body schema, when it is not the route's own (post_signal: the room required). */
  body?: Schema;
  /** Body values sent when the arguments leave them out (post_signal's post_type). */
  defaults?: Json;
  /**
   * An optional argument that runs another operation of the same body when given: the path
   * parameter `param` of `op` (comment_on_feed_post's reply_to_comment_id, the reply route's :comment_id).
   */
  alternative?: { argument: string; op: Operation; param: string };
  /**
   * What the tool does beyond what its method says (MCP tool annotations), when the default is not
   * true to it: a GET reads only (readOnlyHint), any other method writes without destroying
   * (destructiveHint false) and is not idempotent; nothing reaches outside the service (openWorldHint false).
   */
  annotations?: ToolAnnotations;
}

/** MCP tool annotations (the spec's hints a client may show or act on). */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** The derived parts of a tool: REST operation, cost, input schema and the call. */
export interface Derived {
  rest: string;
  cost_mc: number;
  inputSchema: Schema;
  /** The tool's structured result: the REST operation's success answer (or either operation's, with an alternative). */
  outputSchema: Schema;
  annotations: ToolAnnotations;
  /** Argument name by the REST request's location (`path.id` -> post_id, `body.title` -> title), for naming refusals. */
  argumentOf: (loc: ReadonlyArray<string | number>) => Array<string | number>;
  operation: (args: Json, agentId: string) => RestCall;
}

/** The success answer of an operation as a tool's output schema (an object; a non-object answer is `{result}`). */
function successSchema(op: Operation): Schema {
  const answers = Object.entries(op.responses ?? { 200: { schema: { type: 'object' } } }).filter(([status]) => Number(status) < 300);
  const schemas = answers.map(([, a]) => a.schema ?? { type: 'object' });
  const one = schemas.length === 1 ? schemas[0] : { type: 'object', anyOf: schemas };
  return one.type === 'object' ? one : { type: 'object', required: ['result'], properties: { result: one } };
}

/** The default annotations of a tool, by its REST method. */
function defaultAnnotations(op: Operation): ToolAnnotations {
  return op.method === 'GET'
    ? { readOnlyHint: true, openWorldHint: false }
    : { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
}

/** The query parameters of the given arguments, as strings (undefined and null ones left out). */
function queryOfArgs(args: Json, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((k) => args[k] !== undefined && args[k] !== null).map((k) => [k, String(args[k])]));
}

/** The argument a path parameter comes from (undefined: the caller). */
function argumentOf(binding: PathBinding | undefined, param: string): string | undefined {
  const b = binding?.[param];
  return b === CALLER ? undefined : (b ?? param);
}

/** The route's path parameters from the arguments and the caller. */
function fill(op: Operation, binding: PathBinding | undefined, args: Json, agentId: string): Record<string, string> {
  return Object.fromEntries(
    pathParams(op.path).map((p) => {
      const name = argumentOf(binding, p);
      return [p, String(name === undefined ? agentId : args[name])];
    }),
  );
}

/** A tool's REST operation, cost, input schema and call, from its spec. */
export function derive(spec: ToolSpec): Derived {
  const { op } = spec;
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  const pathArgs: string[] = [];
  for (const p of pathParams(op.path)) {
    const name = argumentOf(spec.path, p);
    if (name === undefined) continue;
    properties[name] = pathArgument(op, p);
    required.push(name);
    pathArgs.push(name);
  }
  const alt = spec.alternative;
  if (alt) {
    properties[alt.argument] = pathArgument(alt.op, alt.param);
    pathArgs.push(alt.argument);
  }
  const queryNames: string[] = [];
  if (op.method === 'GET') {
    const declared = queryParams(op);
    const requiredQuery = requiredOf(op.query);
    for (const k of Object.keys(spec.omit ?? {})) if (!(k in declared)) throw new Error(`${spec.name}: omits ${k}, which ${op.id ?? op.path} does not take`);
    for (const [k, schema] of Object.entries(declared)) {
      if (spec.omit && k in spec.omit) continue;
      properties[k] = queryArgument(schema);
      if (requiredQuery.includes(k)) required.push(k);
      queryNames.push(k);
    }
  } else if (spec.omit) throw new Error(`${spec.name}: only a GET tool takes query parameters`);

  const body = op.method === 'GET' ? undefined : (spec.body ?? op.body);
  const inputSchema: Schema = !body
    ? { type: 'object', additionalProperties: false, ...(required.length ? { required } : {}), properties }
    : pathArgs.length === 0
      ? body
      : {
          ...body,
          required: [...required, ...requiredOf(body)],
          properties: { ...properties, ...propertiesOf(body) },
        };

  const operation = (args: Json, agentId: string): RestCall => {
    if (op.method === 'GET') return { op, params: fill(op, spec.path, args, agentId), query: queryOfArgs(args, queryNames) };
    const target = alt && args[alt.argument] !== undefined ? alt.op : op;
    const binding = target !== op && alt ? { ...spec.path, [alt.param]: alt.argument } : spec.path;
    const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !pathArgs.includes(k)));
    return { op: target, params: fill(target, binding, args, agentId), body: { ...spec.defaults, ...rest } };
  };

  // A refusal's location in the REST request, as the tool's argument: a path parameter under its
  // argument name, a query parameter or a body field under its own (the tool's arguments are those).
  const argumentAt = (loc: ReadonlyArray<string | number>): Array<string | number> => {
    const [where, name, ...rest] = loc;
    if (where === 'path' && typeof name === 'string') {
      const arg = name === alt?.param ? alt.argument : argumentOf(spec.path, name);
      return ['arguments', ...(arg === undefined ? [] : [arg]), ...rest];
    }
    if (where === 'body' || where === 'query') return ['arguments', ...(name === undefined ? [] : [name]), ...rest];
    return [...loc];
  };

  // Plain JSON, as tools/list sends it: a route schema built with TypeBox carries symbol keys.
  const output = plainSchema(alt ? { type: 'object', anyOf: [successSchema(op), successSchema(alt.op)] } : successSchema(op));
  const annotations: ToolAnnotations = { ...defaultAnnotations(op), ...spec.annotations };
  if (annotations.readOnlyHint) {
    // The write hints mean nothing for a tool that reads only.
    delete annotations.destructiveHint;
    delete annotations.idempotentHint;
  }
  return {
    rest: `${op.method} ${openApiPath(op.path)}`,
    cost_mc: op.cost ? COSTS[op.cost] : 0,
    inputSchema,
    outputSchema: output,
    annotations,
    argumentOf: argumentAt,
    operation,
  };
}
