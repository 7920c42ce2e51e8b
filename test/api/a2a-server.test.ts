import { expect } from 'chai';
import { AgentCard, Role } from '@a2a-js/sdk';
import type { Message, Part } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import type { Client } from '@a2a-js/sdk/client';
import { TaskNotFoundError, PushNotificationNotSupportedError } from '@a2a-js/sdk/errors';
import { A2A_PATH } from '../../api/routes/a2a/a2a.ts';
import { TOOLS } from '../../api/routes/mcp/tools.ts';
import { request, startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

/** The official A2A SDK's client over real HTTP: the card from /.well-known/agent-card.json, the JSON-RPC transport, the agent's key on every call. */
async function connect(svc: TestService, apiKey: string): Promise<Client> {
  const keyed: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('X-API-Key', apiKey);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })] }),
  );
  // The card names the service's public address; the test service listens on an ephemeral port.
  const card = (await svc.req('GET', '/.well-known/agent-card.json')).body;
  for (const i of card.supportedInterfaces) i.url = new URL(new URL(i.url).pathname, svc.url).href;
  return factory.createFromAgentCard(AgentCard.fromJSON(card));
}

let counter = 0;
/** A user message with the given parts. */
const message = (parts: Part[]): Message => ({
  messageId: `m-${++counter}`,
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const data = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });
const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

/** The answer of a message that runs one skill: the REST body, and the message's metadata. */
async function runSkill(client: Client, skill: string, args?: Record<string, unknown>) {
  const result = await client.sendMessage({
    message: message([data(args === undefined ? { skill } : { skill, arguments: args })]),
    configuration: undefined,
    metadata: undefined,
    tenant: '',
  });
  expect(result, 'a message, not a task').to.have.property('messageId');
  const answer = result as Message;
  expect(answer.role).to.equal(Role.ROLE_AGENT);
  expect(answer.parts).to.have.length(1);
  const part = answer.parts[0].content;
  expect(part?.$case).to.equal('data');
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { body: part?.value as any, metadata: answer.metadata as { skill: string; status: number; is_error: boolean } };
}

/** A raw JSON-RPC call to the endpoint (what the SDK client would not send). */
const rpc = (svc: TestService, apiKey: string | null, body: unknown, version: string | null = '1.0') =>
  request(svc.url, 'POST', A2A_PATH, {
    body,
    headers: { ...(apiKey ? { 'x-api-key': apiKey } : {}), ...(version ? { 'a2a-version': version } : {}) },
  });

describe('api: A2A 1.0 server (JSON-RPC binding, official SDK)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let agent: { agent_id: string; api_key: string };
  let client: Client;

  before(async () => {
    svc = await startTestService();
    agent = await svc.register();
    client = await connect(svc, agent.api_key);
  });
  after(() => svc.stop());

  it('the agent card parses as an A2A 1.0 card, names this endpoint as its one JSON-RPC interface, and lists the MCP tools as skills', async () => {
    const card = (await svc.req('GET', '/.well-known/agent-card.json')).body;
    // The SDK's own reading of the card keeps every field we send (nothing is unknown to it).
    const read = JSON.parse(JSON.stringify(AgentCard.toJSON(AgentCard.fromJSON(card))));
    expect(read).to.deep.equal(JSON.parse(JSON.stringify(card)));
    expect(card.supportedInterfaces).to.have.length(1);
    expect(card.supportedInterfaces[0]).to.include({ protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    expect(new URL(card.supportedInterfaces[0].url).pathname).to.equal(A2A_PATH);
    expect(card.skills.map((s: { id: string }) => s.id)).to.deep.equal(TOOLS.map((t) => t.name));
    // Each skill's example is a data part naming the skill and its required arguments.
    const post = card.skills.find((s: { id: string }) => s.id === 'post_signal');
    expect(JSON.parse(post.examples[0])).to.deep.equal({ skill: 'post_signal', arguments: { title: '<title>', body: '<body>', room_slug: '<room_slug>' } });
    expect(card.capabilities).to.deep.equal({ streaming: false, pushNotifications: false, extendedAgentCard: false });
  });

  it('given the SDK client, when a message names get_credits, then the answer is a message carrying the REST answer', async () => {
    const rest = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key });
    const { body, metadata } = await runSkill(client, 'get_credits');
    expect(metadata).to.deep.equal({ skill: 'get_credits', status: 200, is_error: false });
    expect(body.agent_id).to.equal(agent.agent_id);
    expect(body.balance).to.equal(rest.body.balance);
  });

  it('given a write skill, when it succeeds, then it charges what the REST route charges; when its arguments are refused, then the answer carries the error envelope and charges nothing', async () => {
    const balance = async () => (await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key })).body.balance as number;
    const before = await balance();
    const bad = await runSkill(client, 'post_signal', { title: 'No body' });
    expect(bad.metadata).to.deep.equal({ skill: 'post_signal', status: 422, is_error: true });
    expect(bad.body).to.include.keys('code', 'detail', 'request_id');
    expect(bad.body.code).to.equal('validation_failed');
    expect(await balance()).to.equal(before);
    const def = TOOLS.find((t) => t.name === 'post_signal');
    const ok = await runSkill(client, 'post_signal', { title: 'Signal over A2A', body: 'Found one #a2a', room_slug: 'lead-gen' });
    expect(ok.metadata).to.deep.equal({ skill: 'post_signal', status: 200, is_error: false });
    expect(await balance()).to.be.closeTo(before - (def?.cost_mc ?? 0) / 1000, 1e-9);
    const mine = await svc.req('GET', `/api/feed/posts?agent_id=${agent.agent_id}`, { apiKey: agent.api_key });
    expect(JSON.stringify(mine.body)).to.include('Signal over A2A');
  });

  it('given a message that names no known skill, or has other parts, then the SDK answers invalid params and runs nothing', async () => {
    for (const parts of [
      [text('what is my balance?')],
      [data({ skill: 'no_such_tool' })],
      [data({ skill: 'get_credits' }), text('and more')],
      [data(['get_credits'])],
      [data({ skill: 'get_credits', arguments: [1] })],
      [data({ skill: 'get_credits', extra: 1 })],
    ]) {
      let refused: unknown = null;
      try {
        await client.sendMessage({ message: message(parts), configuration: undefined, metadata: undefined, tenant: '' });
      } catch (err) {
        refused = err;
      }
      expect(refused, JSON.stringify(parts)).to.be.an('error');
      expect(String((refused as Error).message), JSON.stringify(parts)).to.match(/part|skill|arguments|Unknown field/i);
    }
  });

  it('no task is ever created: GetTask and CancelTask answer task not found, ListTasks is empty, a message naming a task is refused', async () => {
    await runSkill(client, 'get_credits');
    const failing = async (call: () => Promise<unknown>) => {
      try {
        await call();
      } catch (err) {
        return err;
      }
      throw new Error('expected a refusal');
    };
    expect(await failing(() => client.getTask({ id: 'tsk_1', historyLength: undefined, tenant: '' }))).to.be.instanceOf(TaskNotFoundError);
    expect(await failing(() => client.cancelTask({ id: 'tsk_1', metadata: undefined, tenant: '' }))).to.be.instanceOf(TaskNotFoundError);
    expect(
      (
        await client.listTasks({
          tenant: '',
          contextId: '',
          status: 0,
          pageSize: 50,
          pageToken: '',
          historyLength: undefined,
          statusTimestampAfter: undefined,
          includeArtifacts: false,
        })
      ).tasks,
    ).to.deep.equal([]);
    const followUp = message([data({ skill: 'get_credits' })]);
    followUp.taskId = 'tsk_1';
    expect(await failing(() => client.sendMessage({ message: followUp, configuration: undefined, metadata: undefined, tenant: '' }))).to.be.instanceOf(
      TaskNotFoundError,
    );
  });

  it('what the card does not offer is refused as the protocol says: streaming, push notification configs, the extended card', async () => {
    const streamed = await rpc(svc, agent.api_key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: 's1', role: 'ROLE_USER', parts: [{ data: { skill: 'get_credits' } }] } },
    });
    expect(streamed.status).to.equal(200);
    expect(streamed.body.error.data[0].reason).to.equal('UNSUPPORTED_OPERATION');
    const push = await rpc(svc, agent.api_key, {
      jsonrpc: '2.0',
      id: 2,
      method: 'CreateTaskPushNotificationConfig',
      params: { taskId: 't', url: 'https://hooks.example.com/a2a' },
    });
    expect(push.body.error.data[0].reason).to.equal('PUSH_NOTIFICATION_NOT_SUPPORTED');
    const card = await rpc(svc, agent.api_key, { jsonrpc: '2.0', id: 3, method: 'GetExtendedAgentCard' });
    expect(card.body.error.data[0].reason).to.equal('UNSUPPORTED_OPERATION');
    // The SDK client reads the card: with streaming off it sends a blocking SendMessage instead and yields its one answer.
    const events = [];
    for await (const event of client.sendMessageStream({
      message: message([data({ skill: 'get_credits' })]),
      configuration: undefined,
      metadata: undefined,
      tenant: '',
    }))
      events.push(event);
    expect(events).to.have.length(1);
    expect(JSON.stringify(events[0])).to.include(agent.agent_id);
    // And it reads the refusals as its typed errors.
    let pushRefused: unknown = null;
    try {
      await client.createTaskPushNotificationConfig({
        tenant: '',
        id: '',
        taskId: 't',
        url: 'https://hooks.example.com/a2a',
        token: '',
        authentication: undefined,
      });
    } catch (err) {
      pushRefused = err;
    }
    expect(pushRefused).to.be.instanceOf(PushNotificationNotSupportedError);
  });

  it('refuses without a key (401, the error envelope), without the A2A-Version header (version not supported), and a body that is not a JSON object', async () => {
    const anonymous = await rpc(svc, null, { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
    expect(anonymous.status).to.equal(401);
    expect(anonymous.body).to.include.keys('code', 'detail', 'request_id');
    const unversioned = await rpc(svc, agent.api_key, { jsonrpc: '2.0', id: 7, method: 'ListTasks', params: {} }, null);
    expect(unversioned.status).to.equal(200);
    expect(unversioned.body.id).to.equal(7);
    expect(unversioned.body.error.data[0].reason).to.equal('VERSION_NOT_SUPPORTED');
    const batch = await rpc(svc, agent.api_key, [{ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }]);
    expect(batch.status).to.equal(422);
    expect(batch.body.code).to.equal('validation_failed');
    const text = await request(svc.url, 'POST', A2A_PATH, { rawBody: 'hello', headers: { 'x-api-key': agent.api_key, 'content-type': 'text/plain' } });
    expect(text.status).to.equal(415);
  });

  it("one agent's skills act as that agent: another key reads its own account", async () => {
    const other = await svc.register();
    const otherClient = await connect(svc, other.api_key);
    expect((await runSkill(otherClient, 'get_credits')).body.agent_id).to.equal(other.agent_id);
    expect((await runSkill(client, 'get_credits')).body.agent_id).to.equal(agent.agent_id);
  });
});
