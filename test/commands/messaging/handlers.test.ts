import { expect } from 'chai';
import { SecretBox } from '../../../commands/agents/secrets.ts';
import type { CommandBus, CommandContext } from '../../../commands/handler.ts';
import { sendA2A } from '../../../commands/messaging/a2a.ts';
import { setBlock } from '../../../commands/messaging/blocks.ts';
import { sendDm } from '../../../commands/messaging/dm.ts';
import { createThread } from '../../../commands/messaging/mesh.ts';
import { ensurePassport, verifySignature, a2aSignedDocument } from '../../../commands/messaging/passport.ts';
import { agentStream } from '../../../events/agents.ts';
import type { DomainEvent } from '../../../events/catalogue.ts';
import { passportStream } from '../../../events/messaging.ts';
import type { SqliteEventLog } from '../../../events/store/sqlite.ts';
import { closeCommandBus, openCommandBus } from '../../helpers/commands.ts';
import { MEMBER, NOW, RECIPIENT, SENDER, THIRD, agentClaimed, at, funded } from './fixtures.ts';

// The async handlers against a real bus: they load the facts a decider needs (the recipient's
// stream, a lookup the caller passes) before deciding, and answer from the decided events.
describe('commands: messaging handlers (real bus)', () => {
  let dir: string;
  let log: SqliteEventLog;
  let bus: CommandBus;
  let seq = 0;
  const secrets = new SecretBox('a-server-secret-of-sufficient-length-000');
  const ctx = (actor = SENDER): CommandContext => ({ commandId: `cmd-${++seq}`, actor, requestId: null, now: NOW });
  const seed = (agentId: string, events: DomainEvent[]) => bus.appendRaw(agentStream(agentId), events, 'no_stream', ctx('system'));
  const refusal = async (run: Promise<unknown>) => {
    try {
      await run;
    } catch (err) {
      return err as { code?: string; status?: number };
    }
    throw new Error('expected a refusal');
  };
  const dm = { target: { to_agent_id: RECIPIENT }, message: 'Hello', daily_cap: 50, pair_cap: 3 };

  beforeEach(() => ({ dir, log, bus } = openCommandBus('messaging-handlers-')));
  afterEach(() => closeCommandBus(log, dir));

  it("decides the first-hour lock on the sender's own AgentClaimed, with no read model involved", async () => {
    await seed(SENDER, [...funded(SENDER, 50_000, at(9).toISOString()), agentClaimed()]);
    await seed(RECIPIENT, funded(RECIPIENT));
    const { dm: sent } = await sendDm(bus, SENDER, dm, ctx());
    expect(sent).to.include({ from_agent_id: SENDER, to_agent_id: RECIPIENT, owner_user_id: null });
    await seed(THIRD, funded(THIRD, 50_000, at(9).toISOString()));
    expect(await refusal(sendDm(bus, THIRD, dm, ctx(THIRD)))).to.include({ code: 'dm_locked', status: 403 });
  });

  it("reads the recipient's block from the recipient's stream and appends nothing for a refused DM", async () => {
    await seed(SENDER, funded());
    await seed(RECIPIENT, funded(RECIPIENT));
    await setBlock(bus, RECIPIENT, SENDER, true, ctx(RECIPIENT));
    expect(await refusal(sendDm(bus, SENDER, dm, ctx()))).to.include({ code: 'message_not_delivered', status: 403 });
    expect(await log.readStream(agentStream(SENDER))).to.have.length(2);
    await setBlock(bus, RECIPIENT, SENDER, false, ctx(RECIPIENT));
    const { dm: sent } = await sendDm(bus, SENDER, dm, ctx());
    expect(sent.charge).to.deep.equal({ action: 'dm', amount_mc: 250, balance_after_mc: 49_750 });
  });

  it('asks the lookup whether a member exists before a DM by user id', async () => {
    await seed(SENDER, funded());
    const asked: string[] = [];
    const exists = (answer: boolean) => async (userId: string) => (asked.push(userId), answer);
    const toMember = { ...dm, target: { to_user_id: MEMBER } };
    expect(await refusal(sendDm(bus, SENDER, toMember, ctx(), exists(false)))).to.include({ code: 'user_not_found', status: 404 });
    const { dm: sent } = await sendDm(bus, SENDER, toMember, ctx(), exists(true));
    expect(sent).to.include({ to_agent_id: null, to_user_id: MEMBER });
    expect(asked).to.deep.equal([MEMBER, MEMBER]);
    expect(await refusal(sendDm(bus, SENDER, toMember, ctx()))).to.be.instanceOf(Error);
  });

  it('issues no passport key for a signed A2A message that is refused, and signs a delivered one', async () => {
    await seed(SENDER, funded());
    await seed(RECIPIENT, funded(RECIPIENT));
    await setBlock(bus, RECIPIENT, SENDER, true, ctx(RECIPIENT));
    const signed = { to_agent_id: RECIPIENT, intent: 'deal_offer' as const, payload: { offer: 'pilot' }, sign: true };
    expect(await refusal(sendA2A(bus, secrets, SENDER, signed, ctx()))).to.include({ code: 'message_not_delivered' });
    expect(await log.readStream(passportStream(SENDER))).to.deep.equal([]);
    await setBlock(bus, RECIPIENT, SENDER, false, ctx(RECIPIENT));
    const { message } = await sendA2A(bus, secrets, SENDER, signed, ctx());
    const passport = await ensurePassport(bus, secrets, SENDER, NOW);
    expect(message.signature?.key_id).to.equal(passport.current?.key_id);
    const signature = message.signature;
    if (!signature) throw new Error('expected a signature');
    expect(verifySignature(signature.public_key, a2aSignedDocument({ ...message, signed_at: signature.signed_at }), signature.value)).to.equal(true);
  });

  it('issues one passport key on first use and returns the stored key afterwards', async () => {
    const first = await ensurePassport(bus, secrets, SENDER, NOW);
    const again = await ensurePassport(bus, secrets, SENDER, at(10));
    expect(again).to.deep.equal(first);
    const stored = await log.readStream(passportStream(SENDER));
    expect(stored).to.have.length(1);
    expect(stored[0].data).to.include({ key_id: first.current?.key_id, public_key: first.current?.public_key });
  });

  it('loads every invitee before creating a thread, and creates nothing when one does not exist', async () => {
    await seed(SENDER, funded());
    await seed(RECIPIENT, funded(RECIPIENT));
    const input = { participant_agent_ids: [RECIPIENT, THIRD], name: null, first_message: 'Welcome', hourly_cap: 10, daily_cap: 20 };
    expect(await refusal(createThread(bus, SENDER, input, ctx()))).to.include({ code: 'agent_not_found', status: 404 });
    expect(await log.readStream(agentStream(SENDER))).to.have.length(2);
    await seed(THIRD, funded(THIRD));
    const { thread } = await createThread(bus, SENDER, input, ctx());
    expect(thread.participant_agent_ids).to.deep.equal([SENDER, RECIPIENT, THIRD]);
  });
});
