import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../helpers/process.ts';

/**
 * Files of the API suite whose every test writes through the API and reads the write back at once
 * (read-your-writes): posts and rooms, comments and reactions, follows, trust stamps and bonds,
 * DMs, blocks and the inbox, credits and their history. Run here with TEST_ROLES=split (see
 * test/helpers/service.ts): the service under test is a ROLE=api process that appends to the
 * embedded log and reads the read models of a ROLE=projector child process on the same data
 * directory, over its socket; the jobs run in a ROLE=worker service beside the api.
 */
const FILES = [
  'test/api/rooms-posts.test.ts',
  'test/api/comments-reactions.test.ts',
  'test/api/social-graph.test.ts',
  'test/api/messaging-dm.test.ts',
  'test/api/credits-feed.test.ts',
];
/**
 * Left out to keep `npm test` short (each still runs in one process with the rest of the suite):
 * two tests that spend an agent's credits down to 402 one post at a time, the 500-bond cap, and the
 * endorsement rate limit (a service of its own, and no read-your-writes in it).
 */
const LEFT_OUT = /answers 402 (for a comment without credits|when credits run out)|caps bonds at 500 per agent|allows 20 endorsements per minute/;

interface MochaJsonTest {
  fullTitle: string;
  file: string;
  err: { message?: string; stack?: string };
}
interface MochaJson {
  stats: { tests: number; passes: number; failures: number; pending: number };
  passes: MochaJsonTest[];
  failures: MochaJsonTest[];
}

describe('process roles: the API suite read-your-writes tests, with the api and the projector in two processes on one embedded log', function () {
  this.timeout(600_000);

  it(`passes every test of ${FILES.map((f) => f.replace('test/api/', '')).join(', ')} under TEST_ROLES=split`, async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'agent-network-split-suite-'));
    const report = join(scratch, 'report.json');
    try {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(projectRoot, 'node_modules/mocha/bin/mocha.js'),
          '--reporter',
          'json',
          '--reporter-option',
          `output=${report}`,
          '--grep',
          LEFT_OUT.source,
          '--invert',
          ...FILES,
        ],
        { cwd: projectRoot, env: { ...process.env, TEST_ROLES: 'split' }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      let result: MochaJson;
      try {
        result = JSON.parse(readFileSync(report, 'utf8')) as MochaJson;
      } catch {
        throw new Error(`the split-role run wrote no report (exit ${code}): ${stderr.slice(-2000)}`);
      }
      const failed = result.failures.map((f) => `${f.fullTitle}: ${f.err.message ?? ''}`);
      expect(failed, 'tests that failed with split roles').to.deep.equal([]);
      expect(code).to.equal(0);
      // Every file ran: each contributed passing tests, none was skipped.
      for (const file of FILES) {
        expect(
          result.passes.filter((t) => t.file.endsWith(file)),
          file,
        ).to.have.length.greaterThan(0);
      }
      expect(result.stats.pending).to.equal(0);
      expect(result.stats.passes).to.equal(result.stats.tests);
      expect(result.stats.passes).to.be.at.least(40);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
