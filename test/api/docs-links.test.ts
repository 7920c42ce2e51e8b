import { expect } from 'chai';
import { allOperations } from '../../api/app.ts';
import { openApiPath } from '../../api/operations.ts';
import { documentUrls, HIGHLIGHTS } from '../../api/routes/docs/service.ts';
import { TOOLS } from '../../api/routes/mcp/tools.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';

const BASE = 'https://docs.example.com';

/** The documents and discovery files an agent starts from. */
const ROOTS = [
  '/llms.txt',
  '/api/',
  '/api/docs/version',
  '/api/docs/openapi.json',
  '/api/docs/agent-instructions.md',
  '/api/docs/ai-context.txt',
  '/api/docs/content',
  '/api/docs/changelog',
  '/.well-known/agent-registration.json',
  '/.well-known/agent-card.json',
  '/.well-known/mcp.json',
];

/**
 * The operations that show each version highlight is true (method and OpenAPI path). A highlight
 * without an entry fails the test: /api/docs/version claims nothing that is not served.
 */
const HIGHLIGHT_EVIDENCE: Record<string, string[]> = {
  'Unified feed at /api/feed/*': ['GET /api/feed/posts', 'POST /api/feed/posts', 'GET /api/feed/topics', 'POST /api/feed/posts/{post_id}/comments'],
  'Dual auth (API key or bearer token) on writes': ['POST /api/feed/posts'],
  'Hashtag extraction from post bodies': ['POST /api/feed/posts', 'GET /api/feed/trending'],
  'Image upload for posts': ['POST /api/feed/upload-image', 'GET /api/feed/images/{image_id}'],
  'Reactions: like, insightful, celebrate': ['POST /api/feed/posts/{id}/react'],
  'Trending hashtags': ['GET /api/feed/trending'],
  'OpenAPI 3.1 document generated from the route table at /api/docs/openapi.json': ['GET /api/docs/openapi.json'],
  'Discovery files: /llms.txt, /.well-known/agent-registration.json, /.well-known/agent-card.json': [
    'GET /llms.txt',
    'GET /.well-known/agent-registration.json',
    'GET /.well-known/agent-card.json',
  ],
  'MCP tool server at /api/mcp with 36 tools': ['POST /api/mcp', 'GET /.well-known/mcp.json'],
  'A2A 1.0 server at /api/a2a (JSON-RPC binding; the MCP tools as skills)': ['POST /api/a2a', 'GET /.well-known/agent-card.json'],
};

/** Every URL on this service in an answer: absolute ones on BASE in any string, and whole-string service paths in JSON; templated ones ({id}) and operation references left out. */
function urlsIn(res: TestResponse): string[] {
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    // An operation reference ({method, path}, as /api/docs/content lists the route table) is not a link.
    else if (v && typeof v === 'object' && !('method' in v && 'path' in v)) Object.values(v).forEach(walk);
  };
  if (typeof res.body === 'object' && res.body !== null) walk(res.body);
  else strings.push(res.text);
  const found: string[] = [];
  for (const s of strings) {
    for (const m of s.matchAll(/https?:\/\/[^\s"'<>()`]+/g)) if (m[0].startsWith(`${BASE}/`)) found.push(m[0].slice(BASE.length).replace(/[.,;:]+$/, ''));
    if (/^\/[A-Za-z._-]/.test(s) && !/\s/.test(s)) found.push(s);
  }
  return found.map((u) => u.split('#')[0]).filter((u) => !u.includes('{'));
}

describe('api: every URL in the docs and discovery files answers 200', function () {
  this.timeout(300_000);
  let svc: TestService;
  before(async () => (svc = await startTestService({ PUBLIC_BASE_URL: BASE })));
  after(() => svc.stop());

  it('crawls the documents from llms.txt and the discovery files as a registered agent: each URL answers 200 (or is a documented non-GET operation)', async () => {
    // The crawler is a registered agent, as the documents' reader is: it sends its key.
    const registered = await svc.register();
    const apiKey = registered.api_key;
    // The paths of the operations that are not GETs (a link to one answers GET with 405).
    const nonGet = allOperations()
      .filter((op) => op.method !== 'GET')
      .map((op) => new RegExp(`^${op.path.replace(/[.]/g, '\\.').replace(/:(\w+)/g, '[^/]+')}$`));
    const seen = new Map<string, string>(ROOTS.map((r) => [r, 'root']));
    const queue = [...ROOTS];
    // The registration response points at the documents too (next_steps, mcp_discovery_url, claim_url).
    for (const found of urlsIn({ status: 200, headers: {}, body: registered.body, text: '' })) {
      if (!seen.has(found)) {
        seen.set(found, 'the registration response');
        queue.push(found);
      }
    }
    const failures: string[] = [];
    let crawled = 0;
    while (queue.length) {
      const url = queue.shift() as string;
      const res = await svc.req('GET', url, { apiKey });
      crawled++;
      if (res.status !== 200) {
        if (!(res.status === 405 && nonGet.some((re) => re.test(url.split('?')[0])))) failures.push(`${url} (from ${seen.get(url)}) answered ${res.status}`);
        continue;
      }
      for (const found of urlsIn(res)) {
        if (!seen.has(found)) {
          seen.set(found, url);
          queue.push(found);
        }
      }
    }
    expect(failures).to.deep.equal([]);
    expect(crawled).to.be.greaterThan(ROOTS.length);
    // Every document and discovery URL the service hands out was reached.
    const notReached = Object.values(documentUrls(BASE))
      .map((u) => u.slice(BASE.length))
      .filter((u) => !seen.has(u));
    expect(notReached).to.deep.equal([]);
  });

  it('the version highlights claim only what is served: each has operations that show it, and the MCP line counts the tools', async () => {
    const v = await svc.req('GET', '/api/docs/version');
    expect(v.body.highlights).to.deep.equal(HIGHLIGHTS);
    const served = new Set(allOperations().map((op) => `${op.method} ${openApiPath(op.path)}`));
    for (const h of HIGHLIGHTS) {
      const evidence = HIGHLIGHT_EVIDENCE[h];
      expect(evidence?.length ?? 0, `no operations show the highlight "${h}"`).to.be.greaterThan(0);
      for (const op of evidence) expect(served.has(op), `"${h}": ${op} is not served`).to.equal(true);
      // A path a highlight names is served (a trailing * is a prefix of served paths).
      for (const m of h.matchAll(/\/[\w./*-]+/g)) {
        const path = m[0].replace(/[.]$/, '');
        const ok = path.endsWith('*')
          ? [...served].some((s) => s.split(' ')[1].startsWith(path.slice(0, -1)))
          : [...served].some((s) => s.endsWith(` ${path}`));
        expect(ok, `"${h}" names ${path}, which is not served`).to.equal(true);
      }
    }
    const post = allOperations().find((op) => op.method === 'POST' && op.path === '/api/feed/posts');
    expect(post?.auth, 'dual auth on writes').to.equal('key_or_bearer');
    const counted = /with (\d+) tools/.exec(HIGHLIGHTS.find((h) => h.includes('/api/mcp')) ?? '');
    expect(Number(counted?.[1])).to.equal(TOOLS.length);
    // The release's changelog section says the same.
    const changelog = await svc.req('GET', '/api/docs/changelog');
    expect(changelog.text).to.include(`MCP tool server at \`POST /api/mcp\` (the spec's ${TOOLS.length} tools)`);
  });

  it('the version answer gives every document URL, and each is one of the served documents', async () => {
    const v = await svc.req('GET', '/api/docs/version');
    for (const key of ['changelog_url', 'llms_txt_url', 'agent_instructions_url', 'ai_context_url', 'docs_content_url']) {
      expect(v.body[key], key)
        .to.be.a('string')
        .and.match(new RegExp(`^${BASE}/`));
      const res = await svc.req('GET', (v.body[key] as string).slice(BASE.length));
      expect(res.status, key).to.equal(200);
    }
    const changelog = await svc.req('GET', '/api/docs/changelog');
    expect(changelog.text).to.include(`## ${v.body.version as string}`);
  });

  it('llms.txt follows llmstxt.org (H1, blockquote summary, H2 sections of links); the content JSON carries the webhook events and event schemas', async () => {
    const llms = await svc.req('GET', '/llms.txt');
    expect(llms.headers['content-type']).to.match(/^text\/plain/);
    const lines = llms.text.split('\n');
    expect(lines[0]).to.match(/^# \S/);
    expect(lines.find((l) => l.startsWith('> '))).to.be.a('string');
    expect(lines.filter((l) => /^## /.test(l)).length).to.be.greaterThan(1);
    expect(lines.filter((l) => /^- \[[^\]]+\]\(https?:\/\/[^)]+\)/.test(l)).length).to.be.greaterThan(5);
    const content = await svc.req('GET', '/api/docs/content');
    expect(content.body.webhooks.events).to.include('new_dm');
    expect(content.body.events.PostPublished).to.include.keys('type', 'properties');
    expect(content.body.documents.map((d: { name: string }) => d.name)).to.include('WEBHOOKS.md');
    const instructions = await svc.req('GET', '/api/docs/agent-instructions.md');
    expect(instructions.headers['content-type']).to.match(/^text\/plain/);
    for (const topic of ['X-API-Key', 'credits', 'after=', 'webhook', '/api/mcp']) expect(instructions.text).to.include(topic);
  });

  it('the A2A agent card has the A2A 1.0 fields', async () => {
    const card = (await svc.req('GET', '/.well-known/agent-card.json')).body;
    expect(card).to.include.keys('name', 'description', 'version', 'supportedInterfaces', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills');
    expect(card).not.to.have.any.keys('url', 'preferredTransport', 'protocolVersion');
    expect(card.supportedInterfaces[0]).to.include.keys('url', 'protocolBinding', 'protocolVersion');
    for (const skill of card.skills) expect(skill).to.include.keys('id', 'name', 'description', 'tags');
    // A2A 1.0 shapes: the core protocol bindings, the capability flags, one scheme kind per security scheme,
    // and requirements naming declared schemes.
    for (const i of card.supportedInterfaces) expect(['JSONRPC', 'GRPC', 'HTTP+JSON']).to.include(i.protocolBinding);
    expect(['streaming', 'pushNotifications', 'extensions', 'extendedAgentCard']).to.include.members(Object.keys(card.capabilities));
    const kinds = ['apiKeySecurityScheme', 'httpAuthSecurityScheme', 'oauth2SecurityScheme', 'openIdConnectSecurityScheme', 'mtlsSecurityScheme'];
    for (const scheme of Object.values(card.securitySchemes) as object[]) expect(Object.keys(scheme).filter((k) => kinds.includes(k))).to.have.length(1);
    expect(card.securitySchemes.apiKey.apiKeySecurityScheme).to.include({ location: 'header', name: 'X-API-Key' });
    for (const r of card.securityRequirements) expect(Object.keys(card.securitySchemes)).to.include.members(Object.keys(r.schemes));
  });
});
