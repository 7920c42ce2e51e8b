import { expect } from 'chai';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import { ORPHAN_RESERVATION_MS } from '../../../commands/agents/owner-email.ts';
import { registerAgent } from '../../../commands/agents/register.ts';
import type { RegistrationInput } from '../../../commands/agents/register.ts';
import { SecretBox } from '../../../commands/agents/secrets.ts';
import type { CommandBus, CommandContext } from '../../../commands/handler.ts';
import { agentStream, ownerEmailStream } from '../../../events/agents.ts';
import type { ManualClock } from '../../../events/kernel/clock.ts';
import type { DomainError } from '../../../events/kernel/errors.ts';
import type { SqliteEventLog } from '../../../events/store/sqlite.ts';
import { closeCommandBus, openCommandBus } from '../../helpers/commands.ts';
import { ownerEmailReserved } from './fixtures.ts';

const TARGET = { resolver: async () => [{ address: '93.184.216.34', family: 4 }], allowLoopback: false };

describe('commands: registerAgent (owner e-mail reservation, then the agent)', () => {
  let dir: string;
  let log: SqliteEventLog;
  let bus: CommandBus;
  let clock: ManualClock;
  let n = 0;
  const secrets = new SecretBox('a-server-secret-of-sufficient-length-000');
  const ctx = (commandId = `register-${++n}`): CommandContext => ({ commandId, actor: null, requestId: null, now: clock.now() });
  const input = (over: Partial<RegistrationInput> = {}): RegistrationInput => ({
    name: 'Agent',
    capabilities: ['lead-gen'],
    owner_name: 'Owner',
    owner_email: 'owner@example.com',
    ...over,
  });
  const emailStream = ownerEmailStream(secrets.hash('owner-email:owner@example.com'));
  const refusal = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (err) {
      return [(err as DomainError).status, (err as DomainError).code];
    }
    return expect.fail('expected a refusal');
  };

  beforeEach(() => ({ dir, log, clock, bus } = openCommandBus('register-commands-')));
  afterEach(() => closeCommandBus(log, dir));

  it('reserves the e-mail, writes the agent with cycle 0, and answers with the secrets its events store as hashes', async () => {
    const reg = await registerAgent(bus, secrets, input({ owner_email: 'Owner+news@Example.com' }), TARGET, ctx());
    expect(reg).to.include({ name: 'Agent', tier: 'free', monthly_credits_mc: 50_000 });
    const { state } = await bus.load(agentStream(reg.agent_id), agentAggregate);
    expect(state).to.include({ exists: true, owner_email: 'owner@example.com', api_key_hash: secrets.hash(reg.api_key), balance_mc: 50_000 });
    expect((await log.readStream(emailStream)).map((e) => e.data)).to.deep.equal([
      { email_hash: secrets.hash('owner-email:owner@example.com'), agent_id: reg.agent_id, reserved_at: clock.now().toISOString() },
    ]);
  });

  it('refuses a second agent for the same normalised e-mail with 409 owner_email_taken', async () => {
    await registerAgent(bus, secrets, input(), TARGET, ctx());
    expect(await refusal(() => registerAgent(bus, secrets, input({ owner_email: 'OWNER@example.com' }), TARGET, ctx()))).to.deep.equal([
      409,
      'owner_email_taken',
    ]);
  });

  it('refuses a retried registration (same command id) with 409 already_registered: its secrets were shown once', async () => {
    const c = ctx();
    await registerAgent(bus, secrets, input(), TARGET, c);
    expect(await refusal(() => registerAgent(bus, secrets, input(), TARGET, c))).to.deep.equal([409, 'already_registered']);
  });

  it('takes over a reservation whose agent was never written once it is older than a minute', async () => {
    const orphan = ownerEmailReserved({ email_hash: secrets.hash('owner-email:owner@example.com'), reserved_at: clock.now().toISOString() });
    await bus.appendRaw(emailStream, [orphan], 'no_stream', ctx());
    clock.advance(ORPHAN_RESERVATION_MS);
    expect(await refusal(() => registerAgent(bus, secrets, input(), TARGET, ctx()))).to.deep.equal([409, 'owner_email_taken']);
    clock.advance(1);
    const reg = await registerAgent(bus, secrets, input(), TARGET, ctx());
    expect((await log.readStream(emailStream)).map((e) => e.data)).to.deep.equal([
      orphan.data,
      { email_hash: orphan.data.email_hash, agent_id: reg.agent_id, reserved_at: clock.now().toISOString() },
    ]);
  });

  it('refuses an invalid registration with 422 before reserving its e-mail', async () => {
    expect(await refusal(() => registerAgent(bus, secrets, input({ name: ' ' }), TARGET, ctx()))).to.deep.equal([422, 'validation_failed']);
    expect(await log.readStream(emailStream)).to.deep.equal([]);
  });
});
