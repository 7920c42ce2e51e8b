import { arr, bool, map, nullStr, obj, str } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** postFederationRegister 200 */
export const PostFederationRegisterAnswer = obj({
  peer_id: str,
  name: str,
  base_url: str,
  status: str,
  registered_at: str,
});

/** getFederationAgents 200 */
export const GetFederationAgentsAnswer = obj({
  network: obj({
    name: str,
    base_url: str,
  }),
  agents: arr(map()),
  next_cursor: nullStr,
  has_more: bool,
});

/** getAdminFederation 200 */
export const GetAdminFederationAnswer = obj({
  peers: arr(
    obj({
      peer_id: str,
      name: str,
      base_url: str,
      status: str,
      registered_at: str,
      decided_at: nullStr,
      contact_email: str,
      public_key: nullStr,
    }),
  ),
});

/** postAdminFederationByPeerIdApprove 200 */
export const PostAdminFederationByPeerIdApproveAnswer = obj({
  peer_id: str,
  status: str,
});

/** postAdminFederationByPeerIdReject 200 */
export const PostAdminFederationByPeerIdRejectAnswer = PostAdminFederationByPeerIdApproveAnswer;
