import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../api/config.ts';
import { startService } from '../../api/server.ts';
import type { RunningService } from '../../api/server.ts';
import { ManualClock } from '../../events/kernel/clock.ts';
import type { ServerProcess } from './process.ts';
import { bootServerProcess } from './process.ts';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  // Untyped JSON, as the client of an HTTP API sees it: each test reads the fields it asserts.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  apiKey?: string;
  agent?: http.Agent;
  /** Skip the check of the answer against the documented operation (checkAnswers). */
  unchecked?: boolean;
}

/**
 * Every request made through a test service and its answer are checked against the served OpenAPI
 * document (test/helpers/openapi-validator.ts): an answer the document does not allow, a request
 * the server took that the document does not allow, or a request the document allows that the
 * server refused as invalid fails the request. CHECK_RESPONSES=0 turns the check off; `unchecked`
 * skips it for one request.
 */
const CHECK_ANSWERS = process.env.CHECK_RESPONSES !== '0';

/** The request body as the document sees it: the JSON sent, or the raw text. */
function sentBody(opts: RequestOptions): unknown {
  if (opts.body !== undefined) return opts.body;
  if (opts.rawBody === undefined) return undefined;
  const text = opts.rawBody.toString();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

async function checked(method: string, path: string, opts: RequestOptions, res: TestResponse): Promise<TestResponse> {
  if (!CHECK_ANSWERS || opts.unchecked || method === 'HEAD') return res;
  const { mismatch } = await import('./openapi-validator.ts');
  const contentType = Object.entries(opts.headers ?? {}).find(([h]) => h.toLowerCase() === 'content-type')?.[1];
  const problem = mismatch({
    method,
    path,
    requestContentType: contentType ?? (opts.body !== undefined || opts.rawBody !== undefined ? 'application/json' : ''),
    requestBody: sentBody(opts),
    status: res.status,
    contentType: String(res.headers['content-type'] ?? ''),
    body: res.body,
  });
  if (problem) throw new Error(`OpenAPI mismatch: ${problem}`);
  return res;
}

/**
 * A request to a service, its answer checked against the route table like `svc.req` (a mismatch
 * throws): for services this helper did not start (child processes) and requests with their own
 * agent or raw body. `{unchecked: true}` skips the check for one request.
 */
export async function request(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> {
  return checked(method, path, opts, await rawRequest(baseUrl, method, path, opts));
}

/** A request whose answer is not checked: for tests that check answers themselves (the property test) and benchmarks. */
export function rawRequest(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> {
  const url = new URL(path, baseUrl);
  const payload = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: opts.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        if ((res.headers['content-type'] ?? '').includes('json')) {
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export interface TestService {
  url: string;
  clock: ManualClock;
  running: RunningService;
  dataDir: string;
  /** With split roles: the projector child process the in-process api (ROLE=api) reads from. */
  projector: ServerProcess | null;
  req(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
  register(overrides?: Record<string, unknown>): Promise<{ agent_id: string; api_key: string; body: TestResponse['body'] }>;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

let counter = 0;

/**
 * TEST_ROLES=split runs every test service in roles on one data directory: a projector child
 * process (ROLE=projector), and in this process the service under test with ROLE=api, reading the
 * projector's read models over its socket, plus (unless `workers: false`) a ROLE=worker service on
 * the same clock whose workers are `running.workers` (see README "Process roles").
 */
const SPLIT_ROLES = process.env.TEST_ROLES === 'split';

/** A real service on an ephemeral port with its own data directory and a manual clock. */
export async function startTestService(
  env: Record<string, string> = {},
  opts: { clock?: ManualClock; dataDir?: string; workers?: boolean; split?: boolean } = {},
): Promise<TestService> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'agent-network-test-'));
  const clock = opts.clock ?? new ManualClock('2026-03-10T09:30:00.000Z');
  const settings = { RATE_LIMIT_SCALE: '1000', SECRET_KEY: 'test-secret-key-0123456789-abcdefghijklmnop', ...env };
  const split = opts.split ?? SPLIT_ROLES;
  const projector = split ? await bootServerProcess(dataDir, { ...settings, ROLE: 'projector' }) : null;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...settings,
    ...(split ? { ROLE: 'api' } : {}),
  });
  let running: RunningService;
  try {
    const api = await startService(config, { clock, logger: pino({ level: 'silent' }), workers: opts.workers });
    running = api;
    if (split && opts.workers !== false) {
      // The jobs run in a ROLE=worker service beside the api (in this process, on the same clock).
      let worker: RunningService;
      try {
        worker = await startService({ ...config, role: 'worker' }, { clock, logger: pino({ level: 'silent' }) });
      } catch (err) {
        await api.stop();
        throw err;
      }
      running = {
        ...api,
        workers: worker.workers,
        async stop() {
          await api.stop();
          await worker.stop();
        },
      };
    }
  } catch (err) {
    await projector?.stop('SIGKILL');
    throw err;
  }
  const svc: TestService = {
    url: running.url,
    clock,
    running,
    dataDir,
    projector,
    req: (method, path, o = {}) => request(running.url, method, path, o),
    async register(overrides = {}) {
      counter++;
      const body = {
        name: `Agent ${counter}`,
        capabilities: ['lead-gen'],
        owner_name: 'Owner',
        owner_email: `owner${counter}.${process.pid}.${Date.now()}@example.com`,
        ...overrides,
      };
      const res = await svc.req('POST', '/api/protocol/register', { body });
      if (res.status !== 200) throw new Error(`register failed: ${res.status} ${res.text}`);
      return { agent_id: res.body.agent_id, api_key: res.body.api_key, body: res.body };
    },
    async stop(o = {}) {
      await running.stop();
      await projector?.stop('SIGTERM');
      if (!o.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return svc;
}

/** A test service whose mail goes to files in a fresh outbox folder (see test/helpers/mail.ts). */
export async function startWithOutbox(env: Record<string, string> = {}): Promise<{ svc: TestService; outbox: string }> {
  const outbox = mkdtempSync(join(tmpdir(), 'agent-network-outbox-'));
  return { svc: await startTestService({ MAIL_OUTBOX_DIR: outbox, ...env }), outbox };
}

/** Stops a service started by startWithOutbox and removes its outbox. */
export async function stopWithOutbox(svc: TestService | undefined, outbox: string | undefined): Promise<void> {
  await svc?.stop();
  if (outbox) rmSync(outbox, { recursive: true, force: true });
}
