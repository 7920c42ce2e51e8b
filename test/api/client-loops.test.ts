import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { allOperations } from '../../api/app.ts';
import { listOf } from '../../api/operations.ts';
import type { DomainEvent } from '../../events/catalogue.ts';
import { schemaVersionOf } from '../../events/upcasters.ts';
import {
  a2aMessageSent,
  agentBlocked,
  agentFollowed,
  agentOwnerLinked,
  agentRegistered,
  bondRequested,
  commentAdded,
  communityCreated,
  communityMemberJoined,
  digestProduced,
  directMessageSent,
  listingCreated,
  matchingRunCompleted,
  partnerLeadSubmitted,
  meshThreadCreated,
  meshThreadMessagePosted,
  postFlagged,
  postPublished,
  postScheduled,
  roomHidden,
  userRegistered,
  webhookDeliveryAttempted,
} from '../fixtures/events.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp, signUpWithAgent } from '../helpers/users.ts';

/**
 * The loops every client writes (docs/PAGING.md), over every list route of the route table (a GET
 * whose answer declares `has_more`): a new list route fails this test until it has a case here.
 *
 * - cursor loop (Stripe style): the first page without a cursor, then `next_cursor` in the route's
 *   cursor parameter while `has_more`;
 * - page loop (GitHub style): the first page, then the `Link: <...>; rel="next"` URL while there is
 *   one (the next page number, or the cursor where the list has one).
 *
 * New items are written between the pages of every walk. Every item that was there when the walk
 * began is seen exactly once, and none twice; where the first page names a `poll_cursor`, polling
 * from it afterwards sees exactly the items the walk did not: every item exactly once in all.
 */

type Body = Record<string, unknown>;
type Item = Record<string, unknown>;

interface Case {
  /** The list's URL (path and fixed query), without paging parameters. */
  path: string;
  apiKey?: string;
  /** Other credentials (a signed-in person's bearer token). */
  headers?: Record<string, string>;
  /** The list's items and each item's key (the case's own items carry `tag` in their key). */
  items: (b: Body) => Item[];
  key: (i: Item) => string;
  /** Writes the list's n-th item (its key includes the case's tag). */
  write: (n: number) => Promise<void>;
}

const LIMIT = 3;
const BEFORE_WALK = 7;

/** List routes whose case is not written yet, with why: the test names them, so they are not forgotten. */
const PENDING: Record<string, string> = {};

describe('api: client loops over every list route (cursor loop and page loop, writes arriving during the walk)', function () {
  this.timeout(600_000);
  let svc: TestService;
  let owner: { agent_id: string; api_key: string };
  let tick = Date.parse('2026-03-12T00:00:00.000Z');
  const at = () => new Date(tick++ * 1).toISOString();

  let outbox: string;
  let admin: Record<string, string>;
  let member: Record<string, string>;
  let memberId: string;
  before(async () => {
    const adminEmail = `loops.admin.${process.pid}@example.com`;
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: adminEmail }));
    owner = await svc.register();
    admin = { authorization: `Bearer ${(await signUp(svc, outbox, adminEmail)).access_token}` };
    // A person with a linked agent (the bearer routes of the marketplace need one).
    const person = (await signUpWithAgent(svc, outbox)).user;
    member = { authorization: `Bearer ${person.access_token}` };
    memberId = person.user_id;
  });
  after(() => stopWithOutbox(svc, outbox));

  /** Appends `events` (each on its own stream, or all on `stream`) and waits for the read models. */
  async function append(events: DomainEvent[], stream?: string): Promise<void> {
    const { log, runner } = svc.running.services;
    let position = 0;
    for (const e of events) {
      const occurred = at();
      const r = await log.append(
        stream ?? `test-${randomUUID()}`,
        [
          {
            id: randomUUID(),
            type: e.type,
            data: e.data,
            metadata: {
              actor: null,
              request_id: null,
              correlation_id: null,
              causation_id: null,
              occurred_at: occurred,
              schema_version: schemaVersionOf(e.type),
            },
          },
        ],
        stream ? 'any' : 'no_stream',
      );
      position = r.position;
    }
    await runner.waitFor(position, 60_000);
  }

  /** A public agent with this id (lists of agents show public agents only). */
  const agent = (id: string, capabilities = ['lead-gen']) =>
    agentRegistered({
      agent_id: id,
      name: `Agent ${id}`,
      capabilities,
      owner_email: `${id}@example.com`,
      api_key_hash: randomUUID().replace(/-/g, '').padEnd(64, '0'),
      registered_at: at(),
    });
  const agentCase = (tag: string, path: string, key = 'agent_id', capabilities = ['lead-gen']): Case => ({
    path,
    items: (b) => b.items as Item[],
    key: (i) => String(i[key]),
    write: (n) => append([agent(`agt_${tag}${n}`, capabilities)]),
  });

  const posts =
    (tag: string, room = 'lead-gen') =>
    async (n: number) =>
      append([postPublished({ post_id: `pst_${tag}_${n}`, agent_id: owner.agent_id, agent_name: 'Owner', room_slug: room, published_at: at() })]);
  const postCase = (tag: string, path: string): Case => ({
    path,
    items: (b) => b.items as Item[],
    key: (i) => String(i.post_id),
    write: posts(tag),
  });

  const CASES: Record<string, (tag: string) => Promise<Case>> = {
    getFeedPosts: async (tag) => postCase(tag, '/api/feed/posts?room_slug=lead-gen'),
    getAgentPosts: async (tag) => postCase(tag, '/api/agent/posts?room_slug=lead-gen'),
    getAgentFeed: async (tag) => postCase(tag, '/api/agent/feed'),
    getFeedTopicsBySlugPosts: async (tag) => postCase(tag, '/api/feed/topics/lead-gen/posts'),
    getProtocolRoomsBySlugPosts: async (tag) => postCase(tag, '/api/protocol/rooms/lead-gen/posts'),
    getProtocolAgentsByIdInbox: async (tag) => {
      const me = await svc.register();
      return {
        path: `/api/protocol/agents/${me.agent_id}/inbox`,
        apiKey: me.api_key,
        items: (b) => b.events as Item[],
        key: (i) => String(i.id),
        write: (n) =>
          append([
            directMessageSent({ dm_id: `dm_${tag}_${n}`, agent_id: owner.agent_id, from_agent_id: owner.agent_id, to_agent_id: me.agent_id, sent_at: at() }),
          ]),
      };
    },
    getProtocolAgentsByIdMatches: async (tag) => {
      const me = await svc.register();
      return {
        path: `/api/protocol/agents/${me.agent_id}/matches`,
        apiKey: me.api_key,
        items: (b) => b.events as Item[],
        key: (i) => String(i.id),
        write: (n) =>
          append([
            matchingRunCompleted({
              run_id: `run_${tag}_${n}`,
              agent_id: me.agent_id,
              matches: [{ agent_id: `agt_${tag}${n}`, name: 'M', they_give: ['a'], they_ask: ['b'], score: 1 }],
              completed_at: at(),
            }),
          ]),
      };
    },
    getProtocolAgentsByAgentIdCreditsHistory: async (tag) => {
      const me = await svc.register();
      return {
        path: `/api/protocol/agents/${me.agent_id}/credits/history`,
        apiKey: me.api_key,
        items: (b) => b.transactions as Item[],
        key: (i) => `${tag}:${String(i.transaction_id)}`,
        write: (n) =>
          append(
            [directMessageSent({ dm_id: `dm_${tag}_${n}`, agent_id: me.agent_id, from_agent_id: me.agent_id, to_agent_id: owner.agent_id, sent_at: at() })],
            `agent-${me.agent_id}`,
          ),
      };
    },
    getAgentWebhooksDeliveries: async (tag) => {
      const me = await svc.register();
      return {
        path: '/api/agent/webhooks/deliveries',
        apiKey: me.api_key,
        items: (b) => b.attempts as Item[],
        key: (i) => String(i.delivery_id),
        write: (n) => append([webhookDeliveryAttempted({ delivery_id: `dlv_${tag}_${n}`, agent_id: me.agent_id, attempted_at: at() })]),
      };
    },
    getAgentA2aInbox: async (tag) => {
      const me = await svc.register();
      return {
        path: '/api/agent/a2a/inbox',
        apiKey: me.api_key,
        items: (b) => b.items as Item[],
        key: (i) => String(i.message_id),
        write: (n) =>
          append([
            a2aMessageSent({ message_id: `msg_${tag}_${n}`, agent_id: owner.agent_id, from_agent_id: owner.agent_id, to_agent_id: me.agent_id, sent_at: at() }),
          ]),
      };
    },
    getAgentGroupDmByThreadId: async (tag) => {
      const me = await svc.register();
      const thread = `thr_${tag}`;
      const participants = [me.agent_id, owner.agent_id];
      await append([
        meshThreadCreated({
          thread_id: thread,
          agent_id: owner.agent_id,
          agent_name: 'Owner',
          participant_agent_ids: participants,
          first_message_id: `msg_${tag}_first`,
          created_at: at(),
        }),
      ]);
      return {
        path: `/api/agent/group-dm/${thread}`,
        apiKey: me.api_key,
        items: (b) => b.messages as Item[],
        key: (i) => String(i.message_id),
        write: (n) =>
          append([
            meshThreadMessagePosted({
              thread_id: thread,
              message_id: `msg_${tag}_${n}`,
              agent_id: owner.agent_id,
              agent_name: 'Owner',
              participant_agent_ids: participants,
              posted_at: at(),
            }),
          ]),
      };
    },
    getAgentNotifications: async (tag) => {
      const me = await svc.register();
      const thread = `thr_${tag}`;
      const participants = [me.agent_id, owner.agent_id];
      return {
        path: '/api/agent/notifications',
        apiKey: me.api_key,
        items: (b) => b.notifications as Item[],
        key: (i) => `${tag}:${String((i.data as Item).message_id)}`,
        write: (n) =>
          append([
            meshThreadMessagePosted({
              thread_id: thread,
              message_id: `msg_${tag}_${n}`,
              agent_id: owner.agent_id,
              agent_name: 'Owner',
              participant_agent_ids: participants,
              posted_at: at(),
            }),
          ]),
      };
    },
    getAgentBlocks: async (tag) => {
      const me = await svc.register();
      return {
        path: '/api/agent/blocks',
        apiKey: me.api_key,
        items: (b) => b.items as Item[],
        key: (i) => String(i.agent_id),
        write: (n) => append([agentBlocked({ agent_id: me.agent_id, blocked_agent_id: `agt_${tag}${n}`, blocked_at: at() })]),
      };
    },
    getAgentGroupDm: async (tag) => {
      const me = await svc.register();
      return {
        path: '/api/agent/group-dm',
        apiKey: me.api_key,
        items: (b) => b.items as Item[],
        key: (i) => String(i.thread_id),
        write: (n) =>
          append([
            meshThreadCreated({
              thread_id: `thr_${tag}_${n}`,
              agent_id: owner.agent_id,
              agent_name: 'Owner',
              participant_agent_ids: [me.agent_id, owner.agent_id],
              first_message_id: `msg_${tag}_first${n}`,
              created_at: at(),
            }),
          ]),
      };
    },
    getFeedPostsByPostIdComments: async (tag) => {
      const post = `pst_${tag}`;
      await posts(tag)(0);
      const path = `/api/feed/posts/pst_${tag}_0/comments`;
      return {
        path,
        items: (b) => b.items as Item[],
        key: (i) => String(i.comment_id),
        write: (n) =>
          append([
            commentAdded({ comment_id: `cmt_${tag}_${n}`, post_id: `${post}_0`, agent_id: owner.agent_id, post_author_id: owner.agent_id, created_at: at() }),
          ]),
      };
    },
    getAgentPostsByPostIdComments: async (tag) => {
      const c = await CASES.getFeedPostsByPostIdComments(tag);
      return { ...c, path: c.path.replace('/api/feed/posts/', '/api/agent/posts/') };
    },
    getProtocolAgents: async (tag) => agentCase(tag, `/api/protocol/agents?capability=cap-${tag}`, 'agent_id', [`cap-${tag}`]),
    getFeedTopicsBySlug: async (tag) => agentCase(tag, '/api/feed/topics/lead-gen'),
    getProtocolRoomsBySlug: async (tag) => agentCase(tag, '/api/protocol/rooms/lead-gen'),
    getFederationAgents: async (tag) => ({ ...agentCase(tag, '/api/federation/agents', 'id'), items: (b) => b.agents as Item[] }),
    getNetworkLeaderboard: async (tag) => agentCase(tag, '/api/network/leaderboard'),
    getMeshSignals: async (tag) => postCase(tag, '/api/mesh/signals?capability=lead-gen'),
    getAgentBonds: async (tag) => {
      const me = await svc.register();
      return {
        path: '/api/agent/bonds?status=outgoing',
        apiKey: me.api_key,
        items: (b) => b.items as Item[],
        key: (i) => String(i.agent_id),
        write: async (n) => {
          const id = `agt_${tag}${n}`;
          await append([agent(id)]);
          await append([bondRequested({ agent_id: me.agent_id, agent_name: 'Me', other_agent_id: id, requested_at: at() })]);
        },
      };
    },
    getAgentMarketplace: async (tag) => {
      const me = await svc.register();
      return {
        path: `/api/agent/marketplace?category=engineering`,
        apiKey: me.api_key,
        items: (b) => b.items as Item[],
        key: (i) => String(i.intent_id),
        write: (n) => append([listingCreated({ intent_id: `int_${tag}_${n}`, agent_id: owner.agent_id, agent_name: 'Owner', created_at: at() })]),
      };
    },
    getMarketplace: async (tag) => {
      const c = await CASES.getAgentMarketplace(tag);
      return { ...c, apiKey: undefined, headers: member, path: '/api/marketplace?category=engineering' };
    },
    getAdminAgentsByAgentIdCreditsHistory: async (tag) => {
      const c = await CASES.getProtocolAgentsByAgentIdCreditsHistory(tag);
      return {
        ...c,
        apiKey: undefined,
        headers: admin,
        path: c.path.replace('/api/protocol/agents/', '/api/admin/agents/'),
        items: (b) => b.entries as Item[],
      };
    },
    getMembers: async (tag) => ({
      path: '/api/members',
      apiKey: owner.api_key,
      items: (b) => b.members as Item[],
      key: (i) => String(i.user_id),
      write: (n) => append([userRegistered({ user_id: `usr_${tag}${n}`, email: `${tag}.${n}@example.com`, full_name: `Member ${n}`, registered_at: at() })]),
    }),
    getAdminCommunityAdminMembers: async (tag) => {
      const community = `cmy_${tag}`;
      await append([communityCreated({ community_id: community, name: `Community ${tag}`, created_at: at() })]);
      return {
        path: `/api/admin/community-admin/members?community_id=${community}`,
        headers: admin,
        items: (b) => b.members as Item[],
        key: (i) => String(i.user_id),
        write: (n) => append([communityMemberJoined({ community_id: community, user_id: `usr_${tag}${n}`, full_name: `Member ${n}`, joined_at: at() })]),
      };
    },
    getProtocolBuilders: async (tag) => ({
      path: `/api/protocol/builders?capability=cap-${tag}`,
      items: (b) => b.builders as Item[],
      key: (i) => String(i.user_id),
      write: async (n) => {
        const user = `usr_${tag}${n}`;
        const id = `agt_${tag}${n}`;
        await append([userRegistered({ user_id: user, email: `${tag}.b${n}@example.com`, full_name: `Builder ${n}`, registered_at: at() })]);
        await append([agent(id, [`cap-${tag}`])]);
        await append([agentOwnerLinked({ agent_id: id, user_id: user, linked_at: at() })]);
      },
    }),
    getSvcDigests: async (tag) => ({
      path: '/api/svc/digests',
      headers: member,
      items: (b) => b.items as Item[],
      key: (i) => String(i.digest_id),
      write: (n) => append([digestProduced({ digest_id: `dig_${tag}_${n}`, user_id: memberId, agent_id: owner.agent_id, produced_at: at() })]),
    }),
    getAdminPartnerLeads: async (tag) => ({
      path: '/api/admin/partner-leads',
      headers: admin,
      items: (b) => b.leads as Item[],
      key: (i) => String(i.lead_id),
      write: (n) => append([partnerLeadSubmitted({ lead_id: `lead_${tag}_${n}`, email: `lead${n}@example.com`, submitted_at: at() })]),
    }),
    getFeedPostsScheduled: async (tag) => {
      const me = await svc.register();
      return {
        path: '/api/feed/posts/scheduled',
        apiKey: me.api_key,
        items: (b) => b.items as Item[],
        key: (i) => String(i.post_id),
        write: (n) =>
          append([
            postScheduled({
              post_id: `pst_${tag}_${String(n).padStart(4, '0')}`,
              agent_id: me.agent_id,
              agent_name: 'Me',
              publish_at: new Date(Date.parse('2027-01-01T00:00:00.000Z') + n * 60_000).toISOString(),
              scheduled_at: at(),
            }),
          ]),
      };
    },
    getAdminModerationQueue: async (tag) => {
      const flagger = await svc.register();
      return {
        path: '/api/admin/moderation/queue?kind=post',
        headers: admin,
        items: (b) => b.items as Item[],
        key: (i) => String(i.item_id),
        // A flag by any agent queues the post (docs/MODERATION.md).
        write: async (n) => {
          const post = `pst_${tag}_${n}`;
          await posts(tag)(n);
          await append([postFlagged({ post_id: post, agent_id: flagger.agent_id, flagged_at: at() })]);
        },
      };
    },
    getAdminAuditLog: async (tag) => ({
      path: '/api/admin/audit-log?action=RoomHidden',
      headers: admin,
      items: (b) => b.entries as Item[],
      key: (i) => String(i.target),
      write: (n) => append([roomHidden({ room_slug: `room-${tag}-${n}`, by: `admin:usr_${tag}`, hidden_at: at() })]),
    }),
    getAgentIntentRadar: async (tag) => {
      // Signals of a room of the case's own (the lead-gen room grows with every walk of the cases above); the listings part is the same on every page.
      const me = await svc.register();
      const room = `cap-${tag}`;
      return { ...postCase(tag, `/api/agent/intent-radar?capability=${room}`), write: posts(tag, room), apiKey: me.api_key };
    },
    getProtocolAgentsByIdFollowers: async (tag) => {
      const me = await svc.register();
      return {
        path: `/api/protocol/agents/${me.agent_id}/followers`,
        items: (b) => b.items as Item[],
        key: (i) => String(i.agent_id),
        write: async (n) => {
          const id = `agt_${tag}${n}`.slice(0, 30);
          await append([agent(id)]);
          await append([agentFollowed({ agent_id: id, followed_agent_id: me.agent_id, followed_at: at() })]);
        },
      };
    },
    getProtocolAgentsByIdFollowing: async (tag) => {
      const me = await svc.register();
      return {
        path: `/api/protocol/agents/${me.agent_id}/following`,
        items: (b) => b.items as Item[],
        key: (i) => String(i.agent_id),
        write: async (n) => {
          const id = `agt_${tag}${n}`.slice(0, 30);
          await append([agent(id)]);
          await append([agentFollowed({ agent_id: me.agent_id, followed_agent_id: id, followed_at: at() })]);
        },
      };
    },
  };

  const lists = allOperations().filter((op) => listOf(op));
  let caseNo = 0;

  it('finds the list routes in the route table, and every one has a case here or is named as pending', () => {
    expect(lists.length).to.be.at.least(20);
    const missing = lists.filter((op) => !CASES[op.id as string] && !PENDING[op.id as string]).map((op) => `${op.id} ${op.method} ${op.path}`);
    expect(missing, 'list routes without a client-loop case').to.deep.equal([]);
  });

  const fetch = async (c: Case, url: string): Promise<TestResponse> => {
    const r = await svc.req('GET', url, { apiKey: c.apiKey, headers: c.headers });
    expect(r.status, `${url}: ${r.text}`).to.equal(200);
    return r;
  };
  const sep = (path: string) => (path.includes('?') ? '&' : '?');
  const nextLink = (r: TestResponse): string | null => {
    const link = String(r.headers.link ?? '');
    const m = /<([^>]+)>;\s*rel="next"/.exec(link);
    return m ? m[1] : null;
  };

  for (const op of allOperations().filter((o) => listOf(o))) {
    const id = op.id as string;
    const cursorParam = listOf(op)?.cursorParam ?? null;
    const hasPage = 'page' in (((op.query as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}) as Record<string, unknown>);
    if (PENDING[id]) {
      it(`${id}: pending (${PENDING[id]})`);
      continue;
    }
    describe(`${id} ${op.method} ${op.path}`, () => {
      let c: Case;
      let n = 0;
      const tag = `cl${++caseNo}x${Math.floor(Math.random() * 1e6)}`;
      const ours = (keys: string[]) => keys.filter((k) => k.includes(tag));
      const write = async () => {
        await c.write(n++);
      };
      const keysOf = (r: TestResponse) => ours(c.items(r.body as Body).map(c.key));

      before(async () => {
        c = await (CASES[id] as (tag: string) => Promise<Case>)(tag);
        for (let i = 0; i < BEFORE_WALK; i++) await write();
      });

      /** Walks the list from its first page with `next`, writing an item after every page; the keys seen, and the first page. */
      async function walk(next: (r: TestResponse) => string | null): Promise<{ seen: string[]; first: TestResponse; before: string[] }> {
        const before = await everything();
        const seen: string[] = [];
        let r = await fetch(c, `${c.path}${sep(c.path)}limit=${LIMIT}`);
        const first = r;
        for (let guard = 0; guard < 200; guard++) {
          seen.push(...keysOf(r));
          const url = next(r);
          if (!url) {
            expect(r.body.has_more, 'the last page').to.not.equal(true);
            return { seen, first, before };
          }
          await write();
          r = await fetch(c, url);
        }
        throw new Error('the walk did not end');
      }

      /** Every item of the list now (our own ones): the cursor loop without writes, or the page loop. */
      async function everything(): Promise<string[]> {
        const all: string[] = [];
        let r = await fetch(c, `${c.path}${sep(c.path)}limit=50`);
        for (let guard = 0; guard < 100; guard++) {
          all.push(...keysOf(r));
          const url = nextLink(r);
          if (!url) return all;
          r = await fetch(c, url);
        }
        throw new Error('the list did not end');
      }

      function expectExactlyOnce(walked: { seen: string[]; before: string[] }, polled: string[]) {
        const counts = new Map<string, number>();
        for (const k of [...walked.seen, ...polled]) counts.set(k, (counts.get(k) ?? 0) + 1);
        const twice = [...counts].filter(([, v]) => v > 1).map(([k]) => k);
        expect(twice, 'items seen twice').to.deep.equal([]);
        const missed = walked.before.filter((k) => !counts.has(k));
        expect(missed, 'items there before the walk and not seen').to.deep.equal([]);
      }

      async function poll(first: TestResponse): Promise<string[] | null> {
        const from = first.body.poll_cursor;
        if (typeof from !== 'string') return null;
        const seen: string[] = [];
        let r = await fetch(c, `${c.path}${sep(c.path)}after=${encodeURIComponent(from)}&limit=${LIMIT}`);
        for (let guard = 0; guard < 200; guard++) {
          seen.push(...keysOf(r));
          if (!r.body.has_more) return seen;
          r = await fetch(c, `${c.path}${sep(c.path)}after=${encodeURIComponent(r.body.next_cursor as string)}&limit=${LIMIT}`);
        }
        throw new Error('the poll did not end');
      }

      if (cursorParam) {
        it(`cursor loop: next_cursor in ?${cursorParam}= while has_more sees every item once; poll_cursor, where given, sees the rest`, async () => {
          const walked = await walk((r) =>
            r.body.has_more ? `${c.path}${sep(c.path)}${cursorParam}=${encodeURIComponent(String(r.body.next_cursor))}&limit=${LIMIT}` : null,
          );
          expect(walked.before.length).to.be.at.least(BEFORE_WALK);
          expect(walked.seen.length).to.be.at.least(walked.before.length);
          const polled = (await poll(walked.first)) ?? [];
          expectExactlyOnce(walked, polled);
          if (typeof walked.first.body.poll_cursor === 'string') expect([...walked.seen, ...polled].sort()).to.deep.equal((await everything()).sort());
        });
      }

      it('page loop: the Link rel="next" URL while there is one sees every item once', async () => {
        const walked = await walk(nextLink);
        expect(walked.before.length).to.be.at.least(BEFORE_WALK);
        expect(walked.seen.length).to.be.at.least(walked.before.length);
        const polled = (await poll(walked.first)) ?? [];
        expectExactlyOnce(walked, polled);
      });

      if (hasPage) {
        it('page numbers: has_more is true on a page with more after it, false on the last and on a page past the end', async () => {
          const total = (await everything()).length;
          const page0 = await fetch(c, `${c.path}${sep(c.path)}limit=${LIMIT}&page=0`);
          expect(page0.body.has_more).to.equal(true);
          expect(nextLink(page0)).to.be.a('string');
          const past = await fetch(c, `${c.path}${sep(c.path)}limit=${LIMIT}&page=${Math.ceil((total + 10_000) / LIMIT)}`);
          expect(c.items(past.body as Body)).to.deep.equal([]);
          expect(past.body.has_more).to.equal(false);
          expect(nextLink(past)).to.equal(null);
        });
      }
    });
  }
});
