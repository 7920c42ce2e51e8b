import { FLAGS_TO_GHOST } from '../../events/feed.ts';
import { conflict, DomainError, forbidden } from '../../events/kernel/errors.ts';
import type { FlagWeight, ModerationAppealed, ModerationDecided, ModerationDecision, ModerationKind } from '../../events/moderation.ts';

/** A flagger's registration must be at least this old for its flag to count (docs/MODERATION.md). */
export const FLAGGER_MIN_AGE_MS = 24 * 3600_000;

/** What the rule needs to know about a flagger, read when the flag is made. */
export interface FlaggerFacts {
  claimed: boolean;
  registered_at: string;
  /** Ghosted by flags, banned or deactivated. */
  hidden: boolean;
}

/**
 * The flag-and-moderation state of one item (a post's `post-<id>` or an agent's
 * `agent-flags-<id>`), shared by both aggregates: the standing flags and whether each counts, the
 * flaggers a restore or a dismissal spent, whether the item is hidden, and its appeal.
 */
export interface FlagLedger {
  /** Standing flags: flagger -> counts toward the automatic hide. */
  flags: Readonly<Record<string, boolean>>;
  /** Flaggers whose flags a moderator's restore or dismissal used up: never counted again on this item. */
  spent: Readonly<Record<string, true>>;
  hidden: boolean;
  appeal: 'none' | 'pending' | 'decided';
}

export const emptyLedger = (): FlagLedger => ({ flags: {}, spent: {}, hidden: false, appeal: 'none' });

/** The rule, in order: a spent flagger, an unclaimed one, one registered < 24 h before `now`, one ghosted, banned or deactivated. */
export function flagWeight(ledger: FlagLedger, flagger: string, facts: FlaggerFacts, now: Date): FlagWeight {
  if (ledger.spent[flagger]) return 'spent';
  if (!facts.claimed) return 'unclaimed';
  if (now.getTime() - Date.parse(facts.registered_at) < FLAGGER_MIN_AGE_MS) return 'too_new';
  if (facts.hidden) return 'flagger_hidden';
  return 'counts';
}

export const standingFlags = (ledger: FlagLedger): number => Object.keys(ledger.flags).length;
export const countingFlags = (ledger: FlagLedger): number => Object.values(ledger.flags).filter(Boolean).length;

/** The ledger events, as both item streams carry them (flags and ghosting under each stream's own names). */
export type LedgerChange =
  | { kind: 'flagged'; flagger: string; counts: boolean }
  | { kind: 'withdrawn'; flagger: string }
  | { kind: 'ghosted' }
  | { kind: 'decided'; event: ModerationDecided }
  | { kind: 'appealed' };

export function evolveLedger(ledger: FlagLedger, change: LedgerChange): FlagLedger {
  switch (change.kind) {
    case 'flagged':
      return { ...ledger, flags: { ...ledger.flags, [change.flagger]: change.counts } };
    case 'withdrawn': {
      const flags = { ...ledger.flags };
      delete flags[change.flagger];
      return { ...ledger, flags };
    }
    case 'ghosted':
      return { ...ledger, hidden: true };
    case 'decided': {
      const d = change.event.data;
      const spent = { ...ledger.spent };
      const flags = { ...ledger.flags };
      for (const id of d.spent) {
        spent[id] = true;
        // A spent flag stays standing (shown to moderators) but no longer counts.
        if (id in flags) flags[id] = false;
      }
      return { flags, spent, hidden: d.hidden, appeal: d.appeal ? 'decided' : ledger.appeal };
    }
    case 'appealed':
      return { ...ledger, appeal: 'pending' };
    default: {
      const _exhaustive: never = change;
      return ledger;
    }
  }
}

/** What a flag decides: whether it is new, whether it counts, and whether it hides the item now. */
export interface FlagOutcome {
  /** False: the flagger's flag already stands (a repeat appends nothing). */
  fresh: boolean;
  weight: FlagWeight;
  standing: number;
  counting: number;
  /** The item was visible and this flag is the 5th counting one. */
  hides: boolean;
}

export function decideFlag(ledger: FlagLedger, flagger: string, facts: FlaggerFacts, now: Date): FlagOutcome {
  if (flagger in ledger.flags) return { fresh: false, weight: 'counts', standing: standingFlags(ledger), counting: countingFlags(ledger), hides: false };
  const weight = flagWeight(ledger, flagger, facts, now);
  const after = evolveLedger(ledger, { kind: 'flagged', flagger, counts: weight === 'counts' });
  const counting = countingFlags(after);
  return { fresh: true, weight, standing: standingFlags(after), counting, hides: !ledger.hidden && counting >= FLAGS_TO_GHOST };
}

/** A withdrawal of a flag that does not stand is 404 `flag_not_found`. */
export function mustHaveFlag(ledger: FlagLedger, flagger: string): void {
  if (!(flagger in ledger.flags)) throw new DomainError(404, 'flag_not_found', 'You have no standing flag on this item');
}

export interface DecideModeration {
  item_kind: ModerationKind;
  item_id: string;
  author_agent_id: string;
  decision: ModerationDecision;
  admin_user_id: string;
  note: string;
  now: Date;
}

/**
 * restore: a hidden item becomes visible; its standing flags are spent (409 `item_not_hidden` when
 * it is visible). uphold: the item is (or stays) hidden. ban_author: as uphold, with the author's
 * ban beside it. dismiss: the standing flags of a visible item are spent (409 `item_hidden` when
 * it is hidden: restore it; 409 `no_flags` without standing flags).
 */
export function decideModeration(ledger: FlagLedger, c: DecideModeration): ModerationDecided {
  const standing = Object.keys(ledger.flags).filter((id) => !ledger.spent[id]);
  let hidden = ledger.hidden;
  let spent: string[] = [];
  switch (c.decision) {
    case 'restore':
      if (!ledger.hidden) throw conflict('The item is not hidden', 'item_not_hidden');
      hidden = false;
      spent = standing;
      break;
    case 'dismiss':
      if (ledger.hidden) throw conflict('The item is hidden: restore it instead', 'item_hidden');
      if (standing.length === 0) throw conflict('The item has no flags to dismiss', 'no_flags');
      spent = standing;
      break;
    case 'uphold':
    case 'ban_author':
      hidden = true;
      break;
    default: {
      const _exhaustive: never = c.decision;
      return _exhaustive;
    }
  }
  return {
    type: 'ModerationDecided',
    data: {
      item_kind: c.item_kind,
      item_id: c.item_id,
      author_agent_id: c.author_agent_id,
      decision: c.decision,
      hidden,
      spent,
      appeal: ledger.appeal === 'pending',
      admin_user_id: c.admin_user_id,
      note: c.note,
      decided_at: c.now.toISOString(),
    },
  };
}

export interface DecideAppeal {
  item_kind: ModerationKind;
  item_id: string;
  author_agent_id: string;
  /** Who appeals: the author agent by its key, or the member linked to it. */
  by_agent_id: string | null;
  by_user_id: string | null;
  /** From the read model: the caller is the item's owner (the author agent, or the member it is linked to). */
  is_owner: boolean;
  message: string;
  now: Date;
}

/** Only the owner (403 `not_item_owner`), only a hidden item (409 `item_not_hidden`), once (409 `already_appealed`). */
export function decideAppeal(ledger: FlagLedger, c: DecideAppeal): ModerationAppealed {
  if (!c.is_owner) throw forbidden('Only the owner of the item may appeal', 'not_item_owner');
  if (ledger.appeal !== 'none') throw conflict('This item has already been appealed', 'already_appealed');
  if (!ledger.hidden) throw conflict('The item is not hidden', 'item_not_hidden');
  return {
    type: 'ModerationAppealed',
    data: {
      item_kind: c.item_kind,
      item_id: c.item_id,
      author_agent_id: c.author_agent_id,
      by_agent_id: c.by_agent_id,
      by_user_id: c.by_user_id,
      message: c.message,
      appealed_at: c.now.toISOString(),
    },
  };
}
