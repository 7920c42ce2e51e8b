import type { AgentHeartbeatReceived, AgentStatus, NotificationsExpired, NotificationsRead } from '../../events/messaging.ts';
import { notificationsStream, presenceStream } from '../../events/messaging.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

/**
 * `notifications-<agent_id>` and `presence-<agent_id>` are appended without reading them
 * (expected revision 'any'): nothing there is decided on their past, so their state is empty.
 */
export const appendOnly: Aggregate<null, NotificationsRead | NotificationsExpired | AgentHeartbeatReceived> = {
  initialState: () => null,
  evolve: () => null,
};

export type MarkNotificationsRead = Command<'MarkNotificationsRead', { agent_id: string; notification_ids: string[] }>;
export type ExpireNotifications = Command<'ExpireNotifications', { agent_id: string; notification_ids: string[] }>;
export type RecordHeartbeat = Command<'RecordHeartbeat', { agent_id: string; status: AgentStatus; capacity: number | null }>;

/** MarkNotificationsRead (free): what a fetch returned is read from then on; an empty fetch records nothing. */
export function decideMarkNotificationsRead(command: MarkNotificationsRead, _state: null): NotificationsRead[] {
  const { agent_id, notification_ids } = command.data;
  if (notification_ids.length === 0) return [];
  return [{ type: 'NotificationsRead', data: { agent_id, notification_ids, read_at: command.metadata.now.toISOString() } }];
}

/** ExpireNotifications (the expiry job): notifications 90 days old leave the signal inbox, recorded as an event. */
export function decideExpireNotifications(command: ExpireNotifications, _state: null): NotificationsExpired[] {
  const { agent_id, notification_ids } = command.data;
  return [{ type: 'NotificationsExpired', data: { agent_id, notification_ids, expired_at: command.metadata.now.toISOString() } }];
}

/** RecordHeartbeat (free): sets the agent's status for 15 minutes. */
export function decideRecordHeartbeat(command: RecordHeartbeat, _state: null): AgentHeartbeatReceived[] {
  const { agent_id, status, capacity } = command.data;
  return [{ type: 'AgentHeartbeatReceived', data: { agent_id, status, capacity, received_at: command.metadata.now.toISOString() } }];
}

export async function markNotificationsRead(bus: CommandBus, agentId: string, ids: string[], ctx: CommandContext) {
  const command: MarkNotificationsRead = { type: 'MarkNotificationsRead', data: { agent_id: agentId, notification_ids: ids }, metadata: { now: ctx.now } };
  const events = decideMarkNotificationsRead(command, appendOnly.initialState());
  if (events.length === 0) return null;
  return bus.appendRaw(notificationsStream(agentId), events, 'any', ctx);
}

export async function expireNotifications(bus: CommandBus, agentId: string, ids: string[], ctx: CommandContext) {
  const command: ExpireNotifications = { type: 'ExpireNotifications', data: { agent_id: agentId, notification_ids: ids }, metadata: { now: ctx.now } };
  return bus.appendRaw(notificationsStream(agentId), decideExpireNotifications(command, appendOnly.initialState()), 'any', ctx);
}

export async function recordHeartbeat(bus: CommandBus, agentId: string, input: { status: AgentStatus; capacity: number | null }, ctx: CommandContext) {
  const command: RecordHeartbeat = { type: 'RecordHeartbeat', data: { agent_id: agentId, ...input }, metadata: { now: ctx.now } };
  return bus.appendRaw(presenceStream(agentId), decideRecordHeartbeat(command, appendOnly.initialState()), 'any', ctx);
}
