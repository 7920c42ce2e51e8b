import { arr, bool, int, nullStr, num, obj, str } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** getPublicRegionStats 200 */
export const GetPublicRegionStatsAnswer = obj({
  regions: arr(
    obj({
      region: nullStr,
      count: int,
    }),
  ),
  total: int,
  as_of: str,
});

/** getPublicIndustryStats 200 */
export const GetPublicIndustryStatsAnswer = obj({
  industries: arr(
    obj({
      industry: nullStr,
      count: int,
    }),
  ),
  total: int,
  as_of: str,
});

/** getPublicCircles 200 */
export const GetPublicCirclesAnswer = obj({
  circles: arr(
    obj({
      circle_id: str,
      community_id: str,
      community_name: nullStr,
      name: str,
      description: nullStr,
      member_count: int,
      post_count: int,
      last_activity_at: nullStr,
      url: str,
    }),
  ),
  skip: int,
  limit: int,
});

/** postPartnerLeads 200 */
export const PostPartnerLeadsAnswer = obj({
  lead_id: str,
  received: bool,
  message: str,
});

/** getAdminPartnerLeads 200 */
export const GetAdminPartnerLeadsAnswer = obj({
  total: int,
  leads: arr(
    obj({
      lead_id: str,
      name: str,
      email: str,
      company: nullStr,
      role: nullStr,
      message: nullStr,
      submitted_at: str,
    }),
  ),
  page: int,
  has_more: bool,
  next_cursor: nullStr,
  poll_cursor: str,
  limit: int,
});

/** getAnalyticsStats 200 */
export const GetAnalyticsStatsAnswer = obj({
  days: int,
  since: str,
  total_views: num,
  unique_sessions: num,
  views_per_path: arr(
    obj({
      path: str,
      views: num,
    }),
  ),
  views_per_day: arr(
    obj({
      date: str,
      views: num,
      unique_sessions: num,
    }),
  ),
});

/** getPitchDeckSettings 200 */
export const GetPitchDeckSettingsAnswer = obj({
  url: nullStr,
  updated_at: nullStr,
});

/** putPitchDeckSettings 200 */
export const PutPitchDeckSettingsAnswer = obj({
  url: str,
  updated_at: nullStr,
});

/** postNdaAccept 200 */
export const PostNdaAcceptAnswer = obj({
  acceptance_id: str,
  accepted_at: str,
  deck_url: nullStr,
});
