import { PUBLIC_AGENTS } from '../agents/agents.ts';
import type { Cursor } from '../cursor.ts';
import { listPage } from '../cursor.ts';
import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

/** The public page of a room (api/routes/site/pages.ts). */
export const roomPageUrl = (baseUrl: string, slug: string) => `${baseUrl}/rooms/${encodeURIComponent(slug)}`;

/** A room as the API shows it; `url` is its public page. */
export function roomView(d: ReadModel<'rooms'>, baseUrl: string) {
  return {
    slug: d._id,
    url: roomPageUrl(baseUrl, d._id),
    label: d.label,
    description: d.description,
    icon: d.icon,
    curated: Boolean(d.curated),
    agent_count: d.agent_count ?? 0,
    post_count: d.post_count ?? 0,
    last_post_at: d.last_post_at ?? null,
    created_at: d.created_at ?? null,
    created_by: d.created_by ?? null,
  };
}

const shown = (d: ReadModel<'rooms'> | null) => Boolean(d && d.public && !d.hidden && !d.merged_into);

/**
 * A room every public read may show: curated, or a custom room that has turned public, not hidden.
 * A custom room merged into a curated one resolves to that room (its slug stays an alias).
 */
export async function resolveRoom(store: ReadStore, slug: string) {
  const rooms = store.collection('rooms');
  let room = await rooms.findOne({ _id: slug });
  if (room?.merged_into) room = await rooms.findOne({ _id: room.merged_into });
  return room && shown(room) ? room : null;
}

/** Every public room, largest first (index-served; the hidden and merged ones are few). */
export async function listRooms(store: ReadStore) {
  const rooms = await store.collection('rooms').find({ public: true }, { sort: { agent_count: -1 } });
  return rooms.filter(shown);
}

/** Agents active in a room: those declaring its capability (or a capability merged into it), most recent first. */
/** A room's agents, newest first, paged by the one cursor (queries/cursor.ts listPage). */
export async function roomAgents(store: ReadStore, room: ReadModel<'rooms'>, opts: { skip: number; limit: number; after?: Cursor }) {
  const slugs = [room._id, ...(room.merged_from ?? [])];
  const filter = { capabilities: slugs.length === 1 ? slugs[0] : { $in: slugs }, ...PUBLIC_AGENTS };
  const agents = store.collection('agents');
  const [page, total] = await Promise.all([listPage(agents, filter, opts), agents.count(filter)]);
  return { items: page.docs, total, next_cursor: page.next_cursor, has_more: page.has_more, poll_cursor: page.poll_cursor };
}

export async function getRoomDoc(store: ReadStore, slug: string) {
  return store.collection('rooms').findOne({ _id: slug });
}

/** A room's kind, the fact merging decides on (null: no such room). */
export async function roomKind(store: ReadStore, slug: string): Promise<{ curated: boolean } | null> {
  const doc = await getRoomDoc(store, slug);
  return doc ? { curated: doc.curated === true } : null;
}
