import type { TokenService } from '../commands/humans/tokens.ts';
import type { ReadStore } from '../projections/store/port.ts';
import { rolesOf, signedInUser } from '../queries/humans/users.ts';
import type { BearerVerifier } from './auth.ts';

/**
 * The bearer side of dual auth: a signed, unexpired access JWT (pinned algorithm, issuer,
 * audience) of an existing user. The linked agent is the one the user claimed most recently.
 */
export function userBearer(store: ReadStore, tokens: TokenService, adminEmails: readonly string[]): BearerVerifier {
  return async (token) => {
    const claims = await tokens.verifyAccess(token);
    if (!claims) return null;
    const user = await signedInUser(store, claims.userId);
    if (!user) return null;
    const roles = await rolesOf(store, String(user.email), adminEmails);
    return { userId: claims.userId, agentId: typeof user.agent_id === 'string' ? user.agent_id : null, roles };
  };
}
