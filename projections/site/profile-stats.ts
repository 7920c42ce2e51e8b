import { defineProjection } from '../types.ts';

/** A member's counted facets (while discoverable); `_id` is the user id. */
export type ProfileFacetDoc = {
  _id: string;
  _pos: number;
  region: string | null;
  industry: string | null;
  /** Counted in profile_stats (the member is discoverable). */
  active: boolean;
};

/** Discoverable members per region or industry; `_id` is `<kind>|<key>`. */
export type ProfileStatDoc = {
  _id: string;
  kind: string;
  key: string;
  count: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    profile_facets: ProfileFacetDoc;
    profile_stats: ProfileStatDoc;
  }
}

/**
 * Active-profile counts by region and by industry for the landing page: a member counts while
 * their profile is discoverable, under its region and industry (when set). `profile_facets`
 * keeps each member's last contribution, so a change moves one count from the old key to the new.
 */
export const profileStatsProjection = defineProjection({
  name: 'profile-stats',
  collections: [
    { name: 'profile_facets', indexes: [] },
    { name: 'profile_stats', indexes: [{ name: 'by_kind', keys: { kind: 1, key: 1 } }] },
  ],
  handles: ['MemberProfileUpdated'],
  async apply(event, ctx) {
    const facets = ctx.collection('profile_facets');
    const stats = ctx.collection('profile_stats');
    switch (event.type) {
      case 'MemberProfileUpdated': {
        const d = event.data;
        const before = await facets.findOne({ _id: d.user_id });
        if (before && before._pos >= event.position) return;
        const keys = (region: unknown, industry: unknown) => [
          ...(typeof region === 'string' ? [['region', region]] : []),
          ...(typeof industry === 'string' ? [['industry', industry]] : []),
        ];
        const old = before?.active === true ? keys(before.region, before.industry) : [];
        const now = d.discoverable ? keys(d.region, d.industry) : [];
        for (const [kind, key] of old) await stats.updateOne({ _id: `${kind}|${key}` }, { $set: { kind, key }, $inc: { count: -1 } }, { upsert: true });
        for (const [kind, key] of now) await stats.updateOne({ _id: `${kind}|${key}` }, { $set: { kind, key }, $inc: { count: 1 } }, { upsert: true });
        await facets.applyAt(d.user_id, event.position, { $set: { region: d.region, industry: d.industry, active: d.discoverable } });
        return;
      }
      default: {
        const _exhaustive: never = event.type;
        return _exhaustive;
      }
    }
  },
});
