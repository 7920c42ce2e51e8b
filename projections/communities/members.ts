import { defineProjection, type DataOf } from '../types.ts';

/** A member of a community; `_id` is `<community>:<user>`. Removed: the `live_` keys null. */
export type CommunityMemberDoc = {
  _id: string;
  _pos: number;
  community_id: string;
  user_id: string;
  live_community: string | null;
  live_user: string | null;
  full_name: string;
  name_lower: string;
  code_id: string | null;
  /** The circles of the community the member is in. */
  circles: string[];
  joined_at: string;
  removed_at?: string;
  seq: number;
};

/** A member of a circle; `_id` is `<circle>:<user>`. Left or removed: the `live_` keys null. */
export type CircleMemberDoc = {
  _id: string;
  _pos: number;
  circle_id: string;
  community_id: string;
  user_id: string;
  live_circle: string | null;
  live_user: string | null;
  full_name: string;
  name_lower: string;
  via: DataOf<'CircleMemberJoined'>['via'];
  joined_at: string;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    community_members: CommunityMemberDoc;
    circle_members: CircleMemberDoc;
  }
}

/**
 * Who is in which community and circle. `community_members` (`<community>:<user>`) lists the
 * member's circles of that community (the admin members list filters by circle on that multikey
 * index); `circle_members` (`<circle>:<user>`) serves circle member lists and mention look-ups.
 * A removed member keeps the document with its `live_*` keys null, so it leaves every index range.
 */
export const communityMembersProjection = defineProjection({
  name: 'community-members',
  collections: [
    {
      name: 'community_members',
      indexes: [
        { name: 'by_community', keys: { live_community: 1, seq: -1 } },
        { name: 'by_user', keys: { live_user: 1, seq: -1 } },
        { name: 'by_circle', keys: { circles: 1, seq: -1 } },
      ],
    },
    {
      name: 'circle_members',
      indexes: [
        { name: 'by_circle', keys: { live_circle: 1, seq: 1 } },
        { name: 'by_user', keys: { live_user: 1, seq: -1 } },
        { name: 'by_circle_name', keys: { live_circle: 1, name_lower: 1 } },
      ],
    },
  ],
  handles: ['CommunityMemberJoined', 'CommunityMemberRemoved', 'CircleMemberJoined', 'CircleDeleted'],
  async apply(event, ctx) {
    const members = ctx.collection('community_members');
    const circleMembers = ctx.collection('circle_members');
    switch (event.type) {
      case 'CommunityMemberJoined': {
        const d = event.data;
        await members.applyAt(`${d.community_id}:${d.user_id}`, event.position, {
          $set: {
            community_id: d.community_id,
            user_id: d.user_id,
            live_community: d.community_id,
            live_user: d.user_id,
            full_name: d.full_name,
            name_lower: d.full_name.toLowerCase(),
            code_id: d.code_id,
            circles: [],
            joined_at: d.joined_at,
            seq: event.position,
          },
        });
        return;
      }
      case 'CommunityMemberRemoved': {
        const d = event.data;
        await members.applyAt(`${d.community_id}:${d.user_id}`, event.position, {
          $set: { live_community: null, live_user: null, circles: [], removed_at: d.removed_at },
        });
        const theirs = await circleMembers.find({ live_user: d.user_id }, { hint: 'by_user' });
        for (const m of theirs)
          if (m.community_id === d.community_id) await circleMembers.applyAt(m._id, event.position, { $set: { live_circle: null, live_user: null } });
        return;
      }
      case 'CircleMemberJoined': {
        const d = event.data;
        await circleMembers.applyAt(`${d.circle_id}:${d.user_id}`, event.position, {
          $set: {
            circle_id: d.circle_id,
            community_id: d.community_id,
            user_id: d.user_id,
            live_circle: d.circle_id,
            live_user: d.user_id,
            full_name: d.full_name,
            name_lower: d.full_name.toLowerCase(),
            via: d.via,
            joined_at: d.joined_at,
            seq: event.position,
          },
        });
        await members.applyAt(`${d.community_id}:${d.user_id}`, event.position, { $addToSet: { circles: d.circle_id } });
        return;
      }
      case 'CircleDeleted': {
        const d = event.data;
        const inside = await circleMembers.find({ live_circle: d.circle_id }, { hint: 'by_circle' });
        for (const m of inside) {
          await circleMembers.applyAt(m._id, event.position, { $set: { live_circle: null, live_user: null } });
          await members.applyAt(`${d.community_id}:${m.user_id}`, event.position, { $pull: { circles: d.circle_id } });
        }
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
