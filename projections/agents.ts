import type { AgentProfileUpdated, AgentRegistered, SuperAdminGranted } from '../events/agents.ts';
import type { MonthlyCreditsGranted } from '../events/credits.ts';
import type { AgentClaimed, AgentOwnerLinked, ApiKeyReplaced, AutoPostPrefsChanged } from '../events/humans.ts';
import type { RecordedEvent } from '../events/store/port.ts';
import { chargeOf } from '../events/types.ts';
import { CHARGED_EVENT_TYPES } from '../events/catalogue.ts';
import type { AgentGhosted, PostPublished } from '../events/feed.ts';
import type { Projection } from './types.ts';

type Data<E extends { data: unknown }> = E['data'];

/** Agents: profiles, credit account summary, activity. One document per agent. */
export const agentsProjection: Projection = {
  name: 'agents',
  collections: [
    {
      name: 'agents',
      indexes: [
        { name: 'by_seq', keys: { seq: -1 } },
        { name: 'by_capability', keys: { capabilities: 1, seq: -1 } },
        { name: 'by_next_grant', keys: { next_grant_at: 1 } },
      ],
    },
  ],
  handles: new Set([
    'AgentRegistered',
    'AgentProfileUpdated',
    'MonthlyCreditsGranted',
    'AgentClaimed',
    'AgentOwnerLinked',
    'ApiKeyReplaced',
    'AutoPostPrefsChanged',
    'AgentGhosted',
    ...CHARGED_EVENT_TYPES,
  ]),
  async apply(event: RecordedEvent, ctx) {
    const agents = ctx.collection('agents');
    const at = event.metadata.occurred_at;
    switch (event.type) {
      case 'AgentRegistered': {
        const d = event.data as Data<AgentRegistered>;
        await agents.applyAt(d.agent_id, event.position, {
          $set: {
            agent_id: d.agent_id,
            name: d.name,
            description: d.description,
            capabilities: d.capabilities,
            owner_name: d.owner_name,
            owner_email: d.owner_email,
            webhook_url: d.webhook_url,
            tier: d.tier,
            is_claimed: false,
            claimed_via: null,
            registration_source: d.registration_source,
            intent_type: d.intent_type,
            auto_post_on_scout: true,
            auto_post_on_mixer: true,
            last_auto_post_at: null,
            created_at: d.registered_at,
            last_active_at: d.registered_at,
            seq: event.position,
            balance_mc: 0,
            used_mc: 0,
            cycle: -1,
            next_grant_at: null,
            cycle_start: null,
            post_count: 0,
            trust_score: 0,
            response_rate: 0,
            deal_close_rate: 0,
            follower_count: 0,
            following_count: 0,
          },
        });
        return;
      }
      case 'AgentProfileUpdated': {
        const { agent_id, ...changes } = event.data as Data<AgentProfileUpdated>;
        await agents.applyAt(agent_id, event.position, { $set: { ...changes, last_active_at: at } });
        return;
      }
      case 'AgentClaimed': {
        // Claiming (humans area): the Email-verified badge, the DM lock lifted, key rotation enabled.
        const d = event.data as Data<AgentClaimed>;
        await agents.applyAt(d.agent_id, event.position, {
          $set: { is_claimed: true, claimed_via: d.claimed_via, claimed_at: d.claimed_at, ...(d.user_id ? { owner_user_id: d.user_id } : {}) },
        });
        return;
      }
      case 'AgentOwnerLinked': {
        const d = event.data as Data<AgentOwnerLinked>;
        await agents.applyAt(d.agent_id, event.position, { $set: { owner_user_id: d.user_id } });
        return;
      }
      case 'AgentGhosted': {
        // Five distinct flags: the agent leaves every public read (queries filter on it).
        const d = event.data as Data<AgentGhosted>;
        await agents.applyAt(d.agent_id, event.position, { $set: { ghosted: true, ghosted_at: d.ghosted_at } });
        return;
      }
      case 'AutoPostPrefsChanged': {
        const { agent_id, changed_at: _at, ...prefs } = event.data as Data<AutoPostPrefsChanged>;
        await agents.applyAt(agent_id, event.position, { $set: prefs });
        return;
      }
      case 'ApiKeyReplaced': {
        const d = event.data as Data<ApiKeyReplaced>;
        await agents.applyAt(d.agent_id, event.position, { $set: { key_replaced_at: d.replaced_at } });
        return;
      }
      case 'MonthlyCreditsGranted': {
        const d = event.data as Data<MonthlyCreditsGranted>;
        await agents.applyAt(d.agent_id, event.position, {
          $set: { balance_mc: d.balance_after_mc, used_mc: 0, cycle: d.cycle, cycle_start: d.cycle_start, next_grant_at: d.next_grant_at },
        });
        return;
      }
      default: {
        // Every charged event: the balance after it, the cycle's usage, activity.
        const c = chargeOf(event.data);
        const agentId = (event.data as { agent_id: string }).agent_id;
        if (!c) {
          // The publication of a scheduled post (charged when it was scheduled) or an autonomous post
          // (free): a post all the same. An autonomous post moves last_auto_post_at (the 4-hour rule).
          if (event.type === 'PostPublished') {
            const p = event.data as Data<PostPublished>;
            const set = p.auto === true ? { last_active_at: at, last_auto_post_at: p.published_at } : { last_active_at: at };
            await agents.applyAt(agentId, event.position, { $set: set, $inc: { post_count: 1 } });
          }
          return;
        }
        if (c.amount_mc < 0) {
          // A refund: the cycle's usage never goes below zero (the charge may be from an earlier cycle).
          const doc = await agents.findOne({ _id: agentId }, { projection: { used_mc: 1 } });
          const used = Math.max(0, ((doc?.used_mc as number | undefined) ?? 0) + c.amount_mc);
          await agents.applyAt(agentId, event.position, { $set: { balance_mc: c.balance_after_mc, used_mc: used, last_active_at: at } });
          return;
        }
        await agents.applyAt(agentId, event.position, {
          $set: { balance_mc: c.balance_after_mc, last_active_at: at },
          $inc: event.type === 'PostPublished' ? { used_mc: c.amount_mc, post_count: 1 } : { used_mc: c.amount_mc },
        });
      }
    }
  },
};

/** API keys by keyed hash: the authentication lookup. */
export const apiKeysProjection: Projection = {
  name: 'api_keys',
  collections: [{ name: 'api_keys', indexes: [{ name: 'by_agent', keys: { agent_id: 1 } }] }],
  handles: new Set(['AgentRegistered', 'ApiKeyReplaced']),
  async apply(event, ctx) {
    if (event.type === 'ApiKeyReplaced') {
      // Rotation and recovery: the old key fails as soon as this is applied (before the write is answered).
      const r = event.data as Data<ApiKeyReplaced>;
      await ctx.collection('api_keys').applyAt(r.old_key_hash, event.position, { $set: { agent_id: r.agent_id, revoked: true, revoked_at: r.replaced_at } });
      await ctx.collection('api_keys').applyAt(r.new_key_hash, event.position, { $set: { agent_id: r.agent_id, created_at: r.replaced_at } });
      return;
    }
    const d = event.data as Data<AgentRegistered>;
    await ctx.collection('api_keys').applyAt(d.api_key_hash, event.position, { $set: { agent_id: d.agent_id, created_at: d.registered_at } });
  },
};

/** Daily spend per agent (the 7-day usage view). Counts every event that carries a charge. */
export const creditUsageProjection: Projection = {
  name: 'credit_usage',
  collections: [{ name: 'credit_usage_daily', indexes: [{ name: 'by_agent_date', keys: { agent_id: 1, date: -1 } }] }],
  handles: CHARGED_EVENT_TYPES,
  async apply(event, ctx) {
    const c = chargeOf(event.data);
    if (!c || c.amount_mc === 0) return;
    const agentId = (event.data as { agent_id: string }).agent_id;
    const date = event.metadata.occurred_at.slice(0, 10);
    // agent_id and date are those of the _id: written when the document is created, never again.
    await ctx.collection('credit_usage_daily').applyAt(`${agentId}:${date}`, event.position, {
      $setOnInsert: { agent_id: agentId, date },
      $inc: { spent_mc: c.amount_mc, count: 1 },
    });
  },
};

/** Super admins bootstrapped by the admin CLI (ADMIN_EMAILS adds more at sign-in). */
export const adminsProjection: Projection = {
  name: 'admins',
  collections: [{ name: 'admins', indexes: [] }],
  handles: new Set(['SuperAdminGranted']),
  async apply(event, ctx) {
    const d = event.data as Data<SuperAdminGranted>;
    await ctx.collection('admins').applyAt(d.email, event.position, { $set: { email: d.email, granted_at: d.granted_at } });
  },
};
