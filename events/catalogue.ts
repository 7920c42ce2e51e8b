import { agentEventSchemas } from './agents.ts';
import { creditEventSchemas } from './credits.ts';
import { feedEventSchemas } from './feed.ts';
import type { JsonSchema } from './types.ts';

/** Every event type the service writes, with its JSON Schema (appends are validated against it in tests). */
export const eventSchemas: Record<string, JsonSchema> = {
  ...agentEventSchemas,
  ...creditEventSchemas,
  ...feedEventSchemas,
};
