import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function projectImports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/g)) out.push(relative(root, resolve(dirname(file), m[1])));
  for (const m of src.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) out.push(relative(root, resolve(dirname(file), m[1])));
  return out;
}

/** Which project paths each layer may import (CONVENTIONS.md, "Layers"). */
const allowed: Record<string, (target: string) => boolean> = {
  events: (t) => t.startsWith('events/'),
  commands: (t) => t.startsWith('events/') || t.startsWith('commands/'),
  projections: (t) => t.startsWith('events/') || t.startsWith('projections/'),
  queries: (t) => t.startsWith('projections/store/') || t.startsWith('queries/') || t.startsWith('events/kernel/'),
};

describe('architecture: layer boundaries', () => {
  for (const [layer, ok] of Object.entries(allowed)) {
    it(`${layer}/ imports only what its layer may`, () => {
      const violations: string[] = [];
      for (const f of files(join(root, layer))) {
        for (const target of projectImports(f)) if (!ok(target)) violations.push(`${relative(root, f)} -> ${target}`);
      }
      expect(violations).to.deep.equal([]);
    });
  }

  it('no production code imports the tests', () => {
    const violations: string[] = [];
    for (const layer of ['events', 'commands', 'projections', 'queries', 'api', 'workers', 'cli']) {
      for (const f of files(join(root, layer))) for (const t of projectImports(f)) if (t.startsWith('test/')) violations.push(`${relative(root, f)} -> ${t}`);
    }
    expect(violations).to.deep.equal([]);
  });
});
