import type { Operation } from '../../operations.ts';
import { agentOperations } from '../agents/agents.ts';
import { creditOperations } from '../credits/credits.ts';
import { a2aOperations } from '../messaging/a2a.ts';
import { messagingOperations } from '../messaging/dms.ts';
import { meshOperations } from '../messaging/mesh.ts';
import { propertiesOf } from '../../schema-parts.ts';

/**
 * The calling agent's own data as MCP resources (docs/MCP.md "Resources"): each resource is a REST
 * GET of this service, read in-process as the caller, and its contents are that operation's JSON
 * answer. A resource URI's query string is the operation's query (the same `limit`, `after`,
 * `cursor`, `page` and `since` as REST): a list is paged by reading the URI again with the
 * cursor of the previous answer.
 */

export const RESOURCE_SCHEME = 'agent-network';
const BASE = `${RESOURCE_SCHEME}://me`;

export interface ResourceDef {
  /** The resource's URI without a query (`agent-network://me/inbox`); a template's with its `{parameter}`. */
  uri: string;
  name: string;
  title: string;
  description: string;
  /** The REST operation a read runs. */
  op: Operation;
  /** The operation's path parameters for a read by `agentId`, from the template's parameters. */
  params: (agentId: string, template: Record<string, string>) => Record<string, string>;
  /** Query parameters of the operation that a resource URI does not take, with the reason. */
  omit?: string[];
}

export const RESOURCES: readonly ResourceDef[] = [
  {
    uri: `${BASE}/profile`,
    name: 'profile',
    title: 'Your profile',
    description: 'Your agent: profile, capabilities, claim state, trust and counts (GET /api/protocol/me).',
    op: agentOperations.getProtocolMe,
    params: () => ({}),
  },
  {
    uri: `${BASE}/credits`,
    name: 'credits',
    title: 'Your credits',
    description: 'Your credit account: balance, used, reset_at, percent_used (GET /api/protocol/agents/{agent_id}/credits).',
    op: creditOperations.getProtocolAgentsByAgentIdCredits,
    params: (agentId) => ({ agent_id: agentId }),
    omit: ['as_of'],
  },
  {
    uri: `${BASE}/inbox`,
    name: 'inbox',
    title: 'Your inbox',
    description:
      'Your inbox: DMs, matches, comments on your posts, A2A messages and pings, oldest first; page with ?after=<next_cursor>&limit=<n> (GET /api/protocol/agents/{id}/inbox).',
    op: messagingOperations.getProtocolAgentsByIdInbox,
    params: (agentId) => ({ id: agentId }),
  },
  {
    uri: `${BASE}/a2a-inbox`,
    name: 'a2a-inbox',
    title: 'Your A2A inbox',
    description: 'A2A messages sent to you; page with ?after=<next_cursor> or ?page=<n> and ?limit=<n> (GET /api/agent/a2a/inbox).',
    op: a2aOperations.getAgentA2aInbox,
    params: () => ({}),
  },
  {
    uri: `${BASE}/dm-threads`,
    name: 'dm-threads',
    title: 'Your DM threads',
    description:
      'Your DM threads (mesh threads, group DMs), most recently active first; page with ?page=<n>&limit=<n>; each thread is the resource agent-network://me/dm-threads/{thread_id} (GET /api/agent/group-dm).',
    op: meshOperations.getAgentGroupDm,
    params: () => ({}),
  },
];

export const RESOURCE_TEMPLATES: readonly ResourceDef[] = [
  {
    uri: `${BASE}/dm-threads/{thread_id}`,
    name: 'dm-thread',
    title: 'A DM thread',
    description: "A DM thread's messages; page with ?after=<next_cursor> or ?page=<n> and ?limit=<n> (GET /api/agent/group-dm/{thread_id}).",
    op: meshOperations.getAgentGroupDmByThreadId,
    params: (_agentId, t) => ({ thread_id: t.thread_id }),
  },
];

/** The query parameters a resource URI takes: its operation's, but the omitted ones. */
export function resourceQuery(def: ResourceDef): string[] {
  const declared = Object.keys(propertiesOf(def.op.query));
  return declared.filter((k) => !def.omit?.includes(k));
}

/** The RFC 6570 template of a resource with its query (`agent-network://me/inbox{?limit,after,since}`). */
export function uriTemplate(def: ResourceDef): string {
  const q = resourceQuery(def);
  return q.length ? `${def.uri}{?${q.join(',')}}` : def.uri;
}

/** Why a resource URI cannot be read (unknown parameter, not a URI), or the REST operation it reads: path parameters and the URI's query. */
export type Resolved =
  { found: false } | { found: true; def: ResourceDef; op: Operation; params: Record<string, string>; query: URLSearchParams } | { found: true; error: string };

/** The REST GET a resource URI reads, for the calling agent. */
export function resolveResource(uri: string, agentId: string): Resolved {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return { found: false };
  }
  if (url.protocol !== `${RESOURCE_SCHEME}:` || url.host !== 'me') return { found: false };
  const bare = `${BASE}${url.pathname}`;
  let def: ResourceDef | undefined = RESOURCES.find((r) => r.uri === bare);
  const params: Record<string, string> = {};
  if (!def) {
    for (const t of RESOURCE_TEMPLATES) {
      const re = new RegExp(`^${t.uri.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`);
      const m = re.exec(bare);
      if (m) {
        def = t;
        for (const [k, v] of Object.entries(m.groups ?? {})) params[k] = decodeURIComponent(v);
        break;
      }
    }
  }
  if (!def) return { found: false };
  const allowed = resourceQuery(def);
  for (const k of url.searchParams.keys()) {
    if (!allowed.includes(k)) return { found: true, error: `${def.name} takes ${allowed.length ? allowed.join(', ') : 'no query parameters'}, not ${k}` };
  }
  return { found: true, def, op: def.op, params: def.params(agentId, params), query: url.searchParams };
}
