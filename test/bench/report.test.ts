import { expect } from 'chai';
import { BEGIN, END, writeReport } from './report.ts';

const handWritten = ['## Where the time goes', '', '- Written by hand: the bench never touches it.'];

function doc(generated: string[]): string {
  return ['# Performance', '', 'An introduction by hand.', '', BEGIN, '', ...generated, '', END, '', ...handWritten, ''].join('\n');
}

describe('bench report: what npm run bench writes into docs/PERFORMANCE.md', () => {
  const existing = doc([
    'Measured 2026-01-01 on a machine.',
    '',
    '<!-- bench:http -->',
    '',
    '## HTTP',
    '| old | 1 |',
    '',
    '<!-- /bench:http -->',
    '',
    '<!-- bench:log -->',
    '',
    '## Event log append',
    '| old | 2 |',
    '',
    '<!-- /bench:log -->',
  ]);

  it('a run of one suite replaces that suite alone, in place, and keeps every hand-written line', () => {
    const next = writeReport(existing, { suites: [{ name: 'http', lines: ['## HTTP', '| new | 3 |'] }] }, { replaceAll: false });
    expect(next).to.include('| new | 3 |');
    expect(next).not.to.include('| old | 1 |');
    expect(next).to.include('| old | 2 |');
    expect(next).to.include('Measured 2026-01-01 on a machine.');
    expect(next.indexOf('| new | 3 |')).to.be.lessThan(next.indexOf('| old | 2 |'));
    for (const line of [...handWritten, 'An introduction by hand.']) expect(next).to.include(line);
    expect(next.indexOf(END)).to.be.lessThan(next.indexOf('## Where the time goes'));
  });

  it('a suite not yet in the document is added after the others', () => {
    const next = writeReport(existing, { suites: [{ name: 'feed', lines: ['## Public reads'] }] }, { replaceAll: false });
    expect(next.indexOf('| old | 2 |')).to.be.lessThan(next.indexOf('## Public reads'));
    expect(next.indexOf('## Public reads')).to.be.lessThan(next.indexOf(END));
  });

  it('a full run rewrites the header and its suites, keeps the suites it did not run, and keeps the hand-written text', () => {
    const next = writeReport(
      existing,
      { header: ['Measured 2026-02-02.'], suites: [{ name: 'log', lines: ['## Event log append', '| new | 4 |'] }] },
      { replaceAll: true },
    );
    expect(next).to.include('Measured 2026-02-02.');
    expect(next).not.to.include('Measured 2026-01-01');
    expect(next).to.include('| new | 4 |');
    expect(next).to.include('| old | 1 |');
    expect(next.indexOf('| new | 4 |')).to.be.lessThan(next.indexOf('| old | 1 |'));
    for (const line of handWritten) expect(next).to.include(line);
  });

  it('writing the same report twice gives the same document', () => {
    const report = { header: ['Measured today.'], suites: [{ name: 'http', lines: ['## HTTP', '| x |'] }] };
    const once = writeReport(existing, report, { replaceAll: true });
    expect(writeReport(once, report, { replaceAll: true })).to.equal(once);
  });

  it('a document without the markers keeps all its text and gets the generated part after its title', () => {
    const plain = ['# Performance', '', ...handWritten, ''].join('\n');
    const next = writeReport(plain, { suites: [{ name: 'http', lines: ['## HTTP'] }] }, { replaceAll: true });
    expect(next.startsWith('# Performance\n')).to.equal(true);
    expect(next.indexOf(BEGIN)).to.be.lessThan(next.indexOf('## HTTP'));
    expect(next.indexOf(END)).to.be.lessThan(next.indexOf('## Where the time goes'));
    for (const line of handWritten) expect(next).to.include(line);
  });

  it('refuses a document whose generated part has lost its end marker, rather than guess', () => {
    expect(() => writeReport(existing.replace(END, ''), { suites: [] }, { replaceAll: true })).to.throw(/end marker/);
  });
});

describe('docs/PERFORMANCE.md', () => {
  it('keeps its generated part between the bench markers and "Where the time goes" outside them', async () => {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(new URL('../../docs/PERFORMANCE.md', import.meta.url), 'utf8');
    const begin = text.indexOf(BEGIN);
    const end = text.indexOf(END);
    expect(begin).to.be.greaterThan(-1);
    expect(end).to.be.greaterThan(begin);
    expect(text.indexOf('## Where the time goes')).to.be.greaterThan(end);
    // The document is in the bench's own layout: writing what is there back changes nothing.
    expect(writeReport(text, { suites: [] }, { replaceAll: true })).to.equal(text);
  });
});
