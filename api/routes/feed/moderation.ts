import Router from '@koa/router';
import { stringify } from 'csv-stringify/sync';
import type { Context } from 'koa';
import type { AuditEntry } from '../../../commands/audit/audit-log.ts';
import { AUDIT_EVENT_TYPES, readAuditLog } from '../../../commands/audit/audit-log.ts';
import { withdrawAgentFlag } from '../../../commands/feed/flag-agent.ts';
import { appealModerationItem, decideModerationItem } from '../../../commands/feed/moderation.ts';
import { withdrawPostFlag } from '../../../commands/feed/post.ts';
import { DomainError, notFound } from '../../../events/kernel/errors.ts';
import type { ModerationDecision, ModerationKind } from '../../../events/moderation.ts';
import { MODERATION_DECISIONS, MODERATION_KINDS } from '../../../events/moderation.ts';
import { decodeCursor, encodeCursor, START } from '../../../queries/cursor.ts';
import { getModerationItem, MODERATION_STATES, moderationItemView, moderationTarget, queuePage } from '../../../queries/feed/moderation.ts';
import { getPost } from '../../../queries/feed/posts.ts';
import { principalOf, requireAgent } from '../../auth.ts';
import { idParam, limitQuery, mount, operations, queryOf } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { isOneOf } from '../../guards.ts';
import { afterCursor, limitOnly, typed } from '../../validation.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import type { Schema } from '../../validation.ts';
import { arr, bool, int, nullStr, obj, str } from '../schemas.ts';
import { commandContext, settled, writer } from '../util.ts';
import { LIMITS } from '../../rate-limit.ts';

const Note = { type: 'string', minLength: 1, maxLength: 2000, pattern: '\\S' } as const;
export const DecisionBody = typed<{ decision: ModerationDecision; note: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['decision', 'note'],
  properties: { decision: { type: 'string', enum: [...MODERATION_DECISIONS] }, note: Note },
});
export const AppealBody = typed<{ item_kind: ModerationKind; item_id: string; message: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['item_kind', 'item_id', 'message'],
  properties: {
    item_kind: { type: 'string', enum: [...MODERATION_KINDS] },
    item_id: { type: 'string', minLength: 1, maxLength: 64 },
    message: { type: 'string', minLength: 1, maxLength: 2000, pattern: '\\S' },
  },
});

const QueueQuery = queryOf('after', {
  limit: limitQuery(100, 50),
  kind: { type: 'string', enum: [...MODERATION_KINDS], description: 'Only posts or only agents.' },
  state: { type: 'string', enum: [...MODERATION_STATES], description: 'Only items in this state (default: every open one: flagged, hidden, appealed).' },
});
const AuditQuery = queryOf({
  after: {
    type: 'string',
    maxLength: 512,
    description: 'Where to continue: next_cursor of an earlier page (or its next_after, a log position); 0 for the beginning.',
  },
  limit: limitQuery(500, 100),
  action: { type: 'string', enum: [...AUDIT_EVENT_TYPES], description: 'Only this action (event type).' },
  actor: { type: 'string', maxLength: 200, description: "Only this admin's actions (a user id)." },
  format: { type: 'string', enum: ['json', 'csv'], description: 'Export format (default json).' },
});

const FlaggerView = obj({
  agent_id: str,
  name: nullStr,
  claimed: bool,
  age_hours: { type: ['integer', 'null'] },
  trust_score: { type: 'number' },
  status: str,
  reason: nullStr,
  flagged_at: str,
  weight: str,
  withdrawn_at: nullStr,
});
export const ModerationItemView = obj({
  item_kind: str,
  item_id: str,
  title: nullStr,
  author_agent_id: nullStr,
  author_name: nullStr,
  state: str,
  open: bool,
  hidden: bool,
  hidden_at: nullStr,
  flag_count: int,
  counting_flags: int,
  flags: arr(FlaggerView),
  appeal: { type: ['object', 'null'] },
  decisions: arr({ type: 'object' }),
  entered_at: str,
  updated_at: str,
});
const AuditEntryView = obj({ position: int, at: str, action: str, actor: str, role: str, target: str, detail: str, note: str, stream: str });
const DecisionAnswer = obj({
  item_kind: str,
  item_id: str,
  decision: str,
  hidden: bool,
  admin_user_id: str,
  note: str,
  decided_at: str,
  appeal: bool,
});
const kindParam: Schema = { type: 'string', enum: [...MODERATION_KINDS], description: 'post or agent' };

export const moderationOperations = operations({
  deleteFeedPostsByIdFlag: {
    method: 'DELETE',
    path: '/api/feed/posts/:id/flag',
    summary: 'Withdraw your flag on a post (it stops counting)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: { 200: { schema: obj({ post_id: str, withdrawn: bool, flag_count: int, counting_flags: int }) } },
    rateLimit: LIMITS.writes,
  },
  deleteProtocolAgentsByIdFlag: {
    method: 'DELETE',
    path: '/api/protocol/agents/:id/flag',
    summary: 'Withdraw your flag on an agent (it stops counting)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: { 200: { schema: obj({ agent_id: str, withdrawn: bool, flag_count: int, counting_flags: int }) } },
    rateLimit: LIMITS.writes,
  },
  getAdminModerationQueue: {
    method: 'GET',
    path: '/api/admin/moderation/queue',
    summary: 'Super admin: the moderation queue, oldest-waiting first (hidden, appealed and flagged posts and agents)',
    tags: ['feed'],
    auth: 'admin',
    query: QueueQuery,
    responses: { 200: { schema: obj({ items: arr(ModerationItemView), next_cursor: str, has_more: bool }) } },
  },
  getAdminModerationItemsByKindById: {
    method: 'GET',
    path: '/api/admin/moderation/items/:kind/:id',
    summary: 'Super admin: one queued item with its flaggers, appeal and decisions',
    tags: ['feed'],
    auth: 'admin',
    params: { kind: kindParam, id: idParam('Post or agent id') },
    responses: { 200: { schema: ModerationItemView } },
    errors: [404],
  },
  postAdminModerationItemsByKindByIdDecision: {
    method: 'POST',
    path: '/api/admin/moderation/items/:kind/:id/decision',
    summary: 'Super admin: restore, uphold, ban the author or dismiss the flags of a post or agent',
    tags: ['feed'],
    auth: 'admin',
    params: { kind: kindParam, id: idParam('Post or agent id') },
    body: DecisionBody,
    responses: { 200: { schema: DecisionAnswer } },
    errors: [404, 409],
  },
  postModerationAppeals: {
    method: 'POST',
    path: '/api/moderation/appeals',
    summary: "Appeal the hide of one's own post or agent (once), by its API key or as the member it is linked to",
    tags: ['feed'],
    auth: 'key_or_bearer',
    body: AppealBody,
    responses: { 200: { schema: obj({ item_kind: str, item_id: str, appealed: bool, appealed_at: str }) } },
    errors: [404, 409],
  },
  getAdminAuditLog: {
    method: 'GET',
    path: '/api/admin/audit-log',
    summary: 'Super admin: every super-admin and community-admin action, oldest first, read from the event log',
    tags: ['feed'],
    auth: 'admin',
    query: AuditQuery,
    responses: { 200: { schema: obj({ entries: arr(AuditEntryView), next_cursor: str, next_after: int, has_more: bool }) } },
  },
  getAdminAuditLogExport: {
    method: 'GET',
    path: '/api/admin/audit-log/export',
    summary: 'Super admin: the whole (filtered) audit log as JSON (default) or CSV (format=csv)',
    tags: ['feed'],
    auth: 'admin',
    query: AuditQuery,
    responses: { 200: { alsoContentTypes: ['text/csv'], schema: obj({ entries: arr(AuditEntryView) }) } },
  },
});

export const AUDIT_CSV_COLUMNS = ['position', 'at', 'action', 'actor', 'role', 'target', 'detail', 'note', 'stream'] as const;
/** The most lines one export holds. */
export const AUDIT_EXPORT_MAX = 100_000;

/**
 * The log position an audit page continues after: a `next_cursor` handed out (the shared cursor of
 * queries/cursor.ts, oldest first) or a bare position (`next_after`, `0`); anything else 400 `invalid_cursor`.
 */
function auditAfter(raw: string): number {
  if (/^\d{1,15}$/.test(raw)) return Number(raw);
  const cursor = decodeCursor(raw);
  if (!cursor || cursor.older || cursor.key !== '')
    throw new DomainError(
      400,
      'invalid_cursor',
      'after is not a cursor this service handed out (use next_cursor of an earlier answer, or 0 for the beginning)',
    );
  return cursor.position;
}

/** The audit query's filters, checked (422 on a bad value, 400 on a cursor not handed out). */
export function auditFilters(query: Record<string, unknown>) {
  const limit = limitOnly(query, { limit: 100, max: 500 });
  const after = typeof query.after === 'string' ? auditAfter(query.after) : 0;
  const action = isOneOf(AUDIT_EVENT_TYPES, query.action) ? query.action : undefined;
  const actor = typeof query.actor === 'string' && query.actor !== '' ? query.actor : undefined;
  return { limit, after, actions: action ? [action] : undefined, actor };
}

/** Every entry matching the filters, up to AUDIT_EXPORT_MAX. */
export async function exportAudit(s: Services, f: ReturnType<typeof auditFilters>): Promise<AuditEntry[]> {
  const all: AuditEntry[] = [];
  let after = f.after;
  for (;;) {
    const page = await readAuditLog(s.log, { after, limit: 500, actions: f.actions, actor: f.actor });
    all.push(...page.entries);
    if (!page.has_more || all.length >= AUDIT_EXPORT_MAX) return all.slice(0, AUDIT_EXPORT_MAX);
    after = page.next_after;
  }
}

function auditCsv(entries: AuditEntry[]): string {
  return stringify(
    entries.map((e) => AUDIT_CSV_COLUMNS.map((c) => e[c])),
    { header: true, columns: [...AUDIT_CSV_COLUMNS] },
  );
}

/** Answers the audit entries as a download: CSV, or JSON `{entries}`. */
export function sendAuditExport(ctx: Context, entries: AuditEntry[], format: 'csv' | 'json'): void {
  ctx.set('Content-Disposition', `attachment; filename="audit-log.${format}"`);
  if (format === 'csv') {
    ctx.type = 'text/csv; charset=utf-8';
    ctx.body = auditCsv(entries);
  } else {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = JSON.stringify({ entries });
  }
}

/** The post or agent a decision or an appeal is about (404 when unknown). */
export async function targetOf(s: Services, kind: ModerationKind, id: string) {
  const t = await moderationTarget(s.store, kind, id);
  if (!t) throw notFound(kind === 'post' ? 'Post' : 'Agent', 'moderation_item_not_found');
  return { item_kind: kind, item_id: id, author_agent_id: t.author_agent_id, owner_user_id: t.owner_user_id };
}

/** A super admin's decision (the API and the console's form). */
export async function runDecision(s: Services, ctx: Context, adminId: string, kind: ModerationKind, id: string, decision: ModerationDecision, note: string) {
  const target = await targetOf(s, kind, id);
  const author = await s.store.collection('agents').findOne({ _id: target.author_agent_id }, { projection: { owner_email: 1 } });
  const mail = { secrets: s.secrets, owner_email: typeof author?.owner_email === 'string' ? author.owner_email : null };
  const r = await decideModerationItem(s.bus, target, decision, adminId, note, commandContext(s, ctx, adminId), mail);
  await settled(s, r.position);
  return r.event.data;
}

function kindOf(raw: string): ModerationKind {
  if (raw !== 'post' && raw !== 'agent') throw notFound('Moderation item', 'moderation_item_not_found');
  return raw;
}

/** Flag withdrawals, the moderation queue and decisions, appeals and the admin audit log (docs/MODERATION.md). */
export function moderationRoutes(router: Router, s: Services): void {
  const posts = new Router({ prefix: '/api/feed/posts' });
  mount(posts, moderationOperations.deleteFeedPostsByIdFlag, async (ctx) => {
    const agentId = writer(s, ctx);
    // A hidden post's flag can be withdrawn too.
    const post = await getPost(s.store, ctx.params.id);
    if (!post || post.published === false) throw notFound('Post', 'post_not_found');
    const r = await withdrawPostFlag(s.bus, post._id, agentId, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = { post_id: post._id, withdrawn: true, flag_count: r.flag_count, counting_flags: r.counting_flags };
  });
  router.use(posts.routes());

  const agents = new Router({ prefix: '/api/protocol/agents' });
  mount(agents, moderationOperations.deleteProtocolAgentsByIdFlag, async (ctx) => {
    const agentId = writer(s, ctx);
    const target = await s.store.collection('agents').findOne({ _id: ctx.params.id }, { projection: { _id: 1 } });
    if (!target) throw notFound('Agent', 'agent_not_found');
    const r = await withdrawAgentFlag(s.bus, target._id, agentId, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = { agent_id: target._id, withdrawn: true, flag_count: r.flag_count, counting_flags: r.counting_flags };
  });
  router.use(agents.routes());

  const admin = new Router({ prefix: '/api/admin' });
  mount(admin, moderationOperations.getAdminModerationQueue, async (ctx) => {
    requireSuperAdmin(ctx);
    const q = ctx.query;
    const limit = limitOnly(q, { limit: 50, max: 100 });
    const page = await queuePage(s.store, {
      kind: isOneOf(MODERATION_KINDS, q.kind) ? q.kind : undefined,
      state: isOneOf(MODERATION_STATES, q.state) ? q.state : undefined,
      after: afterCursor(q) ?? START,
      limit,
    });
    const now = s.clock.now();
    ctx.body = { items: await Promise.all(page.docs.map((d) => moderationItemView(s.store, d, now))), next_cursor: page.next_cursor, has_more: page.has_more };
  });
  mount(admin, moderationOperations.getAdminModerationItemsByKindById, async (ctx) => {
    requireSuperAdmin(ctx);
    const doc = await getModerationItem(s.store, kindOf(ctx.params.kind), ctx.params.id);
    if (!doc) throw notFound('Moderation item', 'moderation_item_not_found');
    ctx.body = await moderationItemView(s.store, doc, s.clock.now());
  });
  mount(admin, moderationOperations.postAdminModerationItemsByKindByIdDecision, async (ctx, input) => {
    const adminId = requireSuperAdmin(ctx);
    const kind = kindOf(ctx.params.kind);
    const { decision, note } = input.body;
    const d = await runDecision(s, ctx, adminId, kind, ctx.params.id, decision, note.trim());
    ctx.body = {
      item_kind: d.item_kind,
      item_id: d.item_id,
      decision: d.decision,
      hidden: d.hidden,
      admin_user_id: d.admin_user_id,
      note: d.note,
      decided_at: d.decided_at,
      appeal: d.appeal,
    };
  });
  mount(admin, moderationOperations.getAdminAuditLog, async (ctx) => {
    requireSuperAdmin(ctx);
    const f = auditFilters(ctx.query);
    const page = await readAuditLog(s.log, f);
    // next_cursor continues oldest first after the page's last line (docs/PAGING.md); next_after is the same place as a log position.
    ctx.body = {
      entries: page.entries,
      next_cursor: encodeCursor({ position: page.next_after, key: '' }),
      next_after: page.next_after,
      has_more: page.has_more,
    };
  });
  mount(admin, moderationOperations.getAdminAuditLogExport, async (ctx) => {
    requireSuperAdmin(ctx);
    const q = ctx.query;
    const f = auditFilters(q);
    const entries = await exportAudit(s, f);
    sendAuditExport(ctx, entries, q.format === 'csv' ? 'csv' : 'json');
  });
  router.use(admin.routes());

  const appeals = new Router({ prefix: '/api/moderation' });
  mount(appeals, moderationOperations.postModerationAppeals, async (ctx, input) => {
    const p = principalOf(ctx);
    // An API key, or a signed-in member (linked to the agent, or acting for it).
    if (!p || p.kind === 'agent') requireAgent(ctx);
    const body = input.body;
    const target = await targetOf(s, body.item_kind, body.item_id);
    const byAgent = p?.kind === 'agent' ? p.agentId : null;
    const byUser = p?.kind === 'user' ? p.userId : null;
    const isOwner =
      (byAgent !== null && byAgent === target.author_agent_id) ||
      (p?.kind === 'user' && (p.agentId === target.author_agent_id || (target.owner_user_id !== null && target.owner_user_id === p.userId)));
    const actor = byAgent ?? byUser;
    const r = await appealModerationItem(
      s.bus,
      target,
      { by_agent_id: byAgent, by_user_id: byUser, is_owner: isOwner, message: body.message.trim() },
      commandContext(s, ctx, actor),
    );
    await settled(s, r.position);
    ctx.body = { item_kind: target.item_kind, item_id: target.item_id, appealed: true, appealed_at: r.event.data.appealed_at };
  });
  router.use(appeals.routes());
}
