import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';

/**
 * docs/RULES.md maps each rule of the interface and the shared decisions to the test that checks
 * it (file and title). This test keeps the table honest: every file it names exists and still
 * holds the title it quotes, and no row outside the pending list goes without a test.
 */
const REPO = new URL('../../', import.meta.url);
const DOC = 'docs/RULES.md';

interface Row {
  line: number;
  rule: string;
  file: string;
  title: string;
  pending: boolean;
}

/** The table rows of the document: `| rule | file | title |`, a `\|` inside a cell being a literal bar. */
function rows(markdown: string): Row[] {
  const found: Row[] = [];
  let pending = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^## /.test(text)) pending = text.trim() === '## Pending';
    if (!text.startsWith('|') || /^\|\s*(Rule|-+)\s*\|/.test(text)) return;
    const cells = text
      .slice(1, text.trimEnd().endsWith('|') ? text.trimEnd().length - 1 : undefined)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
    const [rule = '', file = '', title = ''] = cells;
    found.push({ line: i + 1, rule, file: file.replace(/^`|`$/g, ''), title, pending });
  });
  return found;
}

describe('docs: RULES.md names tests that exist', () => {
  const table = rows(readFileSync(new URL(DOC, REPO), 'utf8'));
  const checked = table.filter((r) => !r.pending);

  it('has rows, each with a rule, a test file and a test title', () => {
    expect(checked.length).to.be.greaterThan(200);
    for (const r of table) {
      expect(r.rule, `${DOC}:${r.line}`).to.not.equal('');
      expect(r.file, `${DOC}:${r.line} names no test file`).to.not.equal('');
      expect(r.title, `${DOC}:${r.line} names no test title`).to.not.equal('');
    }
  });

  it('every row outside the pending list names an existing test file that holds the title it quotes', () => {
    const problems: string[] = [];
    const sources = new Map<string, string>();
    for (const r of checked) {
      if (r.file === 'pending' || r.title === 'pending') {
        problems.push(`${DOC}:${r.line}: "pending" outside the Pending section`);
        continue;
      }
      if (!/^test\/.+\.test\.ts$/.test(r.file) || !existsSync(new URL(r.file, REPO))) {
        problems.push(`${DOC}:${r.line}: no test file ${r.file}`);
        continue;
      }
      const source = sources.get(r.file) ?? readFileSync(new URL(r.file, REPO), 'utf8');
      sources.set(r.file, source);
      if (!source.includes(r.title)) problems.push(`${DOC}:${r.line}: ${r.file} has no test titled "${r.title}"`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('is linked from the README and docs/DECISIONS.md', () => {
    expect(readFileSync(new URL('README.md', REPO), 'utf8')).to.contain('docs/RULES.md');
    expect(readFileSync(new URL('docs/DECISIONS.md', REPO), 'utf8')).to.contain('(RULES.md)');
  });
});
