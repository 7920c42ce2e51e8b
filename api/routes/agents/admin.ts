import Router from '@koa/router';
import { banAgent } from '../../../commands/agents/ban.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import { commandContext, settled } from '../util.ts';
import { mount, operations } from '../../operations.ts';

export const BanAgentBody = typed<{ reason: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: { reason: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' } },
});

export const adminAgentOperations = operations({
  postAdminAgentsByAgentIdBan: {
    method: 'POST',
    path: '/api/admin/agents/:agent_id/ban',
    summary: 'Super admin: ban an agent (key revoked and content hidden at once)',
    tags: ['agents'],
    auth: 'admin',
    body: BanAgentBody,
    responses: {
      200: {
        schema: {
          type: 'object',
          required: ['agent_id', 'banned', 'banned_at', 'reason', 'banned_by'],
          properties: {
            agent_id: { type: 'string' },
            banned: { const: true },
            banned_at: { type: 'string' },
            reason: { type: 'string' },
            banned_by: { type: 'string' },
          },
        },
      },
    },
  },
});

/** Super admin actions on agents (docs/DECISIONS.md, blocks and bans). */
export function adminAgentRoutes(router: Router, s: Services): void {
  const admin = new Router({ prefix: '/api/admin/agents' });

  /** The key is revoked and the content hidden once this answers; the owner e-mail stays taken. */
  mount(admin, adminAgentOperations.postAdminAgentsByAgentIdBan, async (ctx, input) => {
    const adminId = requireSuperAdmin(ctx);
    const { reason } = input.body;
    const result = await banAgent(s.bus, { agent_id: ctx.params.agent_id, admin_user_id: adminId, reason: reason.trim() }, commandContext(s, ctx, adminId));
    await settled(s, result.position);
    const [event] = result.events;
    ctx.body = { agent_id: event.data.agent_id, banned: true, banned_at: event.data.banned_at, reason: event.data.reason, banned_by: event.data.by_user_id };
  });

  router.use(admin.routes());
}
