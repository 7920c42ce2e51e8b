import type { EventLog } from '../../events/store/port.ts';
import type { ServiceKey, ServiceSignature } from '../../events/kernel/signing.ts';
import { CHAIN_GENESIS, chainLink, verifyServiceSignature } from '../../events/kernel/signing.ts';
import type { LedgerEntry } from './history.ts';
import { ledger } from './history.ts';

/** What each entry's hash covers (hashed as RFC 8785 canonical JSON after the previous hash). */
export interface StatementLink {
  event_id: string;
  position: number;
  action: string;
  /** Signed milli-credits: a credit is positive, a debit negative. */
  amount_mc: number;
  balance_after_mc: number;
  created_at: string;
}

export interface StatementEntry extends StatementLink {
  type: 'debit' | 'credit';
  /** SHA-256 (hex) of `previous hash + "\n" + JCS(link)`, the link being this entry's StatementLink fields. */
  hash: string;
}

/** The signed document: a period of an agent's ledger, hash-chained from the ledger's first entry. */
export interface Statement {
  version: 1;
  agent_id: string;
  /** `from` inclusive, `to` exclusive (ISO times; `to` is at most the time of issue). */
  period: { from: string; to: string };
  /** The chain's hash before the period's first entry: the previous period's `last_hash` (64 zeros at the ledger's start). */
  previous_hash: string;
  /** The hash of the period's last entry (`previous_hash` when the period is empty): the next period's `previous_hash`. */
  last_hash: string;
  opening_balance_mc: number;
  closing_balance_mc: number;
  /** Unlimited tiers are charged without moving their balance: then balances are not checked for continuity. */
  balance_checked: boolean;
  entries: StatementEntry[];
  issued_at: string;
  key_id: string;
}

export interface SignedStatement {
  statement: Statement;
  signature: ServiceSignature;
}

export const linkOf = (e: StatementLink): StatementLink => ({
  event_id: e.event_id,
  position: e.position,
  action: e.action,
  amount_mc: e.amount_mc,
  balance_after_mc: e.balance_after_mc,
  created_at: e.created_at,
});

function toLink(e: LedgerEntry): StatementLink & { type: 'debit' | 'credit' } {
  return {
    type: e.type,
    event_id: e.event_id,
    position: e.position,
    action: e.action,
    amount_mc: e.type === 'debit' ? -e.amount_mc : e.amount_mc,
    balance_after_mc: e.balance_after_mc,
    created_at: e.created_at,
  };
}

/**
 * Builds and signs the statement of `[from, to)`. The ledger is walked from its first entry in
 * stream order, so the chain before the period is the same for every statement: the period is
 * the run of entries from the first one at or after `from` up to the first one at or after `to`,
 * and the next period starts exactly where this one ends (its `previous_hash` is this `last_hash`).
 */
export async function creditStatement(
  log: EventLog,
  key: ServiceKey,
  agentId: string,
  from: Date,
  to: Date,
  now: Date,
  unlimited: boolean,
): Promise<SignedStatement> {
  const end = to.getTime() > now.getTime() ? now : to;
  const fromIso = from.toISOString();
  const toIso = end.toISOString();
  let hash = CHAIN_GENESIS;
  let previousHash = CHAIN_GENESIS;
  let opening = 0;
  let phase: 'before' | 'in' | 'after' = 'before';
  const entries: StatementEntry[] = [];
  for await (const e of ledger(log, agentId)) {
    const link = toLink(e);
    if (phase === 'before' && link.created_at >= fromIso) phase = 'in';
    if (phase === 'in' && link.created_at >= toIso) phase = 'after';
    if (phase === 'after') break;
    hash = chainLink(hash, linkOf(link));
    if (phase === 'before') {
      previousHash = hash;
      opening = link.balance_after_mc;
    } else entries.push({ ...link, hash });
  }
  const statement: Statement = {
    version: 1,
    agent_id: agentId,
    period: { from: fromIso, to: toIso },
    previous_hash: previousHash,
    last_hash: entries.at(-1)?.hash ?? previousHash,
    opening_balance_mc: opening,
    closing_balance_mc: entries.at(-1)?.balance_after_mc ?? opening,
    balance_checked: !unlimited,
    entries,
    issued_at: now.toISOString(),
    key_id: key.kid,
  };
  return { statement, signature: key.sign(statement) };
}

/**
 * The offline verifier (docs/BILLING.md): the signature of the service key over the canonical
 * JSON of `statement`, the hash chain from `previous_hash` through every entry to `last_hash`,
 * strictly increasing positions, and (unless unlimited) each balance following from the one
 * before. Any entry changed, dropped, added or moved fails. Returns the problems found (none: valid).
 */
export function verifyStatement(doc: unknown, publicKeyX: string): string[] {
  const problems: string[] = [];
  const signed = doc as Partial<SignedStatement> | null;
  const s = signed?.statement;
  if (!s || typeof s !== 'object' || !Array.isArray(s.entries) || !signed?.signature) return ['not a signed statement: {statement, signature} expected'];
  if (!verifyServiceSignature(s, signed.signature, publicKeyX)) problems.push('the signature does not match the statement and the service key');
  let hash = s.previous_hash;
  let balance = s.opening_balance_mc;
  let position = -1;
  s.entries.forEach((e, i) => {
    hash = chainLink(hash, linkOf(e));
    if (e.hash !== hash) problems.push(`entry ${i} (position ${e.position}): hash does not follow the chain`);
    if (!(e.position > position)) problems.push(`entry ${i}: position ${e.position} does not follow ${position}`);
    position = e.position;
    if (s.balance_checked && e.balance_after_mc !== balance + e.amount_mc)
      problems.push(`entry ${i}: balance ${e.balance_after_mc} does not follow ${balance} ${e.amount_mc >= 0 ? '+' : ''}${e.amount_mc}`);
    balance = e.balance_after_mc;
  });
  if (hash !== s.last_hash) problems.push('last_hash is not the hash of the last entry');
  if (s.balance_checked && balance !== s.closing_balance_mc) problems.push('closing_balance_mc is not the last balance');
  return problems;
}
