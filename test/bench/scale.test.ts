import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { Contention, ScaleFigures, Window } from './scale.ts';
import { scaleLines, scaleSizes, writeScaleSection } from './scale.ts';

const window = (p99: number): Window => ({
  p99,
  max: p99 * 2,
  rps: 1000,
  loopP99: 1,
  loopMax: 2,
  gcMinorMs: 10,
  gcMajorMs: 0,
  gcLong: 0,
  cpuSeconds: 1,
  load: 1,
});
const round = (alone: number, beside: number): Contention => ({ alone: window(alone), beside: window(beside), floodRps: 5000, floodNot401: 0 });
const measured: ScaleFigures = {
  millions: 1,
  events: 1_000_000,
  agents: 100_000,
  fillSeconds: 36,
  firstStartSeconds: 51,
  heapMb: 1400,
  rssMb: 1900,
  peakRssMb: 1950,
  writeRatio: 0.3,
  writeP99: 40,
  writeCpuMs: 0.4,
  feedRatio: 0.9,
  feedP99: 10,
  asOfIndexSeconds: 30,
  asOfMedianMs: 2.5,
  asOfMaxMs: 9,
  asOfBusyMedianMs: 20,
  asOfBusyMaxMs: 30,
  asOfCpuMs: 1.5,
  asOfBusyCpuMs: 12,
  contention: [round(9, 11), round(8, 30), round(10, 12)],
  stopSeconds: 5,
  cleanStartSeconds: 20,
  cleanHeapMb: 1500,
  cleanRssMb: 1900,
  crashStartSeconds: 40,
};

describe('scale bench report (npm run bench -- scale)', () => {
  it('takes the sizes in millions from --sizes, and refuses what is not one', () => {
    expect(scaleSizes(['--sizes=0.1,1,3'])).to.deep.equal([0.1, 1, 3]);
    expect(scaleSizes(['--sizes', '10'])).to.deep.equal([10]);
    expect(() => scaleSizes(['--sizes=1,x'])).to.throw(/millions of events/);
  });

  it('keeps a row for every size: the measured ones with their figures (medians over the rounds), a failed one with why', () => {
    const lines = scaleLines(
      [1, 10],
      [measured, { millions: 10, failed: 'skipped: the service would need | 23 GB' }],
      [
        [0.5, 1],
        [1, 1.5],
      ],
      { duration: 10, rounds: 3 },
    );
    const rows = lines.filter((l) => /^\| (1,000,000|10,000,000) \|/.test(l));
    // The size's row, its three rounds of reads beside the flood, and the failed size's row.
    expect(rows).to.have.length(5);
    expect(rows[0])
      .to.include('| 36 (36) | 51 (51) |')
      .and.include('| 0.30 (40) [0.40] |')
      .and.include('| 9 / 12 |')
      .and.include('| 2.5 (9.0) [1.5] / 20.0 (30.0) [12.0] |')
      .and.include('| 0.5, 1.0 |');
    expect(rows[1]).to.match(/^\| 10,000,000 \| failed: skipped: the service would need \/ 23 GB \|/);
    expect(rows.slice(2).map((r) => r.split(' | ')[1])).to.deep.equal(['1', '2', '3']);
  });

  it('writes its part of the document in place, leaving the rest alone', () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'scale-report-'));
    try {
      const file = join(dir, 'PERFORMANCE.md');
      writeFileSync(file, '# Performance\n\nBy hand.\n');
      writeScaleSection(file, ['## Scale', 'first']);
      writeScaleSection(file, ['## Scale', 'second']);
      const text = readFileSync(file, 'utf8');
      expect(text.startsWith('# Performance\n\nBy hand.\n')).to.equal(true);
      expect(text).to.include('second').and.not.include('first');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
