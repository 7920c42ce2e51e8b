// The Agenda backend contract on @agendajs/mongo-backend, against the MongoDB at MONGODB_URL.
// Each fixture uses its own fresh database, dropped afterwards. Without MONGODB_URL nothing
// connects and one pending test says so.

import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Job } from 'agenda';
import { createAgenda, stopAgenda } from '../../workers/agenda.ts';
import { agendaBackendContract } from './agenda-backend.contract.ts';

const url = process.env.MONGODB_URL;

/** The same server address with another database name (keeping the auth database of the original). */
function withDatabase(address: string, db: string): string {
  const q = address.indexOf('?');
  const base = q === -1 ? address : address.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : address.slice(q + 1));
  const hostStart = base.indexOf('://') + 3;
  const slash = base.indexOf('/', hostStart);
  const hosts = slash === -1 ? base : base.slice(0, slash);
  const originalDb = slash === -1 ? '' : base.slice(slash + 1);
  if (hosts.slice(hostStart).includes('@') && !params.has('authSource')) params.set('authSource', originalDb || 'admin');
  const query = params.toString();
  return `${hosts}/${db}${query ? `?${query}` : ''}`;
}

async function dropDatabase(address: string): Promise<void> {
  const client = await MongoClient.connect(address);
  try {
    await client.db().dropDatabase();
  } finally {
    await client.close();
  }
}

if (!url) {
  describe('Agenda backend contract: MongoDB', function () {
    it('runs only against a real MongoDB: set MONGODB_URL (e.g. mongodb://localhost:27017) to run it');
  });
} else {
  const run = `${Date.now().toString(36)}_${process.pid}`;
  let counter = 0;

  agendaBackendContract('MongoDB', async () => {
    const address = withDatabase(url, `agenda_contract_${run}_${counter++}`);
    const backend = new MongoBackend({ address, collection: 'agendaJobs' });
    return {
      backend,
      open: () => new MongoBackend({ address, collection: 'agendaJobs' }),
      cleanup: async () => {
        await backend.disconnect();
        await dropDatabase(address);
      },
    };
  });

  describe('createAgenda on MongoDB', function () {
    this.timeout(300_000);
    let address: string;
    beforeEach(function () {
      address = withDatabase(url, `agenda_create_${run}_${counter++}`);
    });
    afterEach(async function () {
      await dropDatabase(address);
    });

    it('runs jobs on the agendaJobs collection and stops cleanly', async function () {
      const agenda = await createAgenda({ mongodbUrl: address, processEvery: 50, name: 'mongo-worker' });
      const seen: unknown[] = [];
      agenda.define('hello', async (job: Job) => {
        seen.push(job.attrs.data);
      });
      await agenda.start();
      const done = new Promise<void>((resolve) => agenda.once('complete:hello', () => resolve()));
      await agenda.now('hello', { who: 'mongo' });
      await done;
      expect(seen).to.deep.equal([{ who: 'mongo' }]);
      expect(await stopAgenda(agenda)).to.deep.equal({ running: 0, timedOut: false });

      const client = await MongoClient.connect(address);
      try {
        const docs = await client.db().collection('agendaJobs').find({ name: 'hello' }).toArray();
        expect(docs).to.have.length(1);
        expect(docs[0].lastFinishedAt).to.be.instanceOf(Date);
      } finally {
        await client.close();
      }
    });
  });
}
