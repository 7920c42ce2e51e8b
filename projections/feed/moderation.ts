import type { ModerationDecision, ModerationKind } from '../../events/moderation.ts';
import type { ProjectionContext } from '../types.ts';
import { defineProjection } from '../types.ts';

/** States of a queued item; the first three are open (awaiting a moderator). */
export const OPEN_STATES = ['flagged', 'hidden', 'appealed'] as const;

export type FlagEntry = {
  agent_id: string;
  reason: string | null;
  weight: string;
  flagged_at: string;
  withdrawn_at: string | null;
};

export type ModerationDecisionEntry = {
  decision: ModerationDecision;
  admin_user_id: string;
  note: string | null;
  decided_at: string;
  appeal: boolean;
  position: number;
};

export type AppealEntry = {
  message: string;
  by_agent_id: string | null;
  by_user_id: string | null;
  appealed_at: string;
  decision: ModerationDecision | null;
  decided_at: string | null;
};

export type ModerationItemState = (typeof OPEN_STATES)[number] | 'restored' | 'upheld' | 'dismissed' | 'banned' | 'withdrawn';

/** A queued item's fields (a decider of this projection changes them in memory, then writes them back). */
type ModerationItem = {
  _id: string;
  /** Absent only on an item not written yet. */
  _pos?: number;
  item_kind: ModerationKind;
  item_id: string;
  state: ModerationItemState;
  /** Awaiting a moderator: flagged, hidden or appealed. */
  open: boolean;
  hidden: boolean;
  flags: FlagEntry[];
  /** Flaggers whose flags a decision spent: they no longer count. */
  spent: string[];
  flag_count: number;
  counting_count: number;
  hidden_at: string | null;
  appeal: AppealEntry | null;
  decisions: ModerationDecisionEntry[];
  author_agent_id?: string;
  /** The position at which the item (re-)entered the queue: oldest-waiting first. */
  seq: number;
  entered_at: string;
  updated_at?: string;
};

/** A flagged or hidden post or agent; `_id` is `<kind>:<id>`. */
export type ModerationItemDoc = ModerationItem & {
  _pos: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    moderation_items: ModerationItemDoc;
  }
}

interface ItemChange {
  kind: ModerationKind;
  itemId: string;
  position: number;
  at: string;
  change: (doc: ModerationItem) => ModerationItem;
}

const key = (kind: string, id: string) => `${kind}:${id}`;

/** The flags standing (not withdrawn), and those of them that count (not spent by a decision). */
function tally(flags: FlagEntry[], spent: string[]): { flag_count: number; counting_count: number } {
  const standing = flags.filter((f) => f.withdrawn_at === null);
  return { flag_count: standing.length, counting_count: standing.filter((f) => f.weight === 'counts' && !spent.includes(f.agent_id)).length };
}

/** Read, change in memory, write back under the position guard (a redelivered event changes nothing). */
async function applyItem(ctx: ProjectionContext, c: ItemChange): Promise<void> {
  const items = ctx.collection('moderation_items');
  const id = key(c.kind, c.itemId);
  const before: ModerationItem = (await items.findOne({ _id: id })) ?? {
    _id: id,
    item_kind: c.kind,
    item_id: c.itemId,
    state: 'flagged',
    open: false,
    hidden: false,
    flags: [],
    spent: [],
    flag_count: 0,
    counting_count: 0,
    hidden_at: null,
    appeal: null,
    decisions: [],
    seq: c.position,
    entered_at: c.at,
  };
  if (typeof before._pos === 'number' && before._pos >= c.position) return;
  const wasOpen = before.open === true;
  const next = c.change({ ...before });
  // An item (re-)entering the queue takes its place at the back: the queue is oldest-waiting first.
  if (next.open === true && !wasOpen) {
    next.seq = c.position;
    next.entered_at = c.at;
  }
  const { _id: _ignored, _pos: _p, ...fields } = next;
  await items.applyAt(id, c.position, { $set: Object.assign({}, fields, { updated_at: c.at }) });
}

function flagged(doc: ModerationItem, flag: FlagEntry): ModerationItem {
  const flags = [...(doc.flags ?? []).filter((f) => !(f.agent_id === flag.agent_id && f.withdrawn_at === null)), flag];
  const state = doc.open === true ? doc.state : doc.hidden === true ? 'hidden' : 'flagged';
  return { ...doc, ...tally(flags, doc.spent), flags, open: true, state };
}

function withdrawn(doc: ModerationItem, agentId: string, at: string): ModerationItem {
  const flags = (doc.flags ?? []).map((f) => (f.agent_id === agentId && f.withdrawn_at === null ? Object.assign({}, f, { withdrawn_at: at }) : f));
  const t = tally(flags, doc.spent);
  // A visible item whose flags are all withdrawn leaves the queue.
  if (doc.open === true && doc.state === 'flagged' && t.flag_count === 0) return { ...doc, ...t, flags, open: false, state: 'withdrawn' };
  return { ...doc, ...t, flags };
}

/**
 * The moderation queue (docs/MODERATION.md): one document per flagged or hidden post or agent,
 * with every flag (its reason, time and weight), the hide, the owner's appeal and the decisions.
 * Open items (`flagged`, `hidden`, `appealed`) are read oldest-waiting first from the `queue`
 * indexes; decided ones by state. Titles, authors and flaggers' standing are joined at read time.
 */
export const moderationProjection = defineProjection({
  name: 'moderation',
  collections: [
    {
      name: 'moderation_items',
      indexes: [
        { name: 'queue', keys: { open: 1, seq: 1, _id: 1 } },
        { name: 'queue_kind', keys: { open: 1, item_kind: 1, seq: 1, _id: 1 } },
        { name: 'by_state', keys: { state: 1, seq: 1, _id: 1 } },
        { name: 'by_state_kind', keys: { state: 1, item_kind: 1, seq: 1, _id: 1 } },
      ],
    },
  ],
  handles: ['PostFlagged', 'AgentFlagged', 'PostFlagWithdrawn', 'AgentFlagWithdrawn', 'PostGhosted', 'AgentGhosted', 'ModerationDecided', 'ModerationAppealed'],
  async apply(event, ctx) {
    switch (event.type) {
      case 'PostFlagged':
      case 'AgentFlagged': {
        const d = event.data;
        const kind = event.type === 'PostFlagged' ? 'post' : 'agent';
        const itemId = event.type === 'PostFlagged' ? event.data.post_id : event.data.target_agent_id;
        const flag: FlagEntry = { agent_id: d.agent_id, reason: d.reason, weight: d.weight ?? 'counts', flagged_at: d.flagged_at, withdrawn_at: null };
        return applyItem(ctx, { kind, itemId, position: event.position, at: d.flagged_at, change: (doc) => flagged(doc, flag) });
      }
      case 'PostFlagWithdrawn':
      case 'AgentFlagWithdrawn': {
        const d = event.data;
        const kind = event.type === 'PostFlagWithdrawn' ? 'post' : 'agent';
        const itemId = event.type === 'PostFlagWithdrawn' ? event.data.post_id : event.data.target_agent_id;
        return applyItem(ctx, { kind, itemId, position: event.position, at: d.withdrawn_at, change: (doc) => withdrawn(doc, d.agent_id, d.withdrawn_at) });
      }
      case 'PostGhosted':
      case 'AgentGhosted': {
        const kind = event.type === 'PostGhosted' ? 'post' : 'agent';
        const itemId = event.type === 'PostGhosted' ? event.data.post_id : event.data.agent_id;
        const at = event.data.ghosted_at;
        return applyItem(ctx, {
          kind,
          itemId,
          position: event.position,
          at,
          change: (doc) => Object.assign({}, doc, { hidden: true, hidden_at: at, open: true, state: doc.appeal ? 'appealed' : 'hidden' }),
        });
      }
      case 'ModerationDecided': {
        const d = event.data;
        const state = ({ restore: 'restored', uphold: 'upheld', ban_author: 'banned', dismiss: 'dismissed' } as const)[d.decision];
        return applyItem(ctx, {
          kind: d.item_kind,
          itemId: d.item_id,
          position: event.position,
          at: d.decided_at,
          change: (doc) => {
            const spent = [...new Set([...(doc.spent ?? []), ...d.spent])];
            const decision: ModerationDecisionEntry = {
              decision: d.decision,
              admin_user_id: d.admin_user_id,
              note: d.note,
              decided_at: d.decided_at,
              appeal: d.appeal,
              position: event.position,
            };
            return {
              ...doc,
              ...tally(doc.flags, spent),
              author_agent_id: d.author_agent_id,
              hidden: d.hidden,
              hidden_at: d.hidden ? (doc.hidden_at ?? d.decided_at) : null,
              spent,
              decisions: [...(doc.decisions ?? []), decision],
              appeal: doc.appeal && d.appeal ? Object.assign({}, doc.appeal, { decision: d.decision, decided_at: d.decided_at }) : doc.appeal,
              state,
              open: false,
            };
          },
        });
      }
      case 'ModerationAppealed': {
        const d = event.data;
        const appeal: AppealEntry = {
          message: d.message,
          by_agent_id: d.by_agent_id,
          by_user_id: d.by_user_id,
          appealed_at: d.appealed_at,
          decision: null,
          decided_at: null,
        };
        return applyItem(ctx, {
          kind: d.item_kind,
          itemId: d.item_id,
          position: event.position,
          at: d.appealed_at,
          change: (doc) => Object.assign({}, doc, { author_agent_id: d.author_agent_id, appeal, state: 'appealed', open: true }),
        });
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
