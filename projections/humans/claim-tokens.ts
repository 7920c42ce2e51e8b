import { defineProjection } from '../types.ts';

/** An unused claim token; `_id` is its hash. */
export type ClaimTokenDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    claim_tokens: ClaimTokenDoc;
  }
}

/** Claim tokens by keyed hash: the full claim finds its agent from the token alone. */
export const claimTokensProjection = defineProjection({
  name: 'claim_tokens',
  collections: [{ name: 'claim_tokens', indexes: [] }],
  handles: ['AgentRegistered'],
  async apply(event, ctx) {
    const d = event.data;
    await ctx.collection('claim_tokens').applyAt(d.claim_token_hash, event.position, { $set: { agent_id: d.agent_id } });
  },
});
