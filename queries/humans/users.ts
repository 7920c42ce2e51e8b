import { PUBLIC_AGENTS } from '../agents/agents.ts';
import type { ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { listPage } from '../cursor.ts';

export function getUser(store: ReadStore, userId: string) {
  return store.collection('users').findOne({ _id: userId });
}

const SIGNED_IN_FIELDS = { email: 1, agent_id: 1 } as const;
/** What every signed-in request needs of its user (the bearer check): the email and the linked agent. */
export function signedInUser(store: ReadStore, userId: string) {
  return store.collection('users').findOne({ _id: userId }, { projection: SIGNED_IN_FIELDS });
}

export function mailById(store: ReadStore, mailId: string) {
  return store.collection('mails').findOne({ _id: mailId });
}

/** Mails neither sent nor given up, oldest first (index-served). */
export function pendingMails(store: ReadStore, limit: number) {
  return store.collection('mails').find({ status: { $in: ['queued', 'retrying'] } }, { sort: { status: 1, queued_at: 1 }, limit });
}

/** Agents linked to a user (the dashboard). */
export function agentsOf(store: ReadStore, agentIds: string[]) {
  if (agentIds.length === 0) return Promise.resolve([]);
  return store.collection('agents').find({ _id: { $in: agentIds } });
}

/** Roles: member always; super_admin from ADMIN_EMAILS or the `admins` read model (admin CLI). */
export async function rolesOf(store: ReadStore, email: string, adminEmails: readonly string[]): Promise<string[]> {
  const lower = email.toLowerCase();
  const admin = adminEmails.includes(lower) || (await store.collection('admins').findOne({ _id: lower })) !== null;
  return admin ? ['member', 'super_admin'] : ['member'];
}

export async function agentIdForClaimTokenHash(store: ReadStore, hash: string): Promise<string | null> {
  const doc = await store.collection('claim_tokens').findOne({ _id: hash });
  return doc ? String(doc.agent_id) : null;
}

/** A user's digests, newest first, paged by the one cursor (queries/cursor.ts listPage). */
export async function digestsOf(store: ReadStore, userId: string, opts: { skip: number; limit: number; after?: Cursor }) {
  const digests = store.collection('digests');
  const [page, total, unread] = await Promise.all([
    listPage(digests, { user_id: userId }, opts),
    digests.count({ user_id: userId }),
    digests.count({ user_id: userId, read: false }),
  ]);
  return { items: page.docs, total, unread, next_cursor: page.next_cursor, has_more: page.has_more, poll_cursor: page.poll_cursor };
}

export function digestView(d: ReadModel<'digests'>) {
  return {
    digest_id: d._id,
    agent_id: d.agent_id,
    items: d.items,
    since: d.since,
    produced_at: d.produced_at,
    read: d.read === true,
    read_at: d.read_at ?? null,
  };
}

/** Users with a linked agent (the digest worker's input). */
export function usersWithAgents(store: ReadStore, limit: number) {
  return store.collection('users').find({ agent_id: { $type: 'string' } }, { limit });
}

/** Agents sharing a capability with the given ones, newest first (index by_capability). */
export function agentsWithCapabilities(store: ReadStore, capabilities: string[], limit: number) {
  return store.collection('agents').find({ capabilities: { $in: capabilities }, ...PUBLIC_AGENTS }, { sort: { seq: -1 }, limit });
}

/** The latest digest of a user (its time bounds the next one). */
export function latestDigest(store: ReadStore, userId: string) {
  return store.collection('digests').findOne({ user_id: userId }, { sort: { user_id: 1, produced_at: -1 } });
}

export function getMatch(store: ReadStore, matchId: string) {
  return store.collection('matches').findOne({ _id: matchId });
}

export function getMatchMessage(store: ReadStore, messageId: string) {
  return store.collection('match_messages').findOne({ _id: messageId });
}

/** A conversation, oldest first, without deleted messages. */
export function matchMessages(store: ReadStore, matchId: string, limit = 200) {
  return store.collection('match_messages').find({ match_id: matchId, deleted: false }, { sort: { match_id: 1, sent_at: 1 }, limit });
}

/** A member's matches, the newest first (index-served: by_member). */
export function matchesOf(store: ReadStore, userId: string, limit: number) {
  return store.collection('matches').find({ members: userId }, { sort: { members: 1, created_at: -1 }, limit, hint: 'by_member' });
}

/** What a member has not read, by match (index-served: by_recipient_unread). */
export async function unreadByMatch(store: ReadStore, userId: string): Promise<Map<string, number>> {
  const unread = await store
    .collection('match_messages')
    .find({ recipient_id: userId, read: false, deleted: false }, { projection: { match_id: 1 }, limit: 10_000 });
  const counts = new Map<string, number>();
  for (const m of unread) counts.set(String(m.match_id), (counts.get(String(m.match_id)) ?? 0) + 1);
  return counts;
}

export function unreadMatchMessages(store: ReadStore, userId: string): Promise<number> {
  return store.collection('match_messages').count({ recipient_id: userId, read: false, deleted: false });
}

export function matchMessageView(d: ReadModel<'match_messages'>) {
  return {
    message_id: d._id,
    match_id: d.match_id,
    sender_id: d.sender_id,
    recipient_id: d.recipient_id,
    content: d.content,
    created_at: d.sent_at,
    is_read: d.read === true,
  };
}
