import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { EventMetadata, NewEvent, RecordedEvent } from '../../events/store/port.ts';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { UPCASTERS, schemaVersionOf, upcast } from '../../events/upcasters.ts';

const metadata = (schema_version: number): EventMetadata => ({
  actor: null,
  request_id: null,
  correlation_id: null,
  causation_id: null,
  occurred_at: '2026-03-10T09:30:00.000Z',
  schema_version,
});

/** DirectMessageSent data as schema version 1 wrote it: `owner_user_id` only on an owner's reply. */
function dmV1(ownerUserId?: string): Record<string, unknown> {
  return {
    dm_id: 'dm_1',
    agent_id: 'agt_a',
    from_agent_id: 'agt_a',
    from_agent_name: 'A',
    to_agent_id: 'agt_b',
    to_user_id: null,
    to_email: null,
    message: 'hello',
    sent_at: '2026-03-10T09:30:00.000Z',
    charge: { action: ownerUserId ? 'owner_dm_reply' : 'dm', amount_mc: 250, balance_after_mc: 9750 },
    ...(ownerUserId ? { owner_user_id: ownerUserId } : {}),
  };
}

const recorded = (type: string, data: unknown, schemaVersion: number): RecordedEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: metadata(schemaVersion),
  stream: 'agent-agt_a',
  revision: 0,
  position: 1,
});

describe('events/upcasters', () => {
  it('writes DirectMessageSent with schema version 2 and every other type with 1', () => {
    expect(schemaVersionOf('DirectMessageSent')).to.equal(2);
    expect(schemaVersionOf('PostPublished')).to.equal(1);
    expect(schemaVersionOf('NoSuchEvent')).to.equal(1);
  });

  it('reads a version 1 RoomPostPinned / RoomPostUnpinned (an agent pinned by API key) back with user_id null', () => {
    const pinned = { room_slug: 'lead-gen', post_id: 'pst_1', agent_id: 'agt_a', post_author_id: 'agt_b', pinned_at: '2026-03-10T09:30:00.000Z' };
    expect(schemaVersionOf('RoomPostPinned')).to.equal(2);
    expect(upcast(recorded('RoomPostPinned', pinned, 1)).data).to.deep.equal({ ...pinned, user_id: null });
    const unpinned = { room_slug: 'lead-gen', post_id: 'pst_1', agent_id: 'agt_a', unpinned_at: '2026-03-10T09:30:00.000Z' };
    expect(upcast(recorded('RoomPostUnpinned', unpinned, 1)).data).to.deep.equal({ ...unpinned, user_id: null });
  });

  it('has one step per older version in every upcaster', () => {
    for (const [type, upcaster] of Object.entries(UPCASTERS)) expect(upcaster.up, type).to.have.length(upcaster.version - 1);
  });

  it('reads a version 1 DirectMessageSent without owner_user_id back with null and schema version 2', () => {
    const event = recorded('DirectMessageSent', dmV1(), 1);
    const up = upcast(event);
    expect(up.data).to.deep.equal({ ...dmV1(), owner_user_id: null });
    expect(up.metadata).to.deep.equal(metadata(2));
    expect(up).to.include({ id: event.id, type: event.type, stream: event.stream, revision: 0, position: 1 });
    expect(event.data, 'the stored event is left as it was').to.not.have.property('owner_user_id');
    expect(event.metadata.schema_version).to.equal(1);
  });

  it("keeps a version 1 owner's reply's owner_user_id", () => {
    const up = upcast(recorded('DirectMessageSent', dmV1('usr_owner'), 1));
    expect(up.data).to.deep.equal(dmV1('usr_owner'));
    expect((up.data as Record<string, unknown>).owner_user_id).to.equal('usr_owner');
    expect(up.metadata.schema_version).to.equal(2);
  });

  it('returns a current DirectMessageSent and every other event as the same object', () => {
    const current = recorded('DirectMessageSent', { ...dmV1(), owner_user_id: null }, 2);
    expect(upcast(current)).to.equal(current);
    for (const type of ['PostPublished', 'AgentRegistered', 'UnknownType', 'constructor', '__proto__']) {
      const event = recorded(type, { any: 'thing' }, 1);
      expect(upcast(event), type).to.equal(event);
    }
  });

  describe('through the SQLite event log', () => {
    let dir: string;
    let log: SqliteEventLog;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'upcasters-test-'));
      log = SqliteEventLog.open({ path: join(dir, 'events.db') });
    });
    after(async () => {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('upcasts version 1 events on every read and leaves version 2 ones as written', async () => {
      const appended: NewEvent[] = [
        { id: randomUUID(), type: 'DirectMessageSent', data: dmV1(), metadata: metadata(1) },
        { id: randomUUID(), type: 'DirectMessageSent', data: dmV1('usr_owner'), metadata: metadata(1) },
        { id: randomUUID(), type: 'DirectMessageSent', data: { ...dmV1(), dm_id: 'dm_3', owner_user_id: null }, metadata: metadata(2) },
      ];
      await log.append('agent-agt_a', appended, 'no_stream');
      for (const events of [await log.readStream('agent-agt_a'), await log.readAll({ after: 0 })]) {
        expect(events.map((e) => (e.data as Record<string, unknown>).owner_user_id)).to.deep.equal([null, 'usr_owner', null]);
        expect(events.map((e) => e.metadata.schema_version)).to.deep.equal([2, 2, 2]);
      }
    });

    it('upcasts the events a live subscription delivers', async () => {
      const head = await log.headPosition();
      const received: RecordedEvent[] = [];
      let arrived: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (arrived = resolve));
      const sub = log.subscribeAll(head, (events) => {
        received.push(...events);
        if (received.length > 0) arrived();
      });
      try {
        await log.append('agent-agt_b', [{ id: randomUUID(), type: 'DirectMessageSent', data: dmV1(), metadata: metadata(1) }], 'no_stream');
        await done;
      } finally {
        await sub.close();
      }
      expect((received[0].data as Record<string, unknown>).owner_user_id).to.equal(null);
      expect(received[0].metadata.schema_version).to.equal(2);
    });
  });
});
