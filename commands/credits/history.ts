import { agentStream } from '../../events/agents.ts';
import { toCredits } from '../../events/kernel/money.ts';
import type { EventLog } from '../../events/store/port.ts';
import type { Recorded } from '../../events/types.ts';
import type { AgentStreamEvent } from '../agents/agent.ts';
import { agentStreamEvent } from '../agents/agent.ts';

export interface CreditTransaction {
  transaction_id: string;
  type: 'debit' | 'credit';
  action: string;
  amount: number;
  amount_mc: number;
  balance_after: number;
  balance_after_mc: number;
  reference: Record<string, string>;
  created_at: string;
  position: number;
}

const REFERENCE_FIELDS = ['post_id', 'comment_id', 'dm_id', 'message_id', 'thread_id', 'intent_id', 'contract_id', 'response_id', 'run_id'];

function toTransaction(e: Recorded<AgentStreamEvent>): CreditTransaction | null {
  if (e.type === 'MonthlyCreditsGranted') {
    const g = e.data;
    return {
      transaction_id: e.id,
      type: 'credit',
      action: 'monthly_allocation',
      amount: toCredits(g.amount_mc),
      amount_mc: g.amount_mc,
      balance_after: toCredits(g.balance_after_mc),
      balance_after_mc: g.balance_after_mc,
      reference: { cycle: String(g.cycle) },
      created_at: e.metadata.occurred_at,
      position: e.position,
    };
  }
  if (e.type === 'CreditsToppedUp' || e.type === 'AgentTierUpgraded') {
    const g = e.data;
    return {
      transaction_id: e.id,
      type: 'credit',
      action: e.type === 'CreditsToppedUp' ? 'topup' : 'upgrade_allocation',
      amount: toCredits(g.amount_mc),
      amount_mc: g.amount_mc,
      balance_after: toCredits(g.balance_after_mc),
      balance_after_mc: g.balance_after_mc,
      reference: { order_id: g.order_id },
      created_at: e.metadata.occurred_at,
      position: e.position,
    };
  }
  if (e.type === 'AgentTierRenewed' || e.type === 'TierLapsed') {
    // The paid tier's month bought (a renewal) or ended unpaid (a lapse): no credits move, the balance is kept.
    const g = e.data;
    const renewed = e.type === 'AgentTierRenewed';
    const reference: Record<string, string> = renewed
      ? { order_id: e.data.order_id, tier: e.data.tier, paid_until: e.data.paid_until }
      : { from_tier: e.data.from_tier, to_tier: e.data.to_tier, ...(e.data.order_id ? { order_id: e.data.order_id } : {}) };
    return {
      transaction_id: e.id,
      type: renewed ? 'credit' : 'debit',
      action: renewed ? 'tier_renewed' : 'tier_lapsed',
      amount: 0,
      amount_mc: 0,
      balance_after: toCredits(g.balance_mc),
      balance_after_mc: g.balance_mc,
      reference,
      created_at: e.metadata.occurred_at,
      position: e.position,
    };
  }
  const data: Readonly<Record<string, unknown>> = e.data;
  const c = 'charge' in e.data ? e.data.charge : undefined;
  if (!c) return null;
  const reference: Record<string, string> = {};
  for (const f of REFERENCE_FIELDS) {
    const value = data[f];
    if (typeof value === 'string') reference[f] = value;
  }
  const refund = c.amount_mc < 0;
  return {
    transaction_id: e.id,
    type: refund ? 'credit' : 'debit',
    action: c.action,
    amount: toCredits(Math.abs(c.amount_mc)),
    amount_mc: Math.abs(c.amount_mc),
    balance_after: toCredits(c.balance_after_mc),
    balance_after_mc: c.balance_after_mc,
    reference,
    created_at: e.metadata.occurred_at,
    position: e.position,
  };
}

/**
 * Credit history straight from the agent's stream (the ledger), newest first: every grant and
 * every event that carried a charge, recorded before log position `beforePosition` when given (the
 * continuation of a newest-first page). Reads the stream backwards in pages until `skip + limit + 1`
 * are found, and answers the `limit` after the first `skip`, and whether older ones follow. The
 * stream's last event before the position is found by bisecting its revisions (O(log n) reads).
 */
export async function creditHistory(
  log: EventLog,
  agentId: string,
  limit: number,
  skip = 0,
  beforePosition?: number,
): Promise<{ transactions: CreditTransaction[]; has_more: boolean }> {
  const stream = agentStream(agentId);
  let from: number | undefined;
  if (beforePosition !== undefined) {
    const head = (await log.readStream(stream, { direction: 'backwards', maxCount: 1 }))[0];
    if (!head) return { transactions: [], has_more: false };
    if (head.position >= beforePosition) {
      const positionAt = async (revision: number) =>
        (await log.readStream(stream, { direction: 'forwards', fromRevision: revision, maxCount: 1 }))[0]?.position;
      // lo: a revision before the position (-1: none), hi: one at or past it.
      let lo = -1;
      let hi = head.revision;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        const p = await positionAt(mid);
        if (p !== undefined && p < beforePosition) lo = mid;
        else hi = mid;
      }
      if (lo < 0) return { transactions: [], has_more: false };
      from = lo;
    }
  }
  const out: CreditTransaction[] = [];
  for (;;) {
    const page = await log.readStream(stream, { direction: 'backwards', fromRevision: from, maxCount: PAGE });
    for (const e of page) {
      if (beforePosition !== undefined && e.position >= beforePosition) continue;
      const t = toTransaction(agentStreamEvent(e));
      if (t) out.push(t);
      if (out.length > skip + limit) return { transactions: out.slice(skip, skip + limit), has_more: true };
    }
    const last = page[page.length - 1];
    if (page.length < PAGE || !last || last.revision === 0) return { transactions: out.slice(skip), has_more: false };
    from = last.revision - 1;
  }
}

const PAGE = 200;

/**
 * The transactions recorded after log position `afterPosition`, oldest first, at most `limit`
 * (the one cursor: one event carries at most one transaction, so its position alone orders them).
 * The stream's first event past the position is found by bisecting its revisions, so a page costs
 * O(log n) reads plus the page itself, however long the ledger.
 */
export async function creditHistoryAfter(
  log: EventLog,
  agentId: string,
  afterPosition: number,
  limit: number,
): Promise<{ transactions: CreditTransaction[]; has_more: boolean }> {
  const stream = agentStream(agentId);
  const positionAt = async (revision: number) => (await log.readStream(stream, { direction: 'forwards', fromRevision: revision, maxCount: 1 }))[0]?.position;
  const head = (await log.readStream(stream, { direction: 'backwards', maxCount: 1 }))[0];
  if (!head || head.position <= afterPosition) return { transactions: [], has_more: false };
  // The first revision whose position is past the cursor: lo..hi brackets it.
  let lo = 0;
  let hi = head.revision;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const p = await positionAt(mid);
    if (p !== undefined && p > afterPosition) hi = mid;
    else lo = mid + 1;
  }
  const out: CreditTransaction[] = [];
  let from = lo;
  for (;;) {
    const page = await log.readStream(stream, { direction: 'forwards', fromRevision: from, maxCount: PAGE });
    for (const e of page) {
      if (e.position <= afterPosition) continue;
      const t = toTransaction(agentStreamEvent(e));
      if (!t) continue;
      if (out.length === limit) return { transactions: out, has_more: true };
      out.push(t);
    }
    const last = page[page.length - 1];
    if (page.length < PAGE || !last) return { transactions: out, has_more: false };
    from = last.revision + 1;
  }
}

/** One ledger entry as admins audit it: the transaction, its event and log position, and who caused it. */
export interface LedgerEntry extends CreditTransaction {
  event_id: string;
  event_type: string;
  /** The actor recorded on the event (an agent id, a user id, `cli:<operator>`, or null for the service's own jobs). */
  actor: string | null;
  revision: number;
}

export interface LedgerFilter {
  type?: 'debit' | 'credit';
  action?: string;
  /** ISO times: `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
}

export function matchesFilter(e: LedgerEntry, f: LedgerFilter): boolean {
  if (f.type && e.type !== f.type) return false;
  if (f.action && e.action !== f.action) return false;
  if (f.from && e.created_at < f.from) return false;
  if (f.to && e.created_at >= f.to) return false;
  return true;
}

/** True when the agent's stream exists (the ledger of an unknown agent is an error, not an empty list). */
export async function ledgerExists(log: EventLog, agentId: string): Promise<boolean> {
  return (await log.readStream(agentStream(agentId), { maxCount: 1 })).length > 0;
}

/**
 * The agent's ledger straight from its stream, oldest first, from the first event past
 * `afterPosition` (found by bisecting revisions, as creditHistoryAfter does).
 */
export async function* ledger(log: EventLog, agentId: string, afterPosition = 0): AsyncGenerator<LedgerEntry> {
  const stream = agentStream(agentId);
  let from = 0;
  if (afterPosition > 0) {
    const head = (await log.readStream(stream, { direction: 'backwards', maxCount: 1 }))[0];
    if (!head || head.position <= afterPosition) return;
    let lo = 0;
    let hi = head.revision;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const p = (await log.readStream(stream, { direction: 'forwards', fromRevision: mid, maxCount: 1 }))[0]?.position;
      if (p !== undefined && p > afterPosition) hi = mid;
      else lo = mid + 1;
    }
    from = lo;
  }
  for (;;) {
    const page = await log.readStream(stream, { direction: 'forwards', fromRevision: from, maxCount: PAGE });
    for (const raw of page) {
      if (raw.position <= afterPosition) continue;
      const e = agentStreamEvent(raw);
      const t = toTransaction(e);
      if (t) yield { ...t, event_id: raw.id, event_type: raw.type, actor: raw.metadata.actor ?? null, revision: raw.revision };
    }
    const last = page[page.length - 1];
    if (page.length < PAGE || !last) return;
    from = last.revision + 1;
  }
}

/** One page of the filtered ledger after a cursor position, oldest first. */
export async function ledgerPage(
  log: EventLog,
  agentId: string,
  filter: LedgerFilter,
  afterPosition: number,
  limit: number,
): Promise<{ entries: LedgerEntry[]; has_more: boolean }> {
  const entries: LedgerEntry[] = [];
  for await (const e of ledger(log, agentId, afterPosition)) {
    if (!matchesFilter(e, filter)) continue;
    if (entries.length === limit) return { entries, has_more: true };
    entries.push(e);
  }
  return { entries, has_more: false };
}

/** An entry as the admin API and `credits history --json` print it. */
export function ledgerJson(e: LedgerEntry) {
  return {
    position: e.position,
    revision: e.revision,
    event_id: e.event_id,
    event_type: e.event_type,
    transaction_id: e.transaction_id,
    type: e.type,
    action: e.action,
    amount: e.amount,
    amount_mc: e.amount_mc,
    balance_after: e.balance_after,
    reference: e.reference,
    actor: e.actor,
    created_at: e.created_at,
  };
}
