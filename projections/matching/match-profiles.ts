import type { ProjectionContext, RecordedOf } from '../types.ts';
import { defineProjection } from '../types.ts';

/** An agent's standing matching profile; `_id` is the agent id. */
export type MatchProfileDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  name: string;
  capabilities: string[];
  /** What the last matching run said the agent gives and asks. */
  gives: string[];
  asks: string[];
  /** What matching offers of it: its gives, then its other capabilities. */
  offers: string[];
  needs: string[];
  last_run_id: string | null;
  last_run_at: string | null;
  registered_at: string;
  registered_event_id: string;
  registered_position: number;
  /** Out of matching: ghosted, or gone (deactivated or banned). */
  hidden: boolean;
  hidden_reasons?: Partial<Record<'ghosted' | 'gone', true>>;
};

declare module '../store/port.ts' {
  interface ReadModels {
    match_profiles: MatchProfileDoc;
  }
}

async function applyRun(event: RecordedOf<'MatchingRunCompleted'>, ctx: ProjectionContext): Promise<void> {
  const d = event.data;
  const profiles = ctx.collection('match_profiles');
  // Capabilities never change after registration (AgentRegistered comes first on the same stream).
  const doc = await profiles.findOne({ _id: d.agent_id }, { projection: { capabilities: 1 } });
  const capabilities = doc?.capabilities ?? [];
  const offers = [...d.gives, ...capabilities.filter((c) => !d.gives.includes(c))];
  await profiles.applyAt(d.agent_id, event.position, {
    $set: { gives: d.gives, asks: d.asks, offers, needs: d.asks, last_run_id: d.run_id, last_run_at: d.completed_at },
  });
}

/**
 * Standing offers and needs per agent, for bilateral matching and the scout: `offers` = the gives
 * of the agent's latest matching run ∪ its capabilities, `needs` = the asks of that run (empty
 * until it runs one). Both the mixer and the scout look candidates up through the multikey index
 * on `needs`: only agents that ran the mixer have needs, so that side is the narrow one (every
 * agent offers its capabilities), and the other condition is checked on the few documents found.
 * A ghosted agent is kept with `hidden: true` and never matched.
 */
export const matchProfilesProjection = defineProjection({
  name: 'match_profiles',
  collections: [
    {
      name: 'match_profiles',
      indexes: [
        { name: 'by_needs', keys: { needs: 1 } },
        { name: 'by_registered', keys: { registered_at: -1 } },
      ],
    },
  ],
  handles: ['AgentRegistered', 'AgentProfileUpdated', 'MatchingRunCompleted', 'AgentGhosted', 'AgentDeactivated', 'AgentBanned', 'ModerationDecided'],
  async apply(event, ctx) {
    const profiles = ctx.collection('match_profiles');
    switch (event.type) {
      case 'AgentRegistered': {
        const d = event.data;
        await profiles.applyAt(d.agent_id, event.position, {
          $set: {
            agent_id: d.agent_id,
            name: d.name,
            capabilities: d.capabilities,
            gives: [],
            asks: [],
            offers: d.capabilities,
            needs: [],
            last_run_id: null,
            last_run_at: null,
            registered_at: d.registered_at,
            registered_event_id: event.id,
            registered_position: event.position,
            hidden: false,
          },
        });
        return;
      }
      case 'AgentProfileUpdated': {
        const d = event.data;
        if (d.name !== undefined) await profiles.applyAt(d.agent_id, event.position, { $set: { name: d.name } });
        return;
      }
      case 'AgentGhosted':
      case 'AgentDeactivated':
      case 'AgentBanned': {
        const d = event.data;
        const reason = event.type === 'AgentGhosted' ? 'ghosted' : 'gone';
        await profiles.applyAt(d.agent_id, event.position, { $set: { hidden: true, [`hidden_reasons.${reason}`]: true } });
        return;
      }
      case 'ModerationDecided': {
        // A moderator restored (or upheld) a ghosted agent: matched again unless it is banned or deactivated.
        const d = event.data;
        if (d.item_kind !== 'agent') return;
        if (d.hidden) {
          await profiles.applyAt(d.item_id, event.position, { $set: { hidden: true, 'hidden_reasons.ghosted': true } });
          return;
        }
        const profile = await profiles.findOne({ _id: d.item_id });
        if (!profile) return;
        const gone = profile.hidden_reasons?.gone === true;
        await profiles.applyAt(d.item_id, event.position, { $set: { hidden: gone }, $unset: { 'hidden_reasons.ghosted': '' } });
        return;
      }
      case 'MatchingRunCompleted':
        return applyRun(event, ctx);
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
