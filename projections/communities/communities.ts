import { defineProjection, type DataOf } from '../types.ts';

/** A community; `_id` is the community id. `all` (always true) keys the list of every community. */
export type CommunityDoc = {
  _id: string;
  _pos: number;
  all: true;
  community_id: string;
  name: string;
  description: string;
  open: boolean;
  admins: string[];
  created_by: string;
  created_at: string;
};

/** A circle of a community; `_id` is the circle id. Deleted: `live_community` and `public_listed` null. */
export type CircleDoc = {
  _id: string;
  _pos: number;
  circle_id: string;
  community_id: string;
  live_community: string | null;
  name: string;
  description: string;
  visibility: DataOf<'CircleCreated'>['visibility'];
  /** True while public in an open community (the public list's key), else null. */
  public_listed: true | null;
  created_by: string;
  created_at: string;
  deleted: boolean;
  deleted_at?: string;
  seq: number;
};

/** An invite code of a community; `_id` is the code id. */
export type InviteCodeDoc = {
  _id: string;
  _pos: number;
  code_id: string;
  community_id: string;
  code: string;
  label: string | null;
  max_uses: number | null;
  expires_at: string | null;
  status: DataOf<'InviteCodeStatusChanged'>['status'];
  status_changed_at?: string;
  uses: number;
  /** Members who joined with it and have not left. */
  active_members: number;
  created_by: string;
  created_at: string;
  seq: number;
};

/** Joins of a community on one UTC day; `_id` is `<community>:<day>`. */
export type InviteDayDoc = {
  _id: string;
  _pos: number;
  community_id: string;
  day: string;
  joins: number;
};

/** The code a member joined with; `_id` is `<community>:<user>`. */
export type MemberCodeDoc = {
  _id: string;
  _pos: number;
  code_id: string | null;
};

declare module '../store/port.ts' {
  interface ReadModels {
    communities: CommunityDoc;
    circles: CircleDoc;
    invite_codes: InviteCodeDoc;
    invite_days: InviteDayDoc;
    member_codes: MemberCodeDoc;
  }
}

/**
 * Communities (with their admins), their circles and invite codes, and joins per day per
 * community (invite analytics). `admins` follows the decider's state: named by
 * `CommunityAdminNamed`, out with `CommunityMemberRemoved`. A deleted circle keeps its document with `live_community` null,
 * so it leaves every list index.
 */
export const communitiesProjection = defineProjection({
  name: 'communities',
  collections: [
    {
      name: 'communities',
      indexes: [
        { name: 'by_admin', keys: { admins: 1 } },
        { name: 'all', keys: { all: 1, created_at: 1 } },
      ],
    },
    {
      name: 'circles',
      indexes: [
        { name: 'by_community', keys: { live_community: 1, seq: 1 } },
        { name: 'public_circles', keys: { public_listed: 1, seq: -1 } },
      ],
    },
    {
      name: 'invite_codes',
      indexes: [
        { name: 'by_code', keys: { code: 1 }, unique: true },
        { name: 'by_community', keys: { community_id: 1, seq: -1 } },
      ],
    },
    { name: 'member_codes', indexes: [] },
    { name: 'invite_days', indexes: [{ name: 'by_community_day', keys: { community_id: 1, day: 1 } }] },
  ],
  handles: [
    'CommunityCreated',
    'CommunityAdminNamed',
    'CircleCreated',
    'CircleVisibilityChanged',
    'CircleDeleted',
    'InviteCodeCreated',
    'InviteCodeStatusChanged',
    'CommunityMemberJoined',
    'CommunityMemberRemoved',
  ],
  async apply(event, ctx) {
    const communities = ctx.collection('communities');
    const circles = ctx.collection('circles');
    const codes = ctx.collection('invite_codes');
    const days = ctx.collection('invite_days');
    const memberCodes = ctx.collection('member_codes');
    const open = async (communityId: string) => (await communities.findOne({ _id: communityId }))?.open === true;
    switch (event.type) {
      case 'CommunityCreated': {
        const d = event.data;
        await communities.applyAt(d.community_id, event.position, {
          $set: {
            all: true,
            community_id: d.community_id,
            name: d.name,
            description: d.description,
            open: d.open,
            admins: [],
            created_by: d.created_by,
            created_at: d.created_at,
          },
        });
        return;
      }
      case 'CommunityAdminNamed':
        await communities.applyAt(event.data.community_id, event.position, { $addToSet: { admins: event.data.user_id } });
        return;
      case 'CircleCreated': {
        const d = event.data;
        const listed = d.visibility === 'public' && (await open(d.community_id));
        await circles.applyAt(d.circle_id, event.position, {
          $set: {
            circle_id: d.circle_id,
            community_id: d.community_id,
            live_community: d.community_id,
            name: d.name,
            description: d.description,
            visibility: d.visibility,
            public_listed: listed ? true : null,
            created_by: d.created_by,
            created_at: d.created_at,
            deleted: false,
            seq: event.position,
          },
        });
        return;
      }
      case 'CircleVisibilityChanged': {
        const d = event.data;
        const listed = d.visibility === 'public' && (await open(d.community_id));
        await circles.applyAt(d.circle_id, event.position, { $set: { visibility: d.visibility, public_listed: listed ? true : null } });
        return;
      }
      case 'CircleDeleted':
        await circles.applyAt(event.data.circle_id, event.position, {
          $set: { deleted: true, live_community: null, public_listed: null, deleted_at: event.data.deleted_at },
        });
        return;
      case 'InviteCodeCreated': {
        const d = event.data;
        await codes.applyAt(d.code_id, event.position, {
          $set: {
            code_id: d.code_id,
            community_id: d.community_id,
            code: d.code,
            label: d.label,
            max_uses: d.max_uses,
            expires_at: d.expires_at,
            status: 'active',
            uses: 0,
            active_members: 0,
            created_by: d.created_by,
            created_at: d.created_at,
            seq: event.position,
          },
        });
        return;
      }
      case 'InviteCodeStatusChanged':
        await codes.applyAt(event.data.code_id, event.position, { $set: { status: event.data.status, status_changed_at: event.data.changed_at } });
        return;
      case 'CommunityMemberJoined': {
        const d = event.data;
        if (d.code_id) await codes.applyAt(d.code_id, event.position, { $inc: { uses: 1, active_members: 1 } });
        const day = d.joined_at.slice(0, 10);
        await days.applyAt(`${d.community_id}:${day}`, event.position, { $set: { community_id: d.community_id, day }, $inc: { joins: 1 } });
        await memberCodes.applyAt(`${d.community_id}:${d.user_id}`, event.position, { $set: { code_id: d.code_id } });
        return;
      }
      case 'CommunityMemberRemoved': {
        const d = event.data;
        // A member removed is no admin any more (the decider's state drops them from `admins` too).
        await communities.applyAt(d.community_id, event.position, { $pull: { admins: d.user_id } });
        const key = `${d.community_id}:${d.user_id}`;
        const joined = await memberCodes.findOne({ _id: key });
        if (typeof joined?.code_id === 'string') await codes.applyAt(joined.code_id, event.position, { $inc: { active_members: -1 } });
        await memberCodes.applyAt(key, event.position, { $set: { code_id: null } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
