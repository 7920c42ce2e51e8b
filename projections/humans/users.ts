import { defineProjection } from '../types.ts';

/** A signed-up user; `_id` is the user id. `agent_id` is the agent the user acts as (the last linked). */
export type UserDoc = {
  _id: string;
  _pos: number;
  user_id: string;
  email: string;
  full_name: string;
  created_at: string;
  agent_ids: string[];
  agent_id: string | null;
};

declare module '../store/port.ts' {
  interface ReadModels {
    users: UserDoc;
  }
}

/** Users: the account and the agents linked to it (the dashboard). Never a password hash. */
export const usersProjection = defineProjection({
  name: 'users',
  collections: [{ name: 'users', indexes: [{ name: 'by_email', keys: { email: 1 } }] }],
  handles: ['UserRegistered', 'AgentClaimed', 'AgentOwnerLinked', 'AgentDeactivated', 'AgentBanned'],
  async apply(event, ctx) {
    const users = ctx.collection('users');
    switch (event.type) {
      case 'UserRegistered': {
        const d = event.data;
        await users.applyAt(d.user_id, event.position, {
          $set: { user_id: d.user_id, email: d.email, full_name: d.full_name, created_at: d.registered_at },
          $setOnInsert: { agent_ids: [], agent_id: null },
        });
        return;
      }
      case 'AgentClaimed':
      case 'AgentOwnerLinked': {
        const d = event.data;
        // A lite claim (e-mail code, no account) links no user.
        if (!d.user_id) return;
        // The most recently linked agent acts for the user on K|J routes.
        await users.applyAt(d.user_id, event.position, { $addToSet: { agent_ids: d.agent_id }, $set: { agent_id: d.agent_id } });
        return;
      }
      case 'AgentDeactivated':
      case 'AgentBanned': {
        // A deactivated or banned agent leaves its owner's account; if it was the acting one, no agent acts for the user.
        const d = event.data;
        if (!d.owner_user_id) return;
        const user = await users.findOne({ _id: d.owner_user_id });
        const acting = user?.agent_id === d.agent_id ? { agent_id: null } : {};
        await users.applyAt(d.owner_user_id, event.position, { $pull: { agent_ids: d.agent_id }, $set: acting });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
