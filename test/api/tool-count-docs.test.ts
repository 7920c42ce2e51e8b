import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { TOOLS } from '../../api/routes/mcp/tools.ts';

const root = new URL('../../', import.meta.url);
const documents = [
  'README.md',
  ...readdirSync(new URL('docs/', root))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('docs: counts of MCP tools agree with the tool table (api/routes/mcp/tools.ts)', () => {
  it('every "N tools" in README.md and docs/*.md is the number of tools the server lists', () => {
    const wrong: string[] = [];
    for (const file of documents) {
      const text = readFileSync(new URL(file, root), 'utf8');
      for (const m of text.matchAll(/\b(\d+) (?:MCP |A2A )?(?:tools|skills)\b/gi)) {
        if (Number(m[1]) !== TOOLS.length) wrong.push(`${file}: "${m[0]}"`);
      }
    }
    expect(wrong, `the tool table has ${TOOLS.length} tools`).to.deep.equal([]);
  });
});
