import type { Context, Next } from 'koa';
import type { SecretBox } from '../commands/agents/secrets.ts';
import { API_KEY_PREFIX } from '../commands/agents/secrets.ts';
import { DomainError } from '../events/kernel/errors.ts';
import type { ReadStore } from '../projections/store/port.ts';
import { agentIdForKeyHash } from '../queries/agents/agents.ts';

export type Principal =
  { kind: 'agent'; agentId: string; via: 'api_key' } | { kind: 'user'; userId: string; agentId: string | null; roles: string[]; via: 'bearer' };

/** The bearer side of dual auth: human sign-in plugs its token check in here. */
export type BearerVerifier = (token: string) => Promise<{ userId: string; agentId: string | null; roles: string[] } | null>;

const unauthorized = (detail = 'Missing or invalid credentials') => new DomainError(401, 'unauthorized', detail);

/**
 * Resolves the caller from `X-API-Key` (keyed hash looked up in the read model; the presented key
 * is never stored) or `Authorization: Bearer`. Present but wrong credentials: 401 at once.
 */
export function authenticate(store: ReadStore, secrets: SecretBox, bearer: () => BearerVerifier | null) {
  return async function resolvePrincipal(ctx: Context, next: Next) {
    const headers = ctx.req.headers;
    const key = headerValue(headers['x-api-key']);
    const authz = headerValue(headers.authorization);
    if (key) {
      if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) throw unauthorized('Invalid API key');
      const agentId = await agentIdForKeyHash(store, secrets.hash(key));
      if (!agentId) throw unauthorized('Invalid API key');
      ctx.state.principal = { kind: 'agent', agentId, via: 'api_key' } satisfies Principal;
    } else if (authz) {
      const m = /^Bearer\s+(\S+)$/i.exec(authz);
      if (!m) throw unauthorized('Malformed Authorization header');
      // An agent's API key is not a bearer token: say where it goes (it is not checked here).
      if (m[1].startsWith(API_KEY_PREFIX))
        throw unauthorized(
          `An API key is sent in the X-API-Key header, not as Authorization: Bearer (bearer tokens are for signed-in people): send "X-API-Key: ${API_KEY_PREFIX}..." instead`,
        );
      const verify = bearer();
      const user = verify ? await verify(m[1]) : null;
      if (!user) throw unauthorized('Invalid or expired token');
      ctx.state.principal = { kind: 'user', ...user, via: 'bearer' } satisfies Principal;
    }
    await next();
  };
}

/** What `ctx.get(name)` gives: the header's value, or '' when it is absent. */
function headerValue(value: string | string[] | undefined): string {
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : '';
}

export function principalOf(ctx: Context): Principal | null {
  return ctx.state.principal ?? null;
}

/** K: an API key is required. */
export function requireApiKey(ctx: Context): string {
  const p = principalOf(ctx);
  if (!p) throw unauthorized('X-API-Key header required');
  if (p.kind !== 'agent') throw unauthorized('This endpoint needs an API key (X-API-Key)');
  return p.agentId;
}

/** K|J: an API key, or a bearer user with a linked agent. */
export function requireAgent(ctx: Context): string {
  const p = principalOf(ctx);
  if (!p) throw unauthorized('X-API-Key header or bearer token required');
  if (p.kind === 'agent') return p.agentId;
  if (!p.agentId) throw new DomainError(401, 'no_linked_agent', 'No active agent linked to your account');
  return p.agentId;
}

/** Private agent resources: only the agent itself. */
export function requireSelf(ctx: Context, agentId: string, requester: string): void {
  if (agentId !== requester) throw new DomainError(403, 'forbidden', "You may only access your own agent's resources");
}
