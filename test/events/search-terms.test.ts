// Keyword search terms: the ASCII fast path must give exactly what the Unicode tokeniser gives.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { searchTerms } from '../../events/feed.ts';
import { projectRoot } from '../helpers/process.ts';

/** The general tokeniser, as searchTerms applies it to text with non-ASCII characters. */
function unicodeTerms(text: string, max = 32): string[] {
  const out = new Set<string>();
  const plain = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  for (const m of plain.matchAll(/[\p{L}\p{N}]{2,40}/gu)) {
    out.add(m[0]);
    if (out.size >= max) break;
  }
  return [...out];
}

describe('events: keyword search terms', () => {
  it("gives the Unicode tokeniser's terms, in order, for ASCII text (random texts)", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const alphabet = 'abcXYZ019 .,#_-!\n\tQq@';
    for (let k = 0; k < 5000; k++) {
      let text = '';
      const len = Math.floor(random() * 160);
      for (let i = 0; i < len; i++) text += random() < 0.02 ? 'w'.repeat(Math.floor(random() * 90)) : alphabet[Math.floor(random() * alphabet.length)];
      const max = 1 + Math.floor(random() * 40);
      expect(searchTerms(text, max), JSON.stringify({ text, max })).to.deep.equal(unicodeTerms(text, max));
    }
  });

  it('lowercases, drops one-letter runs, cuts runs at 40 and de-duplicates', () => {
    expect(searchTerms('Hello, WORLD! a #Lead-Gen hello 42')).to.deep.equal(['hello', 'world', 'lead', 'gen', '42']);
    expect(searchTerms('x'.repeat(85))).to.deep.equal(['x'.repeat(40), 'xxxxx']);
    expect(searchTerms('y'.repeat(81) + ' zz')).to.deep.equal(['y'.repeat(40), 'zz']);
  });

  it('folds accents and keeps non-Latin letters (the Unicode path)', () => {
    expect(searchTerms('Café naïve Über 東京 Δelta')).to.deep.equal(['cafe', 'naive', 'uber', '東京', 'δelta']);
  });
});

describe('events: search terms kept in read models', () => {
  it('hold no view into the text they were cut from (a long word, or an excerpt, would keep the whole text alive)', function () {
    this.timeout(60_000);
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/helpers/retained.ts'], { cwd: projectRoot, encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    const { textLength, bytesPerText } = JSON.parse(run.stdout) as { textLength: number; bytesPerText: Record<string, number> };
    // The terms themselves take a few hundred bytes; a text kept with them would add its length.
    for (const [tokeniser, bytes] of Object.entries(bytesPerText)) expect(bytes, tokeniser).to.be.lessThan(textLength / 2);
  });
});
