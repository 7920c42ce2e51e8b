import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { pino } from 'pino';
import { JSON_LIMIT, bodyParser } from '../../api/app.ts';
import { renderError } from '../../api/errors.ts';

// The app parses the common JSON body itself and hands everything else to koa-body: every answer
// must be the one koa-body alone gives, errors included.
const logger = pino({ level: 'silent' });

function serve(parser: (ctx: Context, next: Next) => unknown): Promise<{ server: http.Server; port: number }> {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      renderError(ctx, err, logger);
    }
  });
  app.use(parser as Koa.Middleware);
  app.use((ctx) => {
    const body = (ctx.request as { body?: unknown }).body;
    ctx.body = { seen: body === undefined ? '<undefined>' : body };
  });
  const server = http.createServer(app.callback());
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })));
}

interface Raw {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in pieces with pauses, after the headers. */
  pieces?: number;
}

function send(port: number, raw: Raw): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = raw.body === undefined ? undefined : Buffer.isBuffer(raw.body) ? raw.body : Buffer.from(raw.body, 'utf8');
    const headers: Record<string, string> = { ...(raw.headers ?? {}) };
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'transfer-encoding' || h.toLowerCase() === 'content-length'))
      headers['content-length'] = String(body.length);
    const req = http.request({ host: '127.0.0.1', port, method: raw.method ?? 'POST', path: '/', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body !== undefined && raw.pieces && raw.pieces > 1) {
      const size = Math.ceil(body.length / raw.pieces);
      let at = 0;
      const next = () => {
        if (at >= body.length) return req.end();
        req.write(body.subarray(at, at + size));
        at += size;
        setTimeout(next, 5);
      };
      req.flushHeaders();
      setTimeout(next, 5);
    } else {
      if (body !== undefined) req.write(body);
      req.end();
    }
  });
}

const json = { 'content-type': 'application/json' };
const big = (n: number) => JSON.stringify({ pad: 'x'.repeat(n - 10) }); // exactly n bytes

const CASES: Array<[string, Raw]> = [
  ['an object', { headers: json, body: '{"title":"T","n":1,"nested":{"a":[1,2,{"b":null}]}}' }],
  ['an array', { headers: json, body: '[1,"two",{"three":3}]' }],
  ['leading whitespace', { headers: json, body: ' \n\t{"a":1}' }],
  ['an empty body', { headers: json, body: '' }],
  ['a byte order mark', { headers: json, body: '\uFEFF{"a":1}' }],
  ['unicode', { headers: json, body: '{"t":"héllo ✓ 😀","k":"\\u00e9"}' }],
  ['malformed JSON', { headers: json, body: '{"a":' }],
  ['trailing garbage', { headers: json, body: '{"a":1} x' }],
  ['a string', { headers: json, body: '"just a string"' }],
  ['a number', { headers: json, body: '42' }],
  ['null', { headers: json, body: 'null' }],
  ['a __proto__ key', { headers: json, body: '{"__proto__":{"admin":true}}' }],
  ['a nested __proto__ key', { headers: json, body: '{"a":[{"__proto__":{"x":1}}]}' }],
  ['an escaped __proto__ key', { headers: json, body: '{"\\u005f_proto__":{"x":1}}' }],
  ['a __proto__ value', { headers: json, body: '{"a":"__proto__"}' }],
  ['a charset', { headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"a":1}' }],
  ['an upper-case type', { headers: { 'content-type': 'Application/JSON' }, body: '{"a":1}' }],
  ['a JSON subtype', { headers: { 'content-type': 'application/vnd.api+json' }, body: '{"a":1}' }],
  ['another charset', { headers: { 'content-type': 'application/json; charset=latin1' }, body: '{"a":1}' }],
  ['text/plain', { headers: { 'content-type': 'text/plain' }, body: '{"a":1}' }],
  ['no content type', { body: '{"a":1}' }],
  ['the limit exactly', { headers: json, body: big(64 * 1024) }],
  ['one byte over the limit', { headers: json, body: big(64 * 1024 + 1) }],
  ['a chunked body', { headers: { ...json, 'transfer-encoding': 'chunked' }, body: '{"a":1}' }],
  ['a gzip body', { headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync('{"a":1}') }],
  ['a body sent in pieces', { headers: json, body: JSON.stringify({ t: 'y'.repeat(5000) }), pieces: 4 }],
  ['malformed JSON sent in pieces', { headers: json, body: `{"t":"${'y'.repeat(5000)}`, pieces: 3 }],
  ['DELETE with a body', { method: 'DELETE', headers: json, body: '{"a":1}' }],
  ['PATCH with a body', { method: 'PATCH', headers: json, body: '{"a":1}' }],
  ['GET with a body', { method: 'GET', headers: json, body: '{"a":1}' }],
  ['POST without a body', { headers: json }],
];

describe('api: JSON body parsing', () => {
  let ours: { server: http.Server; port: number };
  let reference: { server: http.Server; port: number };
  before(async () => {
    ours = await serve(bodyParser());
    reference = await serve(
      koaBody({
        jsonLimit: JSON_LIMIT,
        jsonStrict: true,
        multipart: false,
        urlencoded: false,
        text: false,
        parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
      }) as unknown as (ctx: Context, next: Next) => unknown,
    );
  });
  after(() => {
    ours.server.close();
    reference.server.close();
  });

  for (const [name, raw] of CASES) {
    it(`answers ${name} exactly as koa-body does`, async () => {
      const [a, b] = [await send(ours.port, raw), await send(reference.port, raw)];
      expect(a).to.deep.equal(b);
    });
  }

  it('gives the documented answers for malformed, scalar, oversized and poisoned bodies', async () => {
    expect(await send(ours.port, { headers: json, body: '{"a":' })).to.deep.equal({
      status: 400,
      body: JSON.stringify({ detail: 'Malformed JSON body', code: 'invalid_json' }),
    });
    expect((await send(ours.port, { headers: json, body: '42' })).status).to.equal(400);
    expect((await send(ours.port, { headers: json, body: big(64 * 1024 + 1) })).status).to.equal(413);
    expect((await send(ours.port, { headers: json, body: '{"__proto__":{"admin":true}}' })).status).to.equal(400);
  });
});
