import { expect } from 'chai';
import { allOperations } from '../../api/app.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';

const BASE = 'https://docs.example.com';

/**
 * Served by the MCP server (issue 19, item 3), built on another branch: until it is merged these
 * answer 404 here, and they are the only URLs the crawl lets through.
 */
const PENDING_MCP = new Set(['/api/mcp', '/.well-known/mcp.json']);

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
];

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
    const { api_key: apiKey } = await svc.register();
    const nonGet = new Set(
      allOperations()
        .filter((op) => op.method !== 'GET')
        .map((op) => op.path),
    );
    const seen = new Map<string, string>(ROOTS.map((r) => [r, 'root']));
    const queue = [...ROOTS];
    const failures: string[] = [];
    let crawled = 0;
    while (queue.length) {
      const url = queue.shift() as string;
      if (PENDING_MCP.has(url)) continue;
      const res = await svc.req('GET', url, { apiKey });
      crawled++;
      if (res.status !== 200) {
        if (!(res.status === 405 && nonGet.has(url.split('?')[0]))) failures.push(`${url} (from ${seen.get(url)}) answered ${res.status}`);
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
  });
});
