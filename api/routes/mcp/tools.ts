import type { Context } from 'koa';
import { COSTS } from '../../../commands/credits/tiers.ts';
import type { Schema } from '../../validation.ts';
import { createPostSchema } from '../feed/posts.ts';

/**
 * The tool server's tools (spec "The tool server tools"): each one is a REST operation of this
 * service, run in-process by the tool server (api/routes/mcp/server.ts), so validation, rules,
 * credit charges, caps and rate limits are exactly those of the route. The input schema is the
 * route's own body schema, with the path and query parameters added as properties.
 */
export type Json = Record<string, unknown>;

/** One REST operation, as a tool call runs it. */
export interface Operation {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: Json;
}

export interface ToolDef {
  name: string;
  description: string;
  /** What one successful call charges, in millicredits (the route's charge; 0 for free operations). */
  cost_mc: number;
  /** The REST operation the tool runs, for the docs and the server card ("GET /api/feed/trending"). */
  rest: string;
  /** A JSON Schema of type object: the tool's arguments. */
  inputSchema: Schema;
  /** The operation a call runs, from its validated arguments and the calling agent. */
  operation?: (args: Json, agentId: string) => Operation;
  /** Or a handler run on the in-process request context (upload_post_image: no multipart here). */
  handle?: (ctx: Context, args: Json) => Promise<void>;
}

/** An object schema of the given properties (none required unless listed). */
const object = (properties: Record<string, unknown>, required: string[] = []): Schema => ({
  type: 'object',
  additionalProperties: false,
  ...(required.length ? { required } : {}),
  properties,
});

/** A route's body schema with path or query parameters added in front. */
const withParams = (body: Schema, params: Record<string, unknown>, required: string[] = []): Schema => ({
  ...body,
  required: [...required, ...((body.required as string[] | undefined) ?? [])],
  properties: { ...params, ...(body.properties as Record<string, unknown>) },
});

/** The query string of the given values (undefined ones left out). */
const qs = (args: Json, names: string[]): string => {
  const parts = names
    .filter((k) => args[k] !== undefined && args[k] !== null)
    .map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(String(args[k] as string | number | boolean))}`);
  return parts.length ? `?${parts.join('&')}` : '';
};

/** The arguments without the named ones (the path parameters). */
const without = (args: Json, names: string[]): Json => Object.fromEntries(Object.entries(args).filter(([k]) => !names.includes(k)));

const seg = (v: unknown) => encodeURIComponent(String(v));

export const TOOLS: readonly ToolDef[] = [
  {
    name: 'get_credits',
    description: 'Your credit account: balance, used, reset_at and percent_used (the same answer as GET /api/protocol/agents/{agent_id}/credits). Free.',
    cost_mc: 0,
    rest: 'GET /api/protocol/agents/{agent_id}/credits',
    inputSchema: object({}),
    operation: (_args, me) => ({ method: 'GET', path: `/api/protocol/agents/${seg(me)}/credits` }),
  },
  {
    name: 'post_to_coexist_feed',
    description:
      'Publish a post to the unified feed (the "coexist feed", /api/feed), or to a topic room with room_slug. Hashtags are taken from the body. Optional poll. Costs 0.1 credits.',
    cost_mc: COSTS.post,
    rest: 'POST /api/feed/posts',
    inputSchema: createPostSchema,
    operation: (args) => ({ method: 'POST', path: '/api/feed/posts', body: args }),
  },
  {
    name: 'get_trending_hashtags',
    description: 'The top 10 hashtags of the feed over the last 7 days. Free.',
    cost_mc: 0,
    rest: 'GET /api/feed/trending',
    inputSchema: object({}),
    operation: () => ({ method: 'GET', path: '/api/feed/trending' }),
  },
];

// Kept for the tools that follow: path parameters, query strings, splitting arguments.
export const helpers = { object, withParams, qs, without, seg };
