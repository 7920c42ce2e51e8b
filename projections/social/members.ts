import { searchTerms } from '../../events/feed.ts';
import type { Doc } from '../store/port.ts';
import { defineProjection } from '../types.ts';

const PROFILE_DEFAULTS = { headline: null, bio: null, industry: null, region: null, gives: [], asks: [], discoverable: true };

/**
 * The directory fields of a member document, derived from its profile: set only while the member
 * is discoverable, so every directory index holds discoverable members alone (a member who hides
 * leaves every index range; nothing needs filtering after the index).
 */
function directory(doc: Doc): Record<string, unknown> {
  const listed = doc.discoverable === true;
  const gives = (doc.gives as string[] | undefined) ?? [];
  const asks = (doc.asks as string[] | undefined) ?? [];
  const agents = (doc.agent_ids as string[] | undefined) ?? [];
  const text = [doc.full_name, doc.headline, doc.bio, doc.industry, ...gives, ...asks].filter((x) => typeof x === 'string').join(' ');
  const builder = listed && agents.length > 0;
  return {
    dir_listed: listed ? true : null,
    dir_industry: listed ? ((doc.industry as string | null) ?? '') : null,
    dir_terms: listed ? searchTerms(text, 64) : [],
    dir_gives: listed ? gives : [],
    dir_asks: listed ? asks : [],
    builder_listed: builder ? true : null,
    builder_industry: builder ? ((doc.industry as string | null) ?? '') : null,
    builder_caps: builder ? ((doc.agent_capabilities as string[] | undefined) ?? []) : [],
  };
}

/**
 * Members (human users) as the directory shows them: one document per user, never an e-mail.
 * `seq` is the position of the last profile change (lists are newest first). Agents linked to the
 * user (claims) make a builder; `member_agents` keeps each agent's capabilities for that.
 */
export const membersProjection = defineProjection({
  name: 'members',
  collections: [
    {
      name: 'members',
      indexes: [
        { name: 'dir_all', keys: { dir_listed: 1, seq: -1 } },
        { name: 'dir_industry', keys: { dir_industry: 1, seq: -1 } },
        { name: 'dir_terms', keys: { dir_terms: 1, seq: -1 } },
        { name: 'dir_terms_industry', keys: { dir_terms: 1, dir_industry: 1, seq: -1 } },
        { name: 'dir_gives', keys: { dir_gives: 1, seq: -1 } },
        { name: 'dir_asks', keys: { dir_asks: 1, seq: -1 } },
        { name: 'builders', keys: { builder_listed: 1, seq: -1 } },
        { name: 'builders_by_cap', keys: { builder_caps: 1, seq: -1 } },
        { name: 'builders_by_industry', keys: { builder_industry: 1, seq: -1 } },
      ],
    },
    { name: 'member_agents', indexes: [] },
  ],
  handles: ['UserRegistered', 'MemberProfileUpdated', 'AgentRegistered', 'AgentOwnerLinked', 'AgentClaimed'],
  async apply(event, ctx) {
    const members = ctx.collection('members');
    const agents = ctx.collection('member_agents');
    const write = async (userId: string, set: Record<string, unknown>) => {
      const doc = await members.findOne({ _id: userId });
      if (doc && (doc._pos as number) >= event.position) return;
      const next = { ...(doc ?? { _id: userId }), ...set } as Doc;
      await members.applyAt(userId, event.position, { $set: { ...set, ...directory(next) } });
    };
    switch (event.type) {
      case 'UserRegistered': {
        const d = event.data;
        await write(d.user_id, {
          user_id: d.user_id,
          full_name: d.full_name,
          ...PROFILE_DEFAULTS,
          agent_ids: [],
          agent_capabilities: [],
          created_at: d.registered_at,
          updated_at: d.registered_at,
          seq: event.position,
        });
        return;
      }
      case 'MemberProfileUpdated': {
        const { user_id, ...profile } = event.data;
        await write(user_id, { user_id, ...profile, seq: event.position });
        return;
      }
      case 'AgentRegistered':
        await agents.applyAt(event.data.agent_id, event.position, { $set: { capabilities: event.data.capabilities } });
        return;
      case 'AgentOwnerLinked':
      case 'AgentClaimed': {
        const d = event.data;
        if (!d.user_id) return;
        const doc = await members.findOne({ _id: d.user_id });
        if (!doc) return;
        const agent = await agents.findOne({ _id: d.agent_id });
        const ids = new Set((doc.agent_ids as string[] | undefined) ?? []);
        if (ids.has(d.agent_id)) return;
        ids.add(d.agent_id);
        const caps = new Set([...((doc.agent_capabilities as string[] | undefined) ?? []), ...((agent?.capabilities as string[] | undefined) ?? [])]);
        await write(d.user_id, { agent_ids: [...ids], agent_capabilities: [...caps] });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
