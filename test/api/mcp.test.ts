import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { allOperations } from '../../api/app.ts';
import { openApiPath, pathParams } from '../../api/operations.ts';
import type { Operation } from '../../api/operations.ts';
import { CALLER } from '../../api/routes/mcp/arguments.ts';
import { TOOLS } from '../../api/routes/mcp/tools.ts';
import type { ToolDef } from '../../api/routes/mcp/tools.ts';
import { COSTS } from '../../commands/credits/tiers.ts';
import { checkAnswer } from '../helpers/documented.ts';
import { request, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';
import { png as pngOf } from '../helpers/images.ts';

const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
type Revision = (typeof REVISIONS)[number];

/** An SDK client over real HTTP, at one protocol revision: 2025 by the initialize handshake, 2026 pinned. */
async function connect(svc: TestService, apiKey: string, revision: Revision): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' }, revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  const transport = new StreamableHTTPClientTransport(new URL('/api/mcp', svc.url), { requestInit: { headers: { 'X-API-Key': apiKey } } });
  await client.connect(transport);
  return client;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const structured = (r: CallToolResult): any => r.structuredContent;

/** The spec's tool list ("The tool server tools", interface-spec.md), word for word: 36 names. */
const SPEC_TOOLS = (
  'browse_members, get_matches, get_rooms, post_signal, schedule_post, get_anchor_posts, signal_boost, vote_on_poll, send_dm, ' +
  'create_mesh_thread, list_mesh_threads, send_mesh_message, get_signal_inbox, get_agent_pulse, get_credits, intent_radar, ' +
  'trust_stamp, send_bond_request, accept_bond_request, list_bonds, flag_post, flag_agent, list_builder_profiles, ' +
  'get_builder_profile, register_agent, find_miu_members, request_miu_intro, research_person, why_meet, find_intent_match, ' +
  'browse_coexist_feed, post_to_coexist_feed, react_to_post, comment_on_feed_post, get_trending_hashtags, upload_post_image'
).split(', ');

/** The REST operation a tool runs (its `rest`, as the route table documents it). */
function restOperation(def: ToolDef): Operation {
  const [method, path] = def.rest.split(' ');
  const op = allOperations().find((o) => o.method === method && openApiPath(o.path) === path);
  if (!op) throw new Error(`${def.name}: no operation ${def.rest}`);
  return op;
}

type Props = Record<string, Record<string, unknown>>;

/** The tools over a GET route: their input schemas are derived from the route's path and query parameters. */
const GET_TOOLS = TOOLS.filter((t) => t.rest.startsWith('GET '));

/** The route's path parameters a tool takes as arguments: argument name to parameter name (the caller's own id is no argument). */
function pathArguments(def: ToolDef): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, param] of restOperation(def).path.matchAll(/:(\w+)/g)) {
    const bound = def.spec.path?.[param];
    if (bound !== CALLER) out.set(bound ?? param, param);
  }
  return out;
}

/** The route's query parameters as declared (strings on the wire). */
const declaredQuery = (op: Operation): Props => ((op.query as { properties?: Props } | undefined)?.properties ?? {}) as Props;

/** What the REST operation charges per successful call, in millicredits (x-credits-cost). */
const restCost = (def: ToolDef): number => {
  const op = restOperation(def);
  return op.cost ? COSTS[op.cost] : 0;
};

/** A tool answer checked against its REST operation's documented answers (one of its success statuses, or `status`). */
function undocumentedToolAnswer(def: ToolDef, body: unknown, status?: number): string | null {
  const op = restOperation(def);
  const statuses = status
    ? [status]
    : Object.keys(op.responses ?? { 200: {} })
        .map(Number)
        .filter((n) => n < 300);
  const problems = statuses.map((st) => checkAnswer(op, `tool ${def.name}`, st, 'application/json', body));
  return problems.some((p) => p === null) ? null : problems.join('; ');
}

describe('api: MCP tool server (POST /api/mcp)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  for (const revision of REVISIONS) {
    describe(`protocol revision ${revision}`, () => {
      let agent: { agent_id: string; api_key: string };
      let client: Client;
      before(async () => {
        agent = await svc.register();
        client = await connect(svc, agent.api_key, revision);
      });
      after(() => client.close());

      it('negotiates the revision', () => {
        expect(client.getNegotiatedProtocolVersion()).to.equal(revision);
        expect(client.getServerVersion()?.name).to.equal('agent-network');
      });

      it("tools/list gives exactly the spec's 36 tools, each with a description and an object input schema", async () => {
        const { tools } = await client.listTools();
        expect(SPEC_TOOLS).to.have.length(36);
        expect(tools.map((t) => t.name).sort()).to.deep.equal([...SPEC_TOOLS].sort());
        expect(TOOLS.map((t) => t.name).sort()).to.deep.equal([...SPEC_TOOLS].sort());
        for (const t of tools) {
          expect(t.description, t.name).to.be.a('string').and.not.equal('');
          expect(t.inputSchema.type, t.name).to.equal('object');
        }
      });

      it('get_credits answers what the REST read answers', async () => {
        const r = (await client.callTool({ name: 'get_credits', arguments: {} })) as CallToolResult;
        expect(r.isError ?? false).to.equal(false);
        const rest = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key });
        expect(structured(r)).to.deep.equal(rest.body);
      });

      it('every tool: a valid call charges what its REST operation charges and answers its documented schema; an invalid one is an isError result with the 422 envelope and charges nothing', async () => {
        // The caller A and a member B (both with claimed agents), a third agent C.
        const a = await signUpWithAgent(svc, outbox, { capabilities: ['lead-gen'] });
        const b = await signUpWithAgent(svc, outbox, { capabilities: ['lead-gen', 'b2b-sales'] });
        const c = await svc.register();
        const bearerB = { authorization: `Bearer ${b.user.access_token}` };
        expect(
          (await svc.req('PATCH', '/api/auth/me', { headers: bearerB, body: { headline: 'Operator', industry: 'technology', gives: ['lead-gen'] } })).status,
        ).to.equal(200);
        const mcp = await connect(svc, a.agent.api_key, revision);
        const bPost = await svc.req('POST', '/api/feed/posts', {
          apiKey: b.agent.api_key,
          body: { title: 'Which one?', body: 'Pick one #mcp', post_type: 'activity_summary', room_slug: 'lead-gen', poll: { options: ['x', 'y'] } },
        });
        expect(bPost.status, bPost.text).to.equal(200);
        const postId = bPost.body.post_id as string;
        expect((await svc.req('POST', `/api/agent/bonds/${a.agent.agent_id}`, { apiKey: b.agent.api_key })).status).to.equal(200);

        const balance = async () =>
          (await svc.req('GET', `/api/protocol/agents/${a.agent.agent_id}/credits`, { apiKey: a.agent.api_key })).body.balance as number;
        const call = async (name: string, args: Record<string, unknown>) => (await mcp.callTool({ name, arguments: args })) as CallToolResult;
        const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
        const future = new Date(svc.clock.now().getTime() + 3600_000).toISOString();
        let thread = '';
        const valid: Record<string, () => Record<string, unknown>> = {
          browse_members: () => ({ q: 'Operator', limit: 5 }),
          find_miu_members: () => ({ query: 'operator lead gen' }),
          request_miu_intro: () => ({ member_id: b.user.user_id, reason: 'We both do lead generation' }),
          research_person: () => ({ user_id: b.user.user_id }),
          why_meet: () => ({ user_id: b.user.user_id }),
          find_intent_match: () => ({ asks: ['lead-gen'] }),
          list_builder_profiles: () => ({ capability: 'lead-gen' }),
          get_builder_profile: () => ({ user_id: b.user.user_id }),
          get_matches: () => ({ limit: 10 }),
          intent_radar: () => ({ type: 'activity_summary' }),
          get_agent_pulse: () => ({ days: 7 }),
          get_credits: () => ({}),
          register_agent: () => ({ name: 'Via MCP', capabilities: ['lead-gen'], owner_name: 'O', owner_email: `mcp.${revision}.${Date.now()}@example.com` }),
          get_rooms: () => ({}),
          browse_coexist_feed: () => ({ limit: 5 }),
          post_signal: () => ({ title: 'Signal', body: 'Found one #mcp', room_slug: 'lead-gen' }),
          post_to_coexist_feed: () => ({ title: 'Hello', body: 'From MCP #mcp', post_type: 'activity_summary' }),
          schedule_post: () => ({ title: 'Later', body: 'Scheduled #mcp', post_type: 'activity_summary', publish_at: future }),
          get_anchor_posts: () => ({ room_slug: 'lead-gen' }),
          signal_boost: () => ({ post_id: postId }),
          vote_on_poll: () => ({ post_id: postId, option_index: 1 }),
          react_to_post: () => ({ post_id: postId, reaction: 'insightful' }),
          comment_on_feed_post: () => ({ post_id: postId, content: 'Good question' }),
          get_trending_hashtags: () => ({}),
          upload_post_image: () => ({ content_base64: png, filename: 'dot.png' }),
          flag_post: () => ({ post_id: postId, reason: 'test' }),
          flag_agent: () => ({ agent_id: c.agent_id }),
          send_dm: () => ({ to_agent_id: b.agent.agent_id, message: 'Hi from MCP' }),
          create_mesh_thread: () => ({ participant_agent_ids: [b.agent.agent_id], name: 'Ops', first_message: 'Welcome' }),
          list_mesh_threads: () => ({}),
          send_mesh_message: () => ({ thread_id: thread, message: 'Second message' }),
          get_signal_inbox: () => ({ limit: 10 }),
          trust_stamp: () => ({ agent_id: b.agent.agent_id, capability: 'lead-gen' }),
          send_bond_request: () => ({ agent_id: c.agent_id }),
          accept_bond_request: () => ({ agent_id: b.agent.agent_id }),
          list_bonds: () => ({ status: 'active' }),
        };
        expect(Object.keys(valid).sort()).to.deep.equal(TOOLS.map((t) => t.name).sort());

        for (const def of TOOLS) {
          const before = await balance();
          const bad = await call(def.name, { ...valid[def.name](), unexpected_field: true });
          expect(bad.isError, `${def.name} invalid`).to.equal(true);
          expect(structured(bad)).to.include({ status: 422, code: 'validation_failed' });
          expect(structured(bad).request_id, def.name).to.be.a('string');
          expect(JSON.parse((bad.content[0] as { text: string }).text)).to.include({ code: 'validation_failed' });
          expect(undocumentedToolAnswer(def, structured(bad), 422), def.name).to.equal(null);
          expect(await balance(), `${def.name} invalid charges nothing`).to.equal(before);

          const ok = await call(def.name, valid[def.name]());
          expect(ok.isError ?? false, `${def.name}: ${JSON.stringify(ok.content)}`).to.equal(false);
          expect(undocumentedToolAnswer(def, structured(ok)), def.name).to.equal(null);
          const after = await balance();
          // The REST operation's own cost (the route table's x-credits-cost), not the tool's copy of it.
          expect(def.cost_mc, `${def.name} cost`).to.equal(restCost(def));
          expect(Math.round((before - after) * 1000), `${def.name} charge`).to.equal(restCost(def));
          if (def.cost_mc > 0) expect(structured(ok).credits_charged, def.name).to.equal(def.cost_mc / 1000);
          if (def.name === 'create_mesh_thread') thread = structured(ok).thread_id as string;
        }

        // A refusal of the route is an isError result carrying its envelope, and charges nothing.
        const before = await balance();
        const missing = await call('signal_boost', { post_id: 'pst_missing000000000000' });
        expect(missing.isError).to.equal(true);
        expect(structured(missing)).to.include({ status: 404, code: 'post_not_found' });
        const twice = await call('vote_on_poll', { post_id: postId, option_index: 0 });
        expect(structured(twice)).to.include({ status: 409 });
        expect(await balance()).to.equal(before);
        await mcp.close();
      });

      it('an unknown tool is a protocol error (-32602), not a tool result', async () => {
        const err = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(
          () => null,
          (e: unknown) => e as { code?: number; message?: string },
        );
        expect(err?.code).to.equal(-32602);
        expect(err?.message).to.include('no_such_tool');
      });

      it('a name inherited by every object (constructor, toString, __proto__) is an unknown tool too', async () => {
        for (const name of ['constructor', 'toString', '__proto__']) {
          const err = await client.callTool({ name, arguments: {} }).then(
            () => null,
            (e: unknown) => e as { code?: number; message?: string },
          );
          expect(err?.code, name).to.equal(-32602);
          expect(err?.message, name).to.include(`Tool ${name} not found`);
        }
      });

      it('tools/list lists each tool from its definition: description, the route schema as input schema, its output schema and annotations', async () => {
        const { tools } = await client.listTools();
        const byName = new Map(tools.map((t) => [t.name, t]));
        for (const def of TOOLS) {
          const listed = byName.get(def.name);
          expect(listed?.description, def.name).to.equal(def.description);
          expect(listed?.inputSchema, def.name).to.deep.equal({ type: 'object', ...def.inputSchema });
          expect(listed?.outputSchema, def.name).to.deep.equal({ type: 'object', ...def.outputSchema });
          expect(listed?.annotations, def.name).to.deep.equal(def.annotations);
          // Read-only: the GETs but the inbox (fetching marks read), and the two searches sent as POST.
          const readOnly = (def.rest.startsWith('GET ') && def.name !== 'get_signal_inbox') || ['find_miu_members', 'find_intent_match'].includes(def.name);
          expect(listed?.annotations?.readOnlyHint, def.name).to.equal(readOnly);
        }
      });

      it('each request serves its own caller: concurrent calls by two agents answer each its own account', async () => {
        const other = await svc.register();
        const spent = await svc.req('POST', '/api/feed/posts', {
          apiKey: other.api_key,
          body: { title: 'Spend', body: 'One charged post', post_type: 'activity_summary' },
        });
        expect(spent.status, spent.text).to.equal(200);
        const otherClient = await connect(svc, other.api_key, revision);
        try {
          const calls = await Promise.all(
            Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? client : otherClient).callTool({ name: 'get_credits', arguments: {} })),
          );
          calls.forEach((r, i) => {
            const s = structured(r as CallToolResult);
            expect(s.agent_id, `call ${i}`).to.equal(i % 2 === 0 ? agent.agent_id : other.agent_id);
          });
          const mine = structured(calls[0] as CallToolResult);
          const theirs = structured(calls[1] as CallToolResult);
          expect(theirs.used).to.be.greaterThan(mine.used as number);
        } finally {
          await otherClient.close();
        }
      });

      it('leaves the process-wide stack trace limit as it was (the server closes without building a stack)', async () => {
        const before = Error.stackTraceLimit;
        await client.callTool({ name: 'get_credits', arguments: {} });
        await client.callTool({ name: 'no_such_tool', arguments: {} }).catch(() => undefined);
        await client.listTools();
        expect(Error.stackTraceLimit).to.equal(before);
      });

      it('a wrong API key is refused: the SDK client cannot connect', async () => {
        const err = await connect(svc, 'ak_wrong_key_0000000000000000000000000', revision).then(
          () => null,
          (e: unknown) => e as Error,
        );
        expect(err).to.be.instanceOf(Error);
        expect(String(err?.message)).to.match(/401|nauthori/);
      });
    });
  }

  describe('images and cursors', () => {
    it("upload_post_image takes base64 under the multipart route's checks: above the 64 KB JSON limit, 5 MB, content type, bad base64", async () => {
      const agent = await svc.register();
      const client = await connect(svc, agent.api_key, '2025-11-25');
      const png = (size: number) => pngOf({ size }).toString('base64');
      const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'upload_post_image', arguments: args })) as CallToolResult;
      const big = await call({ content_base64: png(200 * 1024) });
      expect(big.isError ?? false, JSON.stringify(big.content)).to.equal(false);
      expect(structured(big)).to.include({ content_type: 'image/png', size_bytes: 200 * 1024 });
      const image = await svc.req('GET', new URL(structured(big).url as string).pathname);
      expect(image.status).to.equal(200);
      expect(structured(await call({ content_base64: png(5 * 1024 * 1024 + 1) }))).to.include({ status: 413, code: 'payload_too_large' });
      expect(structured(await call({ content_base64: Buffer.from('plain text, not an image').toString('base64') }))).to.include({
        status: 415,
        code: 'unsupported_image_type',
      });
      expect(structured(await call({ content_base64: 'not base64 !!' }))).to.include({ status: 422, code: 'validation_failed' });
      await client.close();
    });

    it('get_signal_inbox pages with the REST cursor: next_cursor of a tool answer works as REST after, and back', async () => {
      const a = await svc.register();
      const b = await svc.register();
      const client = await connect(svc, a.api_key, '2026-07-28');
      const stamp = (capability: string) => svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: b.api_key, body: { capability } });
      expect((await stamp('lead-gen')).status).to.equal(200);
      const first = structured((await client.callTool({ name: 'get_signal_inbox', arguments: {} })) as CallToolResult);
      expect(first.notifications).to.have.length(1);
      expect((await stamp('b2b-sales')).status).to.equal(200);
      const rest = await svc.req('GET', `/api/agent/notifications?after=${encodeURIComponent(first.poll_cursor as string)}`, { apiKey: a.api_key });
      expect(rest.status, rest.text).to.equal(200);
      expect(rest.body.notifications).to.have.length(1);
      expect((await stamp('talent-matching')).status).to.equal(200);
      const next = structured((await client.callTool({ name: 'get_signal_inbox', arguments: { after: rest.body.next_cursor } })) as CallToolResult);
      expect(next.notifications).to.have.length(1);
      expect(next.notifications[0].notification_id ?? next.notifications[0].id).to.not.equal(
        rest.body.notifications[0].notification_id ?? rest.body.notifications[0].id,
      );
      await client.close();
    });
  });

  describe('list tools page with the REST cursors', () => {
    it('each cursor-paged tool: its next_cursor pages REST, the same cursor gives the tool and REST the same page, and REST next_cursor is accepted by the tool', async () => {
      const a = await signUpWithAgent(svc, outbox, { capabilities: ['lead-gen'] });
      const b = await signUpWithAgent(svc, outbox, { capabilities: ['lead-gen'] });
      const c = await svc.register({ capabilities: ['lead-gen'] });
      for (const key of [a.agent.api_key, b.agent.api_key, c.api_key]) {
        const r = await svc.req('POST', '/api/feed/posts', { apiKey: key, body: { title: 'Signal', body: 'Found #cursor', post_type: 'signal_found' } });
        expect(r.status, r.text).to.equal(200);
      }
      // Two bond requests to A: two incoming bonds and two notifications.
      for (const key of [b.agent.api_key, c.api_key])
        expect((await svc.req('POST', `/api/agent/bonds/${a.agent.agent_id}`, { apiKey: key })).status).to.equal(200);
      const lists: Array<{ tool: string; rest: string; param: 'after' | 'cursor'; args?: Record<string, string>; items: string; many: boolean }> = [
        { tool: 'browse_coexist_feed', rest: '/api/feed/posts', param: 'after', items: 'items', many: true },
        { tool: 'get_signal_inbox', rest: '/api/agent/notifications', param: 'after', items: 'notifications', many: true },
        // No new_match events for a fresh agent: the cursor still round-trips.
        { tool: 'get_matches', rest: `/api/protocol/agents/${a.agent.agent_id}/matches`, param: 'after', items: 'events', many: false },
        { tool: 'intent_radar', rest: '/api/agent/intent-radar', param: 'cursor', args: { type: 'signal_found' }, items: 'items', many: true },
        { tool: 'list_builder_profiles', rest: '/api/protocol/builders', param: 'cursor', items: 'builders', many: true },
        { tool: 'list_bonds', rest: '/api/agent/bonds', param: 'cursor', args: { status: 'incoming' }, items: 'items', many: true },
        // No group threads for a fresh agent: the cursor still round-trips.
        { tool: 'list_mesh_threads', rest: '/api/agent/group-dm', param: 'after', items: 'items', many: false },
        { tool: 'browse_members', rest: '/api/members', param: 'after', items: 'members', many: false },
      ];
      // Every tool whose input takes a cursor is in the list above.
      expect(
        TOOLS.filter((t) => Object.keys((t.inputSchema.properties ?? {}) as object).some((k) => k === 'after' || k === 'cursor'))
          .map((t) => t.name)
          .sort(),
      ).to.deep.equal(lists.map((l) => l.tool).sort());
      const client = await connect(svc, a.agent.api_key, '2026-07-28');
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const idOf = (x: any): string => String(x.post_id ?? x.notification_id ?? x.user_id ?? x.agent_id ?? x.event_id ?? JSON.stringify(x));
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const ids = (body: any, field: string): string[] => (body[field] as unknown[]).map(idOf);
      try {
        for (const l of lists) {
          const tool = async (extra: Record<string, unknown>) => {
            const r = (await client.callTool({ name: l.tool, arguments: { ...l.args, limit: 1, ...extra } })) as CallToolResult;
            expect(r.isError ?? false, `${l.tool}: ${JSON.stringify(r.content)}`).to.equal(false);
            return structured(r);
          };
          const rest = async (cursor: string) => {
            const qs = new URLSearchParams({ ...l.args, limit: '1', [l.param]: cursor });
            const r = await svc.req('GET', `${l.rest}?${qs.toString()}`, { apiKey: a.agent.api_key });
            expect(r.status, `${l.rest}: ${r.text}`).to.equal(200);
            return r.body;
          };
          const first = await tool(l.param === 'after' ? { after: '0' } : {});
          expect(first.next_cursor, l.tool).to.be.a('string');
          const restPage = await rest(first.next_cursor as string);
          const toolPage = await tool({ [l.param]: first.next_cursor });
          expect(ids(toolPage, l.items), l.tool).to.deep.equal(ids(restPage, l.items));
          expect(toolPage.next_cursor, l.tool).to.equal(restPage.next_cursor);
          if (l.many) {
            expect(ids(restPage, l.items), `${l.tool}: the second page`).to.have.length(1);
            expect(ids(restPage, l.items), `${l.tool}: the second page moves on`).not.to.deep.equal(ids(first, l.items));
          }
          if (restPage.next_cursor) await tool({ [l.param]: restPage.next_cursor });
          // A cursor REST would refuse is refused by the tool with REST's envelope.
          const bad = (await client.callTool({ name: l.tool, arguments: { ...l.args, [l.param]: 'not-a-cursor' } })) as CallToolResult;
          expect(bad.isError, l.tool).to.equal(true);
          expect(structured(bad), l.tool).to.include({ status: 400, code: 'invalid_cursor' });
        }
      } finally {
        await client.close();
      }
    });
  });

  describe('tool definitions', () => {
    it("each tool's arguments are its REST operation's parameters and body: the route table's object, path parameters in the path, a GET's query parameters in the query, the route's own body schema", () => {
      const ops = allOperations();
      // A distinct value per argument, so each one can be found where the call puts it.
      const sample = (name: string, schema: Record<string, unknown>): unknown =>
        Array.isArray(schema.enum)
          ? schema.enum[0]
          : schema.type === 'integer'
            ? ((schema.minimum as number | undefined) ?? 1)
            : schema.type === 'boolean'
              ? true
              : schema.type === 'array'
                ? []
                : `v_${name}`;
      for (const def of TOOLS) {
        const rest = restOperation(def);
        // The tool names its operation by the route table's object, and its rest and cost come from it.
        expect(def.spec.op, def.name).to.equal(rest);
        expect(def.rest, def.name).to.equal(`${rest.method} ${openApiPath(rest.path)}`);
        if (!def.operation) {
          // upload_post_image: base64 through the multipart route's own checks (tested below).
          expect(def.name).to.equal('upload_post_image');
          continue;
        }
        const props = (def.inputSchema.properties ?? {}) as Props;
        const args = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sample(k, v)]));
        // Without optional arguments that pick another route (a reply), the call runs the tool's REST operation.
        const plain = def.operation(Object.fromEntries(Object.entries(args).filter(([k]) => k !== 'reply_to_comment_id')), 'agt_me');
        expect(plain.op, def.name).to.equal(rest);
        // Each path parameter is its argument's value (or the caller's agent id).
        const byParam = new Map([...pathArguments(def)].map(([arg, param]) => [param, arg]));
        expect(Object.keys(plain.params).sort(), `${def.name}: path parameters`).to.deep.equal(pathParams(rest.path).sort());
        for (const param of pathParams(rest.path)) {
          const arg = byParam.get(param);
          expect(plain.params[param], `${def.name}: ${param}`).to.equal(arg === undefined ? 'agt_me' : String(args[arg]));
        }
        const call = def.operation(args, 'agt_me');
        const served = ops.find((op) => op === call.op);
        expect(served, `${def.name}: ${call.op.method} ${call.op.path} is mounted`).to.not.equal(undefined);
        const sent = call.query ?? {};
        if (rest.method === 'GET') {
          // Every argument that is no path parameter is a query parameter the route documents, sent as its string.
          const queryArgs = Object.keys(props).filter((k) => !pathArguments(def).has(k));
          expect(Object.keys(sent).sort(), `${def.name}: query parameters`).to.deep.equal([...queryArgs].sort());
          for (const k of queryArgs) {
            expect(declaredQuery(rest), `${def.name}: ${k} documented`).to.have.property(k);
            expect(sent[k], `${def.name}: ${k}`).to.equal(String(args[k]));
          }
          expect(call.body, def.name).to.equal(undefined);
        } else expect(call.query, `${def.name}: no query`).to.equal(undefined);
        if (call.body) {
          // The route's body schema itself, or its properties with the path parameters added.
          const bodyProps = Object.keys(((served?.body ?? {}) as { properties?: object }).properties ?? {});
          expect(Object.keys(call.body), `${def.name}: body`).to.satisfy((keys: string[]) => keys.every((k) => bodyProps.includes(k)));
          for (const k of bodyProps)
            // The route's declaration, or the tool's own body where it states one (post_signal: the room required, so not null).
            expect(props[k], `${def.name}: ${k} as the route declares it`).to.deep.equal(
              ((def.spec.body ?? served?.body) as { properties: Record<string, unknown> }).properties[k],
            );
        }
      }
    });

    it("each GET tool's arguments are exactly its route's path and query parameters (but the documented exceptions), each converted from the route's declaration", () => {
      // The GET tools, named: a new one is checked here too.
      expect(GET_TOOLS.map((t) => t.name).sort()).to.deep.equal(
        [
          'browse_members',
          'research_person',
          'why_meet',
          'list_builder_profiles',
          'get_builder_profile',
          'get_matches',
          'intent_radar',
          'get_agent_pulse',
          'get_credits',
          'get_rooms',
          'browse_coexist_feed',
          'get_anchor_posts',
          'get_trending_hashtags',
          'list_mesh_threads',
          'get_signal_inbox',
          'list_bonds',
        ].sort(),
      );
      for (const def of GET_TOOLS) {
        const op = restOperation(def);
        const props = (def.inputSchema.properties ?? {}) as Props;
        const query = declaredQuery(op);
        const omitted = def.spec.omit ?? {};
        for (const [k, why] of Object.entries(omitted)) {
          expect(query, `${def.name} leaves out ${k}, which its route takes`).to.have.property(k);
          expect(why, `${def.name}: the reason ${k} is left out`).to.be.a('string').with.length.greaterThan(10);
        }
        const pathArgs = pathArguments(def);
        const queryArgs = Object.keys(query).filter((k) => !(k in omitted));
        expect(Object.keys(props).sort(), `${def.name}: arguments`).to.deep.equal([...pathArgs.keys(), ...queryArgs].sort());
        expect(def.inputSchema.additionalProperties, def.name).to.equal(false);
        const requiredQuery = ((op.query as { required?: string[] } | undefined)?.required ?? []).filter((k) => queryArgs.includes(k));
        expect([...((def.inputSchema.required as string[] | undefined) ?? [])].sort(), `${def.name}: required`).to.deep.equal(
          [...pathArgs.keys(), ...requiredQuery].sort(),
        );
        for (const [arg, param] of pathArgs) {
          // The route declares the parameter (its description is the argument's), and the argument is that schema.
          expect(op.params?.[param], `${def.name}: ${op.path} declares :${param}`).to.be.an('object');
          expect(props[arg], `${def.name}: ${arg} is :${param}`).to.deep.equal(op.params?.[param]);
        }
        for (const k of queryArgs) {
          const p = query[k];
          const a = props[k];
          const at = `${def.name}: ${k}`;
          expect(a.description, `${at}: description`).to.equal(p.description);
          if (p.contentSchema !== undefined) {
            // The JSON value the string stands for: an integer with the route's bounds and default, a boolean.
            expect(p.contentMediaType, at).to.equal('application/json');
            expect(a, at).to.deep.equal({ ...(p.contentSchema as object), description: p.description });
          } else if (p.pattern === '^\\d+$') {
            expect(a, at).to.include({ type: 'integer', minimum: 0 });
          } else {
            expect(a.type, at).to.equal(p.type);
            if (Array.isArray(p.enum)) expect(a.enum, `${at}: the route's enum (but the empty value)`).to.deep.equal(p.enum.filter((v) => v !== ''));
            else expect(a, at).not.to.have.property('enum');
            for (const kw of ['minLength', 'maxLength', 'pattern', 'format']) expect(a[kw], `${at}: ${kw}`).to.equal(p[kw]);
          }
          // An integer argument has the bounds its route enforces (declared on the route: see the next test).
          if (a.type === 'integer') expect(a, at).to.include.keys('minimum', 'maximum', 'default');
        }
      }
    });

    it("each GET tool's integer bounds and enums are what its REST route enforces: the bounds and every enum value are taken, one past a bound or outside the enum is 422, the default is the route's", async () => {
      const agent = await svc.register();
      let checked = 0;
      for (const def of GET_TOOLS) {
        const op = restOperation(def);
        const props = (def.inputSchema.properties ?? {}) as Props;
        const typed = Object.entries(props).filter(([, a]) => a.type === 'integer' || a.type === 'boolean' || Array.isArray(a.enum));
        if (typed.length === 0) continue;
        // These routes take no path argument (only the caller's own id), so the check needs no records.
        expect([...pathArguments(def).keys()], def.name).to.deep.equal([]);
        const path = op.path.replace(/:\w+/g, agent.agent_id);
        const get = async (q: Record<string, string>) => svc.req('GET', `${path}?${new URLSearchParams(q).toString()}`, { apiKey: agent.api_key });
        const refused = async (k: string, v: string) => {
          const r = await get({ [k]: v });
          expect(r.status, `${def.name}: ${k}=${v} ${r.text}`).to.equal(422);
          expect(
            (r.body.detail as Array<{ loc: unknown[] }>).map((e) => e.loc),
            `${def.name}: ${k}=${v}`,
          ).to.deep.include(['query', k]);
        };
        const taken = async (k: string, v: string) => {
          const r = await get({ [k]: v });
          expect(r.status, `${def.name}: ${k}=${v} ${r.text}`).to.equal(200);
          return r.body as Record<string, unknown>;
        };
        const plain = (await get({})).body as Record<string, unknown>;
        for (const [k, a] of typed) {
          checked++;
          if (a.type === 'integer') {
            const [min, max] = [a.minimum as number, a.maximum as number];
            for (const v of [min, max]) {
              const body = await taken(k, String(v));
              // An answer that says the value it used says this one.
              if (typeof body[k] === 'number') expect(body[k], `${def.name}: ${k}=${v}`).to.equal(v);
            }
            await refused(k, String(max + 1));
            if (min > 0) await refused(k, String(min - 1));
            if (typeof plain[k] === 'number') expect(plain[k], `${def.name}: ${k} by default`).to.equal(a.default);
          } else if (a.type === 'boolean') {
            for (const v of ['true', 'false']) await taken(k, v);
            await refused(k, 'maybe');
          } else {
            for (const v of a.enum as string[]) await taken(k, v);
            await refused(k, 'not-one-of-them');
          }
        }
      }
      expect(checked).to.be.greaterThan(15);
    });
  });

  describe('docs/MCP.md', () => {
    it('its table of the 36 tools is the tool definitions: name, cost, REST operation and description of each', () => {
      const md = readFileSync(new URL('../../docs/MCP.md', import.meta.url), 'utf8');
      const rows = [...md.matchAll(/^\| `(\w+)` \| ([^|]+) \| `([^`]+)` \| (.+) \|$/gm)].map((m) => ({
        name: m[1],
        cost: m[2].trim(),
        rest: m[3],
        description: m[4],
      }));
      expect(rows).to.deep.equal(
        TOOLS.map((t) => ({ name: t.name, cost: t.cost_mc ? String(t.cost_mc / 1000) : 'free', rest: t.rest, description: t.description })),
      );
    });

    it('its list of input-schema exceptions is the tool definitions: each path parameter filled with the caller or renamed, each query parameter left out with its reason', () => {
      const md = readFileSync(new URL('../../docs/MCP.md', import.meta.url), 'utf8');
      const section = md.slice(md.indexOf('## Input schemas'), md.indexOf('## The server card'));
      const listed: string[] = [];
      for (const m of section.matchAll(/^- ((?:`\w+`(?:, )?)+): (path|query) `(\w+)` (is the caller|as `\w+`|left out: .+)$/gm)) {
        for (const [, name] of m[1].matchAll(/`(\w+)`/g)) listed.push(`${name}: ${m[2]} ${m[3]} ${m[4]}`);
      }
      const defined: string[] = [];
      for (const def of TOOLS) {
        for (const [param, bound] of Object.entries(def.spec.path ?? {}))
          defined.push(`${def.name}: path ${param} ${bound === CALLER ? 'is the caller' : `as \`${bound}\``}`);
        for (const [param, why] of Object.entries(def.spec.omit ?? {})) defined.push(`${def.name}: query ${param} left out: ${why}`);
      }
      expect(listed.sort()).to.deep.equal(defined.sort());
      // A tool with a body of its own, body defaults or a second operation is in the list too.
      for (const def of TOOLS.filter((t) => t.spec.body || t.spec.defaults || t.spec.alternative || t.handle))
        expect(section, def.name).to.match(new RegExp(`^- \`${def.name}\`: `, 'm'));
    });
  });

  describe('server card', () => {
    it('GET /.well-known/mcp.json names the endpoint, transport, auth and the same tools (names, descriptions, input schemas) as tools/list', async () => {
      const card = await svc.req('GET', '/.well-known/mcp.json');
      expect(card.status).to.equal(200);
      expect(card.body.endpoint).to.equal(`${svc.running.services.config.publicBaseUrl}/api/mcp`);
      expect(card.body.transport).to.include({ type: 'streamable-http', method: 'POST', stateless: true });
      expect(card.body.protocol_versions).to.deep.equal([...REVISIONS]);
      expect(card.body.authentication.schemes).to.deep.equal([{ type: 'apiKey', in: 'header', name: 'X-API-Key' }]);
      const agent = await svc.register();
      const client = await connect(svc, agent.api_key, '2026-07-28');
      const { tools } = await client.listTools();
      await client.close();
      const listed = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
      const carded = (card.body.tools as Array<{ name: string; description: string; inputSchema: unknown; cost_credits: number }>).map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
      }));
      expect(carded).to.deep.equal(listed);
      expect(card.body.tools.find((t: { name: string }) => t.name === 'send_dm').cost_credits).to.equal(0.25);
      // The registration response points at the endpoint and the card.
      const step = agent.body.next_steps.find((x: { action: string }) => x.action === 'connect_tools');
      expect(new URL(step.mcp_discovery_url).pathname).to.equal('/.well-known/mcp.json');
    });
  });

  describe('HTTP edges', () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const accept = { accept: 'application/json, text/event-stream' };
    /** The per-request envelope claim of a 2026-07-28 request. */
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };

    it('answers 401 with WWW-Authenticate without a key, and with a bad key', async () => {
      for (const headers of [accept, { ...accept, 'x-api-key': 'ak_not_a_real_key_0000000000000000000' }]) {
        const r = await request(svc.url, 'POST', '/api/mcp', { headers, body: init });
        expect(r.status).to.equal(401);
        expect(r.headers['www-authenticate']).to.include('X-API-Key');
        expect(r.body.code).to.equal('unauthorized');
      }
    });

    it('answers the 2025 initialize with JSON (no session id) and refuses GET with 405 (no sessions, no streams)', async () => {
      const agent = await svc.register();
      const r = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers: accept, body: init });
      expect(r.status, r.text).to.equal(200);
      expect(r.headers['content-type']).to.include('application/json');
      expect(r.headers['mcp-session-id']).to.equal(undefined);
      expect(r.body.result.protocolVersion).to.equal('2025-11-25');
      const get = await request(svc.url, 'GET', '/api/mcp', { apiKey: agent.api_key, headers: accept });
      expect(get.status).to.equal(405);
    });

    it('answers the 2026-07-28 server/discover with the revisions it serves and its tools capability', async () => {
      const agent = await svc.register();
      const r = await request(svc.url, 'POST', '/api/mcp', {
        apiKey: agent.api_key,
        headers: { ...accept, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
        body: { jsonrpc: '2.0', id: 9, method: 'server/discover', params: { _meta: meta } },
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.result.supportedVersions).to.include('2026-07-28');
      expect(r.body.result._meta['io.modelcontextprotocol/serverInfo']).to.include({ name: 'agent-network' });
      // The same capabilities as the server card: a fixed tool list (no list_changed notifications).
      const card = await svc.req('GET', '/.well-known/mcp.json');
      expect(r.body.result.capabilities).to.deep.equal(card.body.capabilities);
    });

    it("shows the rate-limit window the tool call counted against: a read tool the read window, counting down, not the caller's write window", async () => {
      const agent = await svc.register();
      const headers = { ...accept, 'mcp-protocol-version': '2025-11-25' };
      const call = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_credits', arguments: {} } };
      const first = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers, body: call });
      const second = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers, body: call });
      expect(first.status, first.text).to.equal(200);
      // The test service scales every limit by RATE_LIMIT_SCALE (1000): reads 600, writes 60 a minute.
      const rest = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key });
      expect(first.headers['ratelimit-limit'])
        .to.equal(rest.headers['ratelimit-limit'])
        .and.to.equal(String(600 * 1000));
      expect(Number(second.headers['ratelimit-remaining'])).to.be.below(Number(first.headers['ratelimit-remaining']));
    });

    it('replays a tools/call under the same Idempotency-Key with the same JSON answer, charging once', async () => {
      const agent = await svc.register();
      const credits = async () => (await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key })).body.used as number;
      const before = await credits();
      const call = {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'post_to_coexist_feed', arguments: { title: 'Once', body: 'Posted once', post_type: 'activity_summary' } },
      };
      const headers = { ...accept, 'mcp-protocol-version': '2025-11-25', 'idempotency-key': `mcp-${agent.agent_id}` };
      const first = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers, body: call });
      const second = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers, body: call });
      expect(first.status, first.text).to.equal(200);
      expect(first.headers['content-type']).to.include('application/json');
      expect(first.body.result.isError ?? false, first.text).to.equal(false);
      expect(second.status).to.equal(200);
      expect(second.body).to.deep.equal(first.body);
      expect((await credits()) - before).to.equal(0.1);
    });

    describe('a JSON-RPC batch of writes', () => {
      const headers = { ...accept, 'mcp-protocol-version': '2025-11-25' };
      const postCall = (id: number | string, n: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'post_to_coexist_feed', arguments: { title: `Batch ${n}`, body: `Batched post ${n}`, post_type: 'activity_summary' } },
      });
      /** What the agent was charged so far (credits), and the ids of its posts in the feed. */
      const ledger = async (agent: { agent_id: string; api_key: string }) => {
        const used = (await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key })).body.used as number;
        const feed = await svc.req('GET', '/api/feed/posts?limit=50', { apiKey: agent.api_key });
        const ids = (feed.body.items as { post_id: string; agent_id: string }[]).filter((p) => p.agent_id === agent.agent_id).map((p) => p.post_id);
        return { used, ids };
      };

      for (const keyed of [false, true]) {
        it(`${keyed ? 'under an Idempotency-Key: ' : ''}N posts in one batch are N successes with N distinct posts stored and N charges${keyed ? ', and a retry appends nothing' : ''}`, async () => {
          const agent = await svc.register();
          const before = await ledger(agent);
          const N = 6;
          const batch = Array.from({ length: N }, (_, i) => postCall(i % 2 ? `call-${i}` : i, i));
          const h = keyed ? { ...headers, 'idempotency-key': `batch-${agent.agent_id}` } : headers;
          const r = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers: h, body: batch });
          expect(r.status, r.text).to.equal(200);
          expect(r.body).to.be.an('array').with.length(N);
          const answers = r.body as { id: unknown; result: CallToolResult }[];
          expect(answers.map((a) => a.id).sort()).to.deep.equal(batch.map((c) => c.id).sort());
          for (const a of answers) expect(a.result.isError ?? false, JSON.stringify(a)).to.equal(false);
          const postIds = answers.map((a) => structured(a.result).post_id as string);
          expect(new Set(postIds).size, JSON.stringify(postIds)).to.equal(N);
          const after = await ledger(agent);
          expect(after.ids.filter((id) => !before.ids.includes(id)).sort()).to.deep.equal([...postIds].sort());
          expect(Math.round((after.used - before.used) * 1000)).to.equal(N * 100);
          if (keyed) {
            const again = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers: h, body: batch });
            expect(again.body).to.deep.equal(r.body);
            const replayed = await ledger(agent);
            expect(replayed).to.deep.equal(after);
          }
        });
      }

      it('refuses a batch that repeats a request id (400 duplicate_request_id) before running any of it', async () => {
        const agent = await svc.register();
        const before = await ledger(agent);
        const r = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers, body: [postCall(7, 1), postCall(7, 2)] });
        expect(r.status, r.text).to.equal(400);
        expect(r.body.code).to.equal('duplicate_request_id');
        expect(await ledger(agent)).to.deep.equal(before);
      });
    });

    it('routes by the SDK classification: an envelope request gets the 2026 answers (header mismatch -32020), an initialize with a 2025 claim stays the 2025 handshake', async () => {
      const agent = await svc.register();
      const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_credits', arguments: {}, _meta: meta } };
      const modern = { ...accept, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
      const ok = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers: { ...modern, 'mcp-name': 'get_credits' }, body: call });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.result.structuredContent.agent_id).to.equal(agent.agent_id);
      expect(ok.body.result.resultType).to.equal('complete');
      const mismatch = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers: { ...modern, 'mcp-name': 'get_rooms' }, body: call });
      expect(mismatch.status).to.equal(400);
      expect(mismatch.body.error.code).to.equal(-32020);
      const noHeader = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers: accept, body: call });
      expect(noHeader.status).to.equal(400);
      expect(noHeader.body.error.code).to.equal(-32020);
      const oldClaim = { ...init, params: { ...init.params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } } };
      const handshake = await request(svc.url, 'POST', '/api/mcp', { apiKey: agent.api_key, headers: accept, body: oldClaim });
      expect(handshake.status, handshake.text).to.equal(200);
      expect(handshake.body.result.protocolVersion).to.equal('2025-11-25');
    });
  });
});
