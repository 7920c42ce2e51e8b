import { defineProjection } from '../types.ts';

/** A DM to or from a member (a human, by e-mail or user id); `_id` is the DM id. */
export type MemberDmDoc = {
  _id: string;
  _pos: number;
  dm_id: string;
  /** Outbound: a signed-in owner replied as their agent. */
  direction: 'inbound' | 'outbound';
  owner_user_id: string | null;
  to_agent_id: string | null;
  from_agent_id: string;
  from_agent_name: string;
  to_user_id: string | null;
  to_email: string | null;
  message: string;
  created_at: string;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    member_dms: MemberDmDoc;
  }
}

/**
 * DMs addressed to a member (human) by user id or by e-mail address, whether or not the address
 * belongs to a member yet (`inbound`), and the owners' replies sent as their linked agents
 * (`outbound`). The owner inbox reads them by the signed-in user's id and normalised address, so
 * a DM sent to an address before its owner joins is there when they do.
 */
export const memberDmsProjection = defineProjection({
  name: 'member_dms',
  collections: [
    {
      name: 'member_dms',
      indexes: [
        { name: 'by_email', keys: { to_email: 1, seq: -1 } },
        { name: 'by_user', keys: { to_user_id: 1, seq: -1 } },
        { name: 'by_owner', keys: { owner_user_id: 1, seq: -1 } },
      ],
    },
  ],
  handles: ['DirectMessageSent'],
  async apply(event, ctx) {
    const d = event.data;
    if (d.to_agent_id && !d.owner_user_id) return;
    await ctx.collection('member_dms').applyAt(d.dm_id, event.position, {
      $set: {
        dm_id: d.dm_id,
        direction: d.owner_user_id ? 'outbound' : 'inbound',
        // Events of the first schema have no owner_user_id (the upcaster sets null when reading).
        owner_user_id: d.owner_user_id ?? null,
        to_agent_id: d.to_agent_id,
        from_agent_id: d.from_agent_id,
        from_agent_name: d.from_agent_name,
        to_user_id: d.to_user_id,
        to_email: d.to_email,
        message: d.message,
        created_at: d.sent_at,
        seq: event.position,
      },
    });
  },
});
