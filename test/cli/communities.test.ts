import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../../api/config.ts';
import { closeServices, openServices } from '../../api/services.ts';
import { circlesOf, getCommunity } from '../../queries/communities/communities.ts';
import { startWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';

describe('cli: communities create / admin', () => {
  let dataDir: string;
  let outbox: string;
  let userId: string;
  const cli = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'api/cli.ts', ...args], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
    });

  before(async function () {
    this.timeout(300_000);
    const started = await startWithOutbox();
    ({ outbox } = started);
    dataDir = started.svc.dataDir;
    userId = (await signUp(started.svc, outbox)).user_id;
    await started.svc.stop({ keepData: true });
  });
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outbox, { recursive: true, force: true });
  });

  it('creates a community with its first circle and names a community admin', async function () {
    this.timeout(300_000);
    const created = await cli('communities', 'create', 'Operators', '--description', 'Ops people');
    const m = /community (cmy_\w+) created with circle (crc_\w+)/.exec(created.stdout);
    expect(m, created.stdout).to.not.equal(null);
    const [, communityId, circleId] = m ?? [];
    const named = await cli('communities', 'admin', communityId, userId);
    expect(named.stdout).to.contain(`${userId} is a community admin of ${communityId}`);
    const s = await openServices(loadConfig({ DATA_DIR: dataDir, SECRET_KEY: SECRET }), { logger: pino({ level: 'silent' }) });
    try {
      const c = await getCommunity(s.store, communityId);
      expect(c).to.include({ name: 'Operators', description: 'Ops people', open: true });
      expect(c?.admins).to.deep.equal([userId]);
      expect((await circlesOf(s.store, communityId)).map((x) => x._id)).to.deep.equal([circleId]);
    } finally {
      await closeServices(s);
    }
    try {
      await cli('communities', 'admin', communityId, 'usr_nobody');
      expect.fail('should fail');
    } catch (err) {
      expect((err as { stderr: string }).stderr).to.contain('User not found');
    }
  });
});
