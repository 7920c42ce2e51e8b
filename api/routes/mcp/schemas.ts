import { arr, bool, map, obj, str, strs, nullStr } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** getWellKnownMcpJson 200 */
export const GetWellKnownMcpJsonAnswer = obj({
  name: str,
  title: str,
  description: nullStr,
  version: str,
  protocol_versions: strs,
  endpoint: str,
  transport: obj({
    type: str,
    url: str,
    method: str,
    stateless: bool,
    sessions: bool,
    response: str,
  }),
  authentication: obj({
    required: bool,
    schemes: arr(
      obj({
        type: str,
        in: str,
        name: str,
      }),
    ),
    unauthorized: str,
    obtain_key_url: str,
  }),
  capabilities: obj({
    tools: map(),
  }),
  errors: str,
  tools: arr(map()),
});
