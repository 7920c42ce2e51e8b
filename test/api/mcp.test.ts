import { expect } from 'chai';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { TOOLS } from '../../api/routes/mcp/tools.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

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

describe('api: MCP tool server (POST /api/mcp)', function () {
  this.timeout(120_000);
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(() => svc.stop());

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

      it('tools/list gives exactly the spec tools, each with a description and an object input schema', async () => {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).to.deep.equal(TOOLS.map((t) => t.name).sort());
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
    });
  }
});
