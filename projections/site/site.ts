import { defineProjection, type DataOf } from '../types.ts';

/** A partner lead; `_id` is the lead id. `all` (always true) keys the list of every lead. */
export type PartnerLeadDoc = DataOf<'PartnerLeadSubmitted'> & {
  _id: string;
  _pos: number;
  all: true;
  seq: number;
};

/** Views of a path on one UTC day; `_id` is `<day>|<path>`. */
export type PageViewDayDoc = {
  _id: string;
  _pos: number;
  all: true;
  day: string;
  path: string;
  views: number;
};

/** A session seen on one UTC day; `_id` is `<day>|<session>`. */
export type PageViewSessionDoc = {
  _id: string;
  _pos: number;
  day: string;
};

/** A site setting; `_id` is its name (`pitch_deck`). */
export type SiteSettingDoc = {
  _id: string;
  _pos: number;
  url: string;
  updated_at: string;
};

/** An NDA acceptance; `_id` is the acceptance id. */
export type NdaAcceptanceDoc = DataOf<'NdaAccepted'> & {
  _id: string;
  _pos: number;
  all: true;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    partner_leads: PartnerLeadDoc;
    page_view_days: PageViewDayDoc;
    page_view_sessions: PageViewSessionDoc;
    site_settings: SiteSettingDoc;
    nda_acceptances: NdaAcceptanceDoc;
  }
}

/**
 * The public site's records: partner leads (newest first), page views per day and path, unique
 * sessions per day, the pitch deck setting and NDA acceptances.
 */
export const siteProjection = defineProjection({
  name: 'site',
  collections: [
    { name: 'partner_leads', indexes: [{ name: 'all', keys: { all: 1, seq: -1 } }] },
    { name: 'page_view_days', indexes: [{ name: 'by_day', keys: { all: 1, day: -1 } }] },
    { name: 'page_view_sessions', indexes: [{ name: 'by_day', keys: { day: 1 } }] },
    { name: 'site_settings', indexes: [] },
    { name: 'nda_acceptances', indexes: [{ name: 'all', keys: { all: 1, seq: -1 } }] },
  ],
  handles: ['PartnerLeadSubmitted', 'PageViewed', 'PitchDeckUpdated', 'NdaAccepted'],
  async apply(event, ctx) {
    switch (event.type) {
      case 'PartnerLeadSubmitted':
        await ctx
          .collection('partner_leads')
          .applyAt(event.data.lead_id, event.position, { $set: Object.assign({}, event.data, { all: true as const, seq: event.position }) });
        return;
      case 'PageViewed': {
        const d = event.data;
        const day = d.viewed_at.slice(0, 10);
        await ctx.collection('page_view_days').applyAt(`${day}|${d.path}`, event.position, { $set: { all: true, day, path: d.path }, $inc: { views: 1 } });
        if (d.session_id) await ctx.collection('page_view_sessions').applyAt(`${day}|${d.session_id}`, event.position, { $set: { day } });
        return;
      }
      case 'PitchDeckUpdated':
        await ctx.collection('site_settings').applyAt('pitch_deck', event.position, { $set: { url: event.data.url, updated_at: event.data.updated_at } });
        return;
      case 'NdaAccepted':
        await ctx
          .collection('nda_acceptances')
          .applyAt(event.data.acceptance_id, event.position, { $set: Object.assign({}, event.data, { all: true as const, seq: event.position }) });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
