import { defineProjection } from '../types.ts';
import { ownCopy } from '../../events/kernel/text.ts';

/** A mesh thread; `_id` is the thread id. */
export type MeshThreadDoc = {
  _id: string;
  _pos: number;
  thread_id: string;
  name: string | null;
  created_by: string;
  participant_agent_ids: string[];
  created_at: string;
  last_message_at: string;
  last_message_preview: string;
  message_count: number;
};

/** A participant's place in a thread; `_id` is `<thread>:<agent>`. */
export type MeshThreadMemberDoc = {
  _id: string;
  _pos: number;
  thread_id: string;
  agent_id: string;
  last_message_at: string;
};

/** A message of a thread; `_id` is the message id. */
export type MeshMessageDoc = {
  _id: string;
  _pos: number;
  message_id: string;
  thread_id: string;
  agent_id: string;
  agent_name: string;
  message: string;
  created_at: string;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    mesh_threads: MeshThreadDoc;
    mesh_thread_members: MeshThreadMemberDoc;
    mesh_messages: MeshMessageDoc;
  }
}

/**
 * Group DMs: threads (`mesh_threads`), one membership document per participant ordered by the
 * thread's last message (`mesh_thread_members`, the "own threads" list), and messages
 * (`mesh_messages`, newest first per thread).
 */
export const meshThreadsProjection = defineProjection({
  name: 'mesh_threads',
  collections: [
    { name: 'mesh_threads', indexes: [] },
    { name: 'mesh_thread_members', indexes: [{ name: 'by_agent_last', keys: { agent_id: 1, last_message_at: -1 } }] },
    { name: 'mesh_messages', indexes: [{ name: 'by_thread', keys: { thread_id: 1, seq: 1, _id: 1 } }] },
  ],
  handles: ['MeshThreadCreated', 'MeshThreadMessagePosted'],
  async apply(event, ctx) {
    const threads = ctx.collection('mesh_threads');
    const members = ctx.collection('mesh_thread_members');
    const messages = ctx.collection('mesh_messages');
    switch (event.type) {
      case 'MeshThreadCreated': {
        const d = event.data;
        await threads.applyAt(d.thread_id, event.position, {
          $set: {
            thread_id: d.thread_id,
            name: d.name,
            created_by: d.agent_id,
            participant_agent_ids: d.participant_agent_ids,
            created_at: d.created_at,
            last_message_at: d.created_at,
            last_message_preview: ownCopy(d.first_message.slice(0, 140)),
            message_count: 1,
          },
        });
        for (const p of d.participant_agent_ids) {
          await members.applyAt(`${d.thread_id}:${p}`, event.position, { $set: { thread_id: d.thread_id, agent_id: p, last_message_at: d.created_at } });
        }
        await messages.applyAt(d.first_message_id, event.position, {
          $set: {
            message_id: d.first_message_id,
            thread_id: d.thread_id,
            agent_id: d.agent_id,
            agent_name: d.agent_name,
            message: d.first_message,
            created_at: d.created_at,
            seq: event.position,
          },
        });
        return;
      }
      case 'MeshThreadMessagePosted': {
        const d = event.data;
        await threads.applyAt(d.thread_id, event.position, {
          $set: { last_message_at: d.posted_at, last_message_preview: ownCopy(d.message.slice(0, 140)) },
          $inc: { message_count: 1 },
        });
        for (const p of d.participant_agent_ids) {
          await members.applyAt(`${d.thread_id}:${p}`, event.position, { $set: { last_message_at: d.posted_at } });
        }
        await messages.applyAt(d.message_id, event.position, {
          $set: {
            message_id: d.message_id,
            thread_id: d.thread_id,
            agent_id: d.agent_id,
            agent_name: d.agent_name,
            message: d.message,
            created_at: d.posted_at,
            seq: event.position,
          },
        });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
