import { expect } from 'chai';
import { StoreUnavailableError } from '../../../events/store/port.ts';
import { EventStoreDbEventLog } from '../../../events/store/eventstoredb.ts';
import { eventLogContract } from './contract.ts';

const url = process.env.EVENTSTORE_URL;

describe('events/store/eventstoredb', function () {
  if (url) {
    eventLogContract('EventStoreDbEventLog', async () => {
      const log = await EventStoreDbEventLog.connect(url);
      return { log, cleanup: () => log.close() };
    });
  } else {
    it('runs the EventLog contract against EventStoreDB only when EVENTSTORE_URL is set');
  }

  it('fails to connect to a server that is not there with StoreUnavailableError', async function () {
    // Port 1 on localhost refuses connections at once; nothing is sent anywhere else.
    const error = await EventStoreDbEventLog.connect('esdb://127.0.0.1:1?tls=false&defaultDeadline=3000').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(StoreUnavailableError);
    expect(error).to.have.property('code', 'store_unavailable');
  });
});
