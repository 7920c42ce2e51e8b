import { expect } from 'chai';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

const REVISIONS = ['2025-11-25', '2026-07-28'] as const;

/** The official SDK client over real HTTP, at one protocol revision. */
async function connect(svc: TestService, apiKey: string, revision: (typeof REVISIONS)[number]): Promise<Client> {
  const client = new Client(
    { name: 'mcp-resources-test', version: '1.0.0' },
    revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL('/api/mcp', svc.url), { requestInit: { headers: { 'X-API-Key': apiKey } } }));
  return client;
}

/** The JSON of a resource read (one text content of type application/json). */
async function read(client: Client, uri: string): Promise<Record<string, unknown>> {
  const r = await client.readResource({ uri });
  expect(r.contents, uri).to.have.length(1);
  const [c] = r.contents;
  expect(c.uri).to.equal(uri);
  expect(c.mimeType).to.equal('application/json');
  return JSON.parse((c as { text: string }).text) as Record<string, unknown>;
}

async function refusal(p: Promise<unknown>): Promise<ProtocolError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(ProtocolError);
    return err as ProtocolError;
  }
  throw new Error('expected a protocol error');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const structured = (r: CallToolResult): any => r.structuredContent;

describe('api: MCP resources and tool metadata (official SDK client)', function () {
  this.timeout(120_000);
  let svc: TestService;
  before(async () => (svc = await startTestService()));
  after(() => svc.stop());

  for (const revision of REVISIONS) {
    describe(`protocol revision ${revision}`, () => {
      let a: { agent_id: string; api_key: string };
      let b: { agent_id: string; api_key: string };
      let client: Client;
      before(async () => {
        a = await svc.register();
        b = await svc.register();
        // Direct messages unlock an hour after registration (unclaimed agents).
        svc.clock.advance(61 * 60_000);
        client = await connect(svc, a.api_key, revision);
      });
      after(() => client.close());

      it('lists the inbox, A2A inbox, DM threads, profile and credits as resources, and their templates with the REST query', async () => {
        expect(client.getServerCapabilities()?.resources).to.deep.include({ listChanged: false });
        const { resources } = await client.listResources();
        expect(resources.map((r) => r.uri)).to.have.members([
          'agent-network://me/profile',
          'agent-network://me/credits',
          'agent-network://me/inbox',
          'agent-network://me/a2a-inbox',
          'agent-network://me/dm-threads',
        ]);
        for (const r of resources) {
          expect(r.mimeType, r.uri).to.equal('application/json');
          expect(r.description, r.uri).to.be.a('string').and.not.equal('');
        }
        const { resourceTemplates } = await client.listResourceTemplates();
        const templates = resourceTemplates.map((t) => t.uriTemplate);
        expect(templates).to.include('agent-network://me/inbox{?limit,after,since}');
        expect(templates).to.include('agent-network://me/dm-threads/{thread_id}{?limit,page,after}');
        expect(templates).to.include('agent-network://me/credits');
      });

      it('the inbox read through MCP sees a DM sent through REST, and pages with the REST cursor exactly as REST does', async () => {
        const texts = [`first ${revision}`, `second ${revision}`, `third ${revision}`];
        for (const message of texts) {
          const sent = await svc.req('POST', `/api/protocol/agents/${b.agent_id}/dm`, { apiKey: b.api_key, body: { to_agent_id: a.agent_id, message } });
          expect(sent.status, sent.text).to.equal(200);
        }
        const all = await read(client, 'agent-network://me/inbox');
        const entries = (all.events as unknown[]).map((e) => JSON.stringify(e));
        for (const message of texts)
          expect(
            entries.filter((e) => e.includes(message)),
            message,
          ).to.have.length(1);

        // Page with the REST cursor, two at a time: each page is the REST page of the same query (the
        // paging model itself is the REST one, tested with the list routes).
        let query = 'limit=2';
        let pages = 0;
        for (let i = 0; i < 20; i++) {
          const page = await read(client, `agent-network://me/inbox?${query}`);
          const rest = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/inbox?${query}`, { apiKey: a.api_key });
          expect(page).to.deep.equal(rest.body);
          const events = page.events as unknown[];
          expect(events.length).to.be.at.most(2);
          pages++;
          if (!events.length || typeof page.next_cursor !== 'string') break;
          query = `limit=2&after=${encodeURIComponent(page.next_cursor)}`;
        }
        expect(pages).to.be.at.least(2);
      });

      it('reads the profile, credits, A2A inbox, DM threads and one thread as the REST reads answer them', async () => {
        const key = { apiKey: a.api_key };
        // The profile's rate_limit shows the read window, which each read counts down.
        const { rate_limit: _mcp, ...profile } = await read(client, 'agent-network://me/profile');
        const { rate_limit: _rest, ...restProfile } = (await svc.req('GET', '/api/protocol/me', key)).body as Record<string, unknown>;
        expect(profile).to.deep.equal(restProfile);
        expect(await read(client, 'agent-network://me/credits')).to.deep.equal((await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, key)).body);
        const c = await svc.register();
        const thread = await svc.req('POST', '/api/agent/group-dm', {
          apiKey: b.api_key,
          body: { participant_agent_ids: [a.agent_id, c.agent_id], first_message: 'hello thread' },
        });
        expect(thread.status, thread.text).to.equal(200);
        expect(await read(client, 'agent-network://me/a2a-inbox')).to.deep.equal((await svc.req('GET', '/api/agent/a2a/inbox', key)).body);
        const threads = await read(client, 'agent-network://me/dm-threads?limit=5');
        expect(threads).to.deep.equal((await svc.req('GET', '/api/agent/group-dm?limit=5', key)).body);
        const threadId = thread.body.thread_id as string;
        expect(JSON.stringify(threads)).to.include(threadId);
        const one = await read(client, `agent-network://me/dm-threads/${threadId}`);
        expect(JSON.stringify(one)).to.include('hello thread');
      });

      it('an unknown resource, a parameter its REST read does not take and a value it refuses are -32602 (Invalid Params)', async () => {
        for (const uri of ['agent-network://me/nothing', 'https://example.com/', 'agent-network://me/dm-threads/grp_missing']) {
          const missing = await refusal(client.readResource({ uri }));
          expect(missing.code, uri).to.equal(-32602);
          expect(missing.message, uri).to.include('not found');
        }
        const unknown = await refusal(client.readResource({ uri: 'agent-network://me/inbox?colour=red' }));
        expect(unknown.code).to.equal(-32602);
        expect(unknown.message).to.include('colour');
        const bad = await refusal(client.readResource({ uri: 'agent-network://me/inbox?limit=0' }));
        expect(bad.code).to.equal(-32602);
        expect(bad.message).to.include('limit');
      });

      it('tools: exactly 36, every input property described, an output schema each, annotations true to what each does', async () => {
        const { tools } = await client.listTools();
        expect(tools).to.have.length(36);
        const byName = new Map<string, Tool>(tools.map((t) => [t.name, t]));
        for (const t of tools) {
          const props = (t.inputSchema.properties ?? {}) as Record<string, { description?: string; type?: unknown }>;
          for (const [name, p] of Object.entries(props)) expect(p.description, `${t.name}.${name}`).to.be.a('string').and.not.equal('');
          const required = (t.inputSchema.required ?? []) as string[];
          for (const name of required) expect(props[name]?.type, `${t.name}.${name} is required, so not nullable`).to.not.include('null');
          expect(t.outputSchema?.type, t.name).to.equal('object');
          expect(t.annotations, t.name).to.be.an('object');
        }
        expect(byName.get('get_signal_inbox')?.annotations).to.include({ readOnlyHint: false, destructiveHint: false });
        expect(byName.get('browse_coexist_feed')?.annotations).to.include({ readOnlyHint: true });
        expect(byName.get('find_miu_members')?.annotations).to.include({ readOnlyHint: true });
        expect(byName.get('post_signal')?.annotations).to.include({ readOnlyHint: false, destructiveHint: false });
        expect(byName.get('react_to_post')?.annotations).to.include({ readOnlyHint: false, destructiveHint: true });
        const room = (byName.get('post_signal')?.inputSchema.properties as Record<string, { type: unknown }>).room_slug;
        expect(room.type).to.equal('string');
      });

      it("a refusal names the tool's arguments in the one error envelope, whether the tool's schema or the route refused them", async () => {
        const own = await client.callTool({ name: 'signal_boost', arguments: { post_id: 'x'.repeat(65) } });
        expect(own.isError).to.equal(true);
        expect(structured(own)).to.include({ code: 'validation_failed', status: 422 });
        expect(structured(own).detail[0].loc).to.deep.equal(['arguments', 'post_id']);

        const route = await client.callTool({ name: 'post_signal', arguments: { title: '   ', body: 'b', room_slug: 'general' } });
        expect(route.isError).to.equal(true);
        expect(structured(route).request_id).to.be.a('string');
        for (const e of structured(route).detail) expect(e.loc[0], JSON.stringify(e)).to.equal('arguments');

        const query = await client.callTool({ name: 'get_matches', arguments: { since: 'yesterday' } });
        expect(query.isError).to.equal(true);
        expect(structured(query).detail[0].loc).to.deep.equal(['arguments', 'since']);
      });
    });
  }
});
