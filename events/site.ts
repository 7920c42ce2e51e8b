import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { Data, IsoDate, Nullable } from './types.ts';

const Email = Type.String({ minLength: 3, maxLength: 254 });
const Opt = (max: number) => Nullable(Type.String({ maxLength: max }));

/** On `partner-lead-<lead_id>`: a partner lead from the public site. */
export const PartnerLeadSubmittedData = Data({
  lead_id: Type.String({ pattern: '^lead_' }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Email,
  company: Opt(200),
  role: Opt(200),
  message: Opt(5000),
  submitted_at: IsoDate,
});
export type PartnerLeadSubmitted = Event<'PartnerLeadSubmitted', Static<typeof PartnerLeadSubmittedData>>;
/** On `pageviews-<YYYY-MM-DD>`: one page view (no personal data beyond the client's own session id). */
export const PageViewedData = Data({
  path: Type.String({ minLength: 1, maxLength: 500 }),
  referrer: Opt(1000),
  session_id: Opt(100),
  viewed_at: IsoDate,
});
export type PageViewed = Event<'PageViewed', Static<typeof PageViewedData>>;
/** On `pitch-deck`: the deck URL set by a super admin. */
export const PitchDeckUpdatedData = Data({ url: Type.String({ pattern: '^https://', maxLength: 2000 }), updated_by: Type.String(), updated_at: IsoDate });
export type PitchDeckUpdated = Event<'PitchDeckUpdated', Static<typeof PitchDeckUpdatedData>>;
/** On `nda-<acceptance_id>`: someone accepted the pitch-deck NDA. */
export const NdaAcceptedData = Data({
  acceptance_id: Type.String({ pattern: '^nda_' }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Email,
  company: Opt(200),
  accepted_at: IsoDate,
});
export type NdaAccepted = Event<'NdaAccepted', Static<typeof NdaAcceptedData>>;

export type SiteEvent = PartnerLeadSubmitted | PageViewed | PitchDeckUpdated | NdaAccepted;
export const siteEventSchemas = {
  PartnerLeadSubmitted: PartnerLeadSubmittedData,
  PageViewed: PageViewedData,
  PitchDeckUpdated: PitchDeckUpdatedData,
  NdaAccepted: NdaAcceptedData,
};
export const partnerLeadStream = (id: string) => `partner-lead-${id}`;
export const pageViewStream = (day: string) => `pageviews-${day}`;
export const PITCH_DECK_STREAM = 'pitch-deck';
export const ndaStream = (id: string) => `nda-${id}`;
