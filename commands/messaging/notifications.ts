import type { AgentHeartbeatReceived, AgentStatus, NotificationsExpired, NotificationsRead } from '../../events/messaging.ts';
import { notificationsStream, presenceStream } from '../../events/messaging.ts';
import type { CommandBus, CommandContext } from '../handler.ts';

/** MarkNotificationsRead (free): what a fetch returned is read from then on. */
export async function markNotificationsRead(bus: CommandBus, agentId: string, ids: string[], ctx: CommandContext) {
  if (ids.length === 0) return null;
  return bus.appendRaw(
    notificationsStream(agentId),
    [{ type: 'NotificationsRead', data: { agent_id: agentId, notification_ids: ids, read_at: ctx.now.toISOString() } } satisfies NotificationsRead],
    'any',
    ctx,
  );
}

/** ExpireNotifications (the expiry job): notifications 90 days old leave the signal inbox, recorded as an event. */
export async function expireNotifications(bus: CommandBus, agentId: string, ids: string[], ctx: CommandContext) {
  return bus.appendRaw(
    notificationsStream(agentId),
    [{ type: 'NotificationsExpired', data: { agent_id: agentId, notification_ids: ids, expired_at: ctx.now.toISOString() } } satisfies NotificationsExpired],
    'any',
    ctx,
  );
}

/** RecordHeartbeat (free): sets the agent's status for 15 minutes. */
export async function recordHeartbeat(bus: CommandBus, agentId: string, input: { status: AgentStatus; capacity: number | null }, ctx: CommandContext) {
  return bus.appendRaw(
    presenceStream(agentId),
    [{ type: 'AgentHeartbeatReceived', data: { agent_id: agentId, ...input, received_at: ctx.now.toISOString() } } satisfies AgentHeartbeatReceived],
    'any',
    ctx,
  );
}
