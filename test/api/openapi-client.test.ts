import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * A client as an agent developer writes it from the served document: types generated with
 * openapi-typescript, calls made with openapi-fetch, compiled with `tsc --strict` and no casts,
 * then run against the service. Register, publish a post, page through the feed.
 */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function main(baseUrl: string, email: string): Promise<{ agentId: string; postId: string; titles: string[] }> {
  const client = createClient<paths>({ baseUrl });

  const registered = await client.POST('/api/protocol/register', {
    body: { name: 'Typed client', capabilities: ['lead-gen'], owner_name: 'Owner', owner_email: email },
  });
  if (!registered.data) throw new Error(\`register: \${registered.response.status} \${registered.error?.code}\`);
  const apiKey: string = registered.data.api_key;
  const agentId: string = registered.data.agent_id;

  const posted = await client.POST('/api/feed/posts', {
    headers: { 'X-API-Key': apiKey },
    body: { title: 'Hello from a typed client', body: 'Generated from the OpenAPI document #typed', post_type: 'signal_found' },
  });
  if (!posted.data) throw new Error(\`post: \${posted.response.status} \${posted.error?.code}\`);
  const postId: string = posted.data.post_id;

  // A dry run is not the write's answer: its own status, so data above needed no narrowing.
  const dry = await client.POST('/api/feed/posts', {
    headers: { 'X-API-Key': apiKey },
    params: { query: { dry_run: '1' } },
    body: { title: 'Dry', body: 'Not published', post_type: 'signal_found' },
  });
  if (dry.response.status !== 299) throw new Error(\`dry run: \${dry.response.status}\`);

  const titles: string[] = [];
  for (let page = 0; page < 100; page++) {
    const res = await client.GET('/api/feed/posts', { params: { query: { limit: 2, page } } });
    if (!res.data) throw new Error(\`feed: \${res.response.status} \${res.error?.code}\`);
    const items = res.data.items;
    titles.push(...items.map((p) => p.title));
    if (items.length === 0 || (page + 1) * res.data.limit >= res.data.total) break;
  }
  return { agentId, postId, titles };
}
`;

describe('a typed client generated from the served OpenAPI document (openapi-typescript + openapi-fetch)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let dir: string;
  before(async () => {
    svc = await startTestService();
    dir = mkdtempSync(join(tmpdir(), 'agent-network-client-'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });
  after(async () => {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates the types, compiles a client that registers, posts and pages the feed with tsc --strict and no casts, and runs it', async () => {
    const served = await svc.req('GET', '/api/docs/openapi.json');
    expect(served.status).to.equal(200);
    const ast = await openapiTS(served.body as Parameters<typeof openapiTS>[0]);
    writeFileSync(join(dir, 'schema.ts'), astToString(ast));
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    expect(CLIENT).to.not.match(/\bas\s+[A-Za-z{[]/);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          skipLibCheck: true,
        },
        files: ['client.ts'],
      }),
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    try {
      await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`tsc --strict failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
    }

    const client = (await import(join(dir, 'client.ts'))) as {
      main: (baseUrl: string, email: string) => Promise<{ agentId: string; postId: string; titles: string[] }>;
    };
    const out = await client.main(svc.url, `typed.${process.pid}@example.com`);
    expect(out.agentId).to.match(/^agt_/);
    expect(out.postId).to.be.a('string');
    expect(out.titles).to.include('Hello from a typed client');
    expect(out.titles).to.not.include('Dry');
  });
});
