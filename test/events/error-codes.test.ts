import { expect } from 'chai';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, isErrorCode } from '../../events/kernel/error-codes.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = join(ROOT, 'docs/ERRORS.md');
const REGISTRY = 'events/kernel/error-codes.ts';
const SOURCE_DIRS = ['events', 'commands', 'projections', 'queries', 'api', 'workers', 'cli'];

/** docs/ERRORS.md, generated from ERROR_CODES (`npm run errors`). */
export function renderErrorsDoc(): string {
  const rows = Object.entries(ERROR_CODES)
    .sort(([a, x], [b, y]) => x.status - y.status || a.localeCompare(b))
    .map(([code, { status, meaning }]) => `| ${status} | \`${code}\` | ${meaning.replace(/\|/g, '\\|')} |`);
  return [
    '# Error codes',
    '',
    'Every error answer has one envelope: `{"detail": ..., "code": "<code>", "request_id": "<id>"}`,',
    'plus the fields a code names (for example `retry_after` on 429). `detail` is human text, except',
    'on 422 (`validation_failed`), where it is the list of field errors `[{loc, msg, type}]`.',
    '`request_id` equals the `X-Request-Id` response header (the caller may set it on the request);',
    'quote it when reporting a problem. Clients should branch on `code`, never on `detail`.',
    '',
    'This page is generated from `events/kernel/error-codes.ts`, the one list every thrown code comes',
    'from (`npm run errors`; `npm test` fails when it is stale or when code throws a code not listed).',
    '',
    '| status | code | meaning |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const sources = () => SOURCE_DIRS.flatMap((d) => sourceFiles(join(ROOT, d))).map((path) => ({ file: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

/**
 * The code literals handed to the error constructors and helpers. tsc already refuses a code
 * outside the registry (the helpers are typed by its keys); this scan also catches a cast.
 */
const CODE_SITES = [
  /new DomainError\(\s*\d+,\s*'([^']+)'/g,
  /\b(?:notFound|forbidden|conflict)\([^;]*?,\s*'([^']+)'\)/g,
  /\berrorBody\(\s*\w+,\s*'([^']+)'/g,
  /\b(?:capReached|limited)\(\s*'([^']+)'/g,
];

describe('error codes (events/kernel/error-codes.ts and docs/ERRORS.md)', () => {
  it('docs/ERRORS.md is generated from the registry (run `npm run errors` after changing codes)', () => {
    const page = renderErrorsDoc();
    if (process.env.UPDATE_ERRORS === '1') writeFileSync(DOC, page);
    expect(readFileSync(DOC, 'utf8')).to.equal(page);
  });

  it('every code literal thrown in the source is in the registry', () => {
    const thrown: Array<{ file: string; code: string }> = [];
    for (const { file, text } of sources()) {
      for (const re of CODE_SITES) for (const m of text.matchAll(re)) thrown.push({ file, code: m[1] });
    }
    expect(thrown.length).to.be.greaterThan(50);
    expect(thrown.filter((t) => !isErrorCode(t.code))).to.deep.equal([]);
  });

  it('every code in the registry is used somewhere in the source (no stale entries)', () => {
    const text = sources()
      .filter((s) => s.file !== REGISTRY)
      .map((s) => s.text)
      .join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !text.includes(`'${code}'`));
    expect(unused).to.deep.equal([]);
  });

  it('codes are snake_case with a 4xx or 5xx status and a one-line meaning', () => {
    for (const [code, { status, meaning }] of Object.entries(ERROR_CODES)) {
      expect(code).to.match(/^[a-z][a-z0-9_]*$/);
      expect(status).to.be.within(400, 599);
      expect(meaning).to.match(/^[^\n]{10,}$/);
    }
  });
});
