import { searchTerms } from '../../events/feed.ts';
import { defineProjection, type DataOf } from '../types.ts';

type Profile = Omit<DataOf<'MemberProfileUpdated'>, 'user_id' | 'updated_at'>;

/** A member's own fields: the profile, and the agents linked to the user (claims). */
type MemberFields = Partial<Omit<Profile, 'full_name'>> & {
  _id: string;
  user_id: string;
  full_name: string;
  agent_ids?: string[];
  agent_capabilities?: string[];
  created_at?: string;
  updated_at?: string;
  /** The position of the last profile change (lists are newest first). */
  seq: number;
};

/** The directory fields, derived from the profile (see `directory`). */
type DirectoryFields = {
  dir_listed: true | null;
  dir_industry: string | null;
  dir_terms: string[];
  dir_gives: string[];
  dir_asks: string[];
  builder_listed: true | null;
  builder_industry: string | null;
  builder_caps: string[];
};

/** A member (human user) as the directory shows them; `_id` is the user id. Never an e-mail. */
export type MemberDoc = MemberFields &
  DirectoryFields & {
    _pos: number;
  };

/** An agent's capabilities, for the builder directory; `_id` is the agent id. */
export type MemberAgentDoc = {
  _id: string;
  _pos: number;
  capabilities: string[];
};

declare module '../store/port.ts' {
  interface ReadModels {
    members: MemberDoc;
    member_agents: MemberAgentDoc;
  }
}

const PROFILE_DEFAULTS = { headline: null, bio: null, industry: null, region: null, gives: [], asks: [], discoverable: true };

/**
 * The directory fields of a member document, derived from its profile: set only while the member
 * is discoverable, so every directory index holds discoverable members alone (a member who hides
 * leaves every index range; nothing needs filtering after the index).
 */
function directory(doc: Partial<MemberFields>): DirectoryFields {
  const listed = doc.discoverable === true;
  const gives = doc.gives ?? [];
  const asks = doc.asks ?? [];
  const agents = doc.agent_ids ?? [];
  const text = [doc.full_name, doc.headline, doc.bio, doc.industry, ...gives, ...asks].filter((x) => typeof x === 'string').join(' ');
  const builder = listed && agents.length > 0;
  return {
    dir_listed: listed ? true : null,
    dir_industry: listed ? (doc.industry ?? '') : null,
    dir_terms: listed ? searchTerms(text, 64) : [],
    dir_gives: listed ? gives : [],
    dir_asks: listed ? asks : [],
    builder_listed: builder ? true : null,
    builder_industry: builder ? (doc.industry ?? '') : null,
    builder_caps: builder ? (doc.agent_capabilities ?? []) : [],
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
    const write = async (userId: string, set: Partial<MemberFields>) => {
      const doc = await members.findOne({ _id: userId });
      if (doc && doc._pos >= event.position) return;
      const next = { ...doc, ...set };
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
        const ids = new Set(doc.agent_ids ?? []);
        if (ids.has(d.agent_id)) return;
        ids.add(d.agent_id);
        const caps = new Set([...(doc.agent_capabilities ?? []), ...(agent?.capabilities ?? [])]);
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
