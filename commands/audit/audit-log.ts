import type { DomainEvent, DomainEventType } from '../../events/catalogue.ts';
import type { EventLog, RecordedEvent } from '../../events/store/port.ts';

/**
 * Every event a super admin or a community admin writes by acting as one (docs/MODERATION.md
 * "Audit log"). The audit log reads these straight from the event log, in log order, with the
 * store's type filter (an index on the SQLite log, a server-side filter on EventStoreDB).
 */
export const AUDIT_EVENT_TYPES = [
  'AgentBanned',
  'ModerationDecided',
  'RoomMerged',
  'RoomHidden',
  'RoomUnhidden',
  'DisputeRuled',
  'SuperAdminGranted',
  'CommunityCreated',
  'CommunityAdminNamed',
  'PitchDeckUpdated',
  'FederationPeerDecided',
  'CircleContentModerated',
  'CommunityMemberRemoved',
  'CircleVisibilityChanged',
  'CircleJoinRequestDecided',
  'InviteCodeCreated',
  'InviteCodeStatusChanged',
] as const satisfies readonly DomainEventType[];

export type AuditAction = (typeof AUDIT_EVENT_TYPES)[number];
const AUDITED: ReadonlySet<string> = new Set(AUDIT_EVENT_TYPES);

/** One line of the audit log. */
export interface AuditEntry {
  position: number;
  at: string;
  action: AuditAction;
  /** The admin's user id (or `cli:...` for an operator at the command line). */
  actor: string;
  role: 'super_admin' | 'community_admin' | 'operator';
  /** What the action was about: `agent:<id>`, `post:<id>`, `room:<slug>`, `contract:<id>`, ... */
  target: string;
  /** The decision, outcome or value set, in a word or two. */
  detail: string;
  note: string;
  stream: string;
}

const roleOf = (actor: string, community: boolean): AuditEntry['role'] =>
  actor.startsWith('cli:') || actor === 'cli' ? 'operator' : community ? 'community_admin' : 'super_admin';

/** The audit line of one admin event; null for an event of another type. */
export function auditEntry(e: RecordedEvent): AuditEntry | null {
  if (!AUDITED.has(e.type)) return null;
  const event = e as unknown as Extract<DomainEvent, { type: AuditAction }>;
  const base = { position: e.position, stream: e.stream };
  const line = (action: AuditAction, at: string, by: string, target: string, detail: string, note: string, community = false): AuditEntry => {
    // The console writes room actions as `admin:<user id>`: the actor is the user.
    const actor = by.startsWith('admin:') ? by.slice('admin:'.length) : by;
    return { ...base, action, at, actor, role: roleOf(actor, community), target, detail, note };
  };
  switch (event.type) {
    case 'AgentBanned':
      return line('AgentBanned', event.data.banned_at, event.data.by_user_id, `agent:${event.data.agent_id}`, 'banned', event.data.reason);
    case 'ModerationDecided': {
      const d = event.data;
      return line('ModerationDecided', d.decided_at, d.admin_user_id, `${d.item_kind}:${d.item_id}`, d.appeal ? `${d.decision} (appeal)` : d.decision, d.note);
    }
    case 'RoomMerged':
      return line('RoomMerged', event.data.merged_at, event.data.by, `room:${event.data.room_slug}`, `merged into ${event.data.into}`, '');
    case 'RoomHidden':
      return line('RoomHidden', event.data.hidden_at, event.data.by, `room:${event.data.room_slug}`, 'hidden', '');
    case 'RoomUnhidden':
      return line('RoomUnhidden', event.data.unhidden_at, event.data.by, `room:${event.data.room_slug}`, 'shown again', '');
    case 'DisputeRuled': {
      const r = event.data.ruling;
      return line('DisputeRuled', r.ruled_at, r.ruled_by, `contract:${r.contract_id}`, r.outcome, r.note);
    }
    case 'SuperAdminGranted':
      return line('SuperAdminGranted', event.data.granted_at, 'cli:operator', `user:${event.data.email}`, 'super admin granted', '');
    case 'CommunityCreated':
      return line('CommunityCreated', event.data.created_at, event.data.created_by, `community:${event.data.community_id}`, 'created', event.data.name);
    case 'CommunityAdminNamed':
      return line(
        'CommunityAdminNamed',
        event.data.named_at,
        event.data.named_by,
        `user:${event.data.user_id}`,
        `community admin of ${event.data.community_id}`,
        '',
      );
    case 'PitchDeckUpdated':
      return line('PitchDeckUpdated', event.data.updated_at, event.data.updated_by, 'pitch-deck', 'deck URL set', event.data.url);
    case 'FederationPeerDecided':
      return line('FederationPeerDecided', event.data.decided_at, event.data.decided_by, `peer:${event.data.peer_id}`, event.data.status, '');
    case 'CircleContentModerated': {
      const d = event.data;
      return line('CircleContentModerated', d.at, d.by_user_id, `circle_${d.target_type}:${d.target_id}`, d.action, d.note, true);
    }
    case 'CommunityMemberRemoved':
      return line(
        'CommunityMemberRemoved',
        event.data.removed_at,
        event.data.removed_by,
        `user:${event.data.user_id}`,
        `removed from ${event.data.community_id}`,
        '',
        true,
      );
    case 'CircleVisibilityChanged':
      return line('CircleVisibilityChanged', event.data.changed_at, event.data.changed_by, `circle:${event.data.circle_id}`, event.data.visibility, '', true);
    case 'CircleJoinRequestDecided':
      return line(
        'CircleJoinRequestDecided',
        event.data.decided_at,
        event.data.decided_by,
        `request:${event.data.request_id}`,
        event.data.status,
        event.data.admin_note,
        true,
      );
    case 'InviteCodeCreated':
      return line('InviteCodeCreated', event.data.created_at, event.data.created_by, `code:${event.data.code_id}`, 'created', event.data.label ?? '', true);
    case 'InviteCodeStatusChanged':
      return line('InviteCodeStatusChanged', event.data.changed_at, event.data.changed_by, `code:${event.data.code_id}`, event.data.status, '', true);
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export interface AuditQuery {
  /** Exclusive log position: entries after it. */
  after: number;
  limit: number;
  /** Only these actions (absent: all). */
  actions?: readonly AuditAction[];
  /** Only this actor. */
  actor?: string;
}

/** One page of the audit log, oldest first (an audit reads forwards), and the position to continue after. */
export async function readAuditLog(log: EventLog, q: AuditQuery): Promise<{ entries: AuditEntry[]; next_after: number; has_more: boolean }> {
  const types = q.actions && q.actions.length > 0 ? q.actions : AUDIT_EVENT_TYPES;
  const entries: AuditEntry[] = [];
  let after = q.after;
  // An actor filter is applied after the read: keep reading pages until the page is full or the log ends.
  for (;;) {
    const page = await log.readAll({ after, maxCount: q.limit + 1, types });
    for (const e of page) {
      after = e.position;
      const entry = auditEntry(e);
      if (!entry || (q.actor !== undefined && entry.actor !== q.actor)) continue;
      if (entries.length === q.limit) return { entries, next_after: entries[entries.length - 1].position, has_more: true };
      entries.push(entry);
    }
    if (page.length < q.limit + 1) return { entries, next_after: entries.length > 0 ? entries[entries.length - 1].position : after, has_more: false };
  }
}
