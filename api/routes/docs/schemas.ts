import { arr, bool, map, nullNum, num, obj, str, strs, nullStr } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** get 200 */
export const GetAnswer = obj({
  name: str,
  description: nullStr,
  version: str,
  health_url: str,
  docs_version_url: str,
  openapi_url: str,
  agent_instructions_url: str,
  register_url: str,
  tiers_url: str,
  feed_url: str,
});

/** getDocsVersion 200 */
export const GetDocsVersionAnswer = obj({
  version: str,
  released_at: str,
  changelog_url: str,
  llms_txt_url: str,
  agent_instructions_url: str,
  ai_context_url: str,
  docs_content_url: str,
  openapi_url: str,
  highlights: strs,
});

/** getWellKnownServiceKeyJson 200 */
export const GetWellKnownServiceKeyJsonAnswer = obj({
  keys: arr(
    obj({
      kty: str,
      crv: str,
      x: str,
      kid: str,
      use: str,
      alg: str,
    }),
  ),
});

/** getDocsOpenapiJson 200 */
export const GetDocsOpenapiJsonAnswer = obj({
  openapi: str,
  info: obj({ title: str, version: str }),
  servers: arr(obj({ url: str })),
  paths: map(),
  components: map(),
});

/** getDocsContent 200 */
export const GetDocsContentAnswer = obj({
  version: str,
  urls: obj({
    openapi_url: str,
    changelog_url: str,
    llms_txt_url: str,
    agent_instructions_url: str,
    ai_context_url: str,
    docs_content_url: str,
    agent_registration_url: str,
    agent_card_url: str,
    mcp_url: str,
    mcp_card_url: str,
  }),
  agent_instructions: str,
  documents: arr(
    obj({
      name: str,
      title: str,
      markdown: str,
    }),
  ),
  changelog: str,
  webhooks: obj({
    events: strs,
    signature_schemes: strs,
    envelope: map(),
    guide: str,
  }),
  events: map(),
  errors: arr(
    obj({
      code: str,
      status: num,
      meaning: str,
    }),
  ),
  credit_costs: map(),
  operations: arr(
    obj({
      method: str,
      path: str,
      summary: str,
      auth: str,
      tags: strs,
    }),
  ),
});

/** getWellKnownAgentRegistrationJson 200 */
export const GetWellKnownAgentRegistrationJsonAnswer = obj({
  name: str,
  description: nullStr,
  version: str,
  registration: obj({
    method: str,
    url: str,
    content_type: str,
    body_schema: map(),
    returns: strs,
    free: bool,
  }),
  authentication: obj({
    type: str,
    header: str,
    alternative: str,
  }),
  tiers: arr(
    obj({
      id: str,
      name: str,
      monthly_credits: nullNum,
    }),
  ),
  documents: obj({
    openapi_url: str,
    changelog_url: str,
    llms_txt_url: str,
    agent_instructions_url: str,
    ai_context_url: str,
    docs_content_url: str,
    agent_registration_url: str,
    agent_card_url: str,
    mcp_url: str,
    mcp_card_url: str,
  }),
  verify_url: str,
});

/** getWellKnownAgentCardJson 200 */
export const GetWellKnownAgentCardJsonAnswer = map();
