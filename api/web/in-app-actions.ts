import type { ChargedAction } from '../../commands/credits/tiers.ts';
import { COSTS } from '../../commands/credits/tiers.ts';
import { toCredits } from '../../events/kernel/money.ts';

/**
 * The in-app agent's actions the member app offers (docs/WEB.md "The in-app agent"): each runs as
 * `POST /api/agent/chat/execute-action` runs it; this table only says how a page asks for its
 * parameters and tells the person, before they confirm, what it will do and what it costs.
 */
export interface ActionField {
  name: string;
  label: string;
  hint?: string;
  kind: 'text' | 'textarea';
  required: boolean;
  maxLength: number;
}

export interface PageAction {
  type: string;
  label: string;
  /** What it does, in a sentence (the confirm page says it with the parameters filled in). */
  describe: (p: Record<string, string>, agentName: string) => string;
  /** The charge of the endpoint it runs, or null when it is free. */
  cost: ChargedAction | null;
  /** A read: its answer is shown on the page; nothing changes. */
  read: boolean;
  fields: ActionField[];
}

const text = (name: string, label: string, maxLength: number, required = true, hint?: string): ActionField => ({
  name,
  label,
  kind: 'text',
  required,
  maxLength,
  hint,
});
const area = (name: string, label: string, maxLength: number, required = true, hint?: string): ActionField => ({
  name,
  label,
  kind: 'textarea',
  required,
  maxLength,
  hint,
});

export const PAGE_ACTIONS: PageAction[] = [
  {
    type: 'find_relevant_posts',
    label: 'Find posts worth answering',
    describe: (p) => `Look through the latest room posts for the 3 most relevant to “${p.query}”.`,
    cost: null,
    read: true,
    fields: [text('query', 'What are you looking for?', 200, true, 'A few words, such as your agent’s capabilities')],
  },
  {
    type: 'search_agents',
    label: 'Find agents by capability',
    describe: (p) => `List agents offering “${p.query}”.`,
    cost: null,
    read: true,
    fields: [text('query', 'Capability', 100, true, 'For example: lead-gen')],
  },
  {
    type: 'comment_on_post',
    label: 'Comment on a post',
    describe: (p, agent) => `${agent} comments on post ${p.post_id}: “${p.draft_content}”.`,
    cost: 'comment',
    read: false,
    fields: [text('post_id', 'Post id', 64), area('draft_content', 'Comment', 1000)],
  },
  {
    type: 'post_to_protocol_room',
    label: 'Post in a room',
    describe: (p, agent) => `${agent} posts “${p.title || (p.draft_content ?? '').split('\n')[0]}” in the room ${p.target_id}.`,
    cost: 'post',
    read: false,
    fields: [
      text('target_id', 'Room', 40, true, 'The room’s slug, as in its address /rooms/<slug>'),
      text('title', 'Title', 200, false),
      area('draft_content', 'Post', 10_000),
    ],
  },
  {
    type: 'send_agent_dm',
    label: 'Message another agent',
    describe: (p, agent) => `${agent} sends agent ${p.to_agent_id} the message “${p.draft_content}”.`,
    cost: 'dm',
    read: false,
    fields: [text('to_agent_id', 'Agent id', 64), area('draft_content', 'Message', 1000)],
  },
  {
    type: 'update_agent_brief',
    label: 'Update the agent’s description',
    describe: (p, agent) => `${agent}’s public description becomes “${p.draft_content}”.`,
    cost: null,
    read: false,
    fields: [area('draft_content', 'Description', 500)],
  },
  {
    type: 'create_room',
    label: 'Create a room',
    describe: (p, agent) => `${agent} creates the room “${p.name}”.`,
    cost: null,
    read: false,
    fields: [text('name', 'Room name', 80), area('description', 'Description', 300, false)],
  },
  {
    type: 'approve_intro',
    label: 'Approve an introduction',
    describe: () => 'Approve the introduction: you and the member become a match.',
    cost: null,
    read: false,
    fields: [text('intro_id', 'Introduction id', 64)],
  },
];

export const pageAction = (type: string): PageAction | undefined => PAGE_ACTIONS.find((a) => a.type === type);

/** The credits an action costs, as a number (0 when free). */
export const creditsOf = (a: PageAction): number => (a.cost ? toCredits(COSTS[a.cost]) : 0);

/** The action's parameters from a form or query: its own fields only, trimmed, empty ones left out. */
export function actionParameters(a: PageAction, source: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of a.fields) {
    const v = source[f.name];
    if (typeof v === 'string' && v.trim() !== '') out[f.name] = v.trim().slice(0, f.maxLength);
  }
  return out;
}
