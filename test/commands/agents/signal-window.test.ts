import { expect } from 'chai';
import type { SignalSeen } from '../../../commands/agents/signal-window.ts';
import { SignalWindow } from '../../../commands/agents/signal-window.ts';
import { rng } from '../../helpers/random.ts';

/** The window as a plain ordered map, rebuilt from scratch: the model SignalWindow must agree with. */
function model(posts: Array<[string, SignalSeen]>, from: string): Array<[string, SignalSeen]> {
  const m = new Map<string, SignalSeen>();
  for (const [h, s] of posts) {
    m.delete(h);
    m.set(h, s);
  }
  return [...m].filter(([, s]) => s.at > from);
}

describe('commands: the duplicate-signal window', () => {
  it('agrees with a rebuilt ordered map after every post, across generation merges, and earlier versions keep their view', () => {
    const random = rng(7);
    const WINDOW = 48 * 3600_000;
    let t = Date.parse('2026-01-01T00:00:00.000Z');
    let w = SignalWindow.EMPTY;
    const posts: Array<[string, SignalSeen]> = [];
    const kept: Array<{ version: SignalWindow; keys: string[]; from: string; posts: number }> = [];
    for (let i = 0; i < 600; i++) {
      // Mostly minutes apart, sometimes a day or three: entries expire in runs and one by one.
      t += random() < 0.05 ? Math.floor(random() * 3 * 86_400_000) : Math.floor(random() * 600_000);
      const seen = { at: new Date(t).toISOString(), post_id: `pst_${i}` };
      const hash = `h${Math.floor(random() * 80)}`;
      const from = new Date(t - WINDOW).toISOString();
      w = w.with(hash, seen, from);
      posts.push([hash, seen]);
      const want = model(posts, from);
      expect([...w.keys()], `after post ${i}`).to.deep.equal(want.map(([h]) => h));
      for (const [h, s] of want) expect(w.get(h)).to.equal(s);
      for (let k = 0; k < 80; k++) if (!want.some(([h]) => h === `h${k}`)) expect(w.has(`h${k}`), `h${k} after post ${i}`).to.equal(false);
      if (i % 50 === 0) kept.push({ version: w, keys: [...w.keys()], from, posts: i + 1 });
    }
    for (const k of kept) {
      expect([...k.version.keys()]).to.deep.equal(k.keys);
      // A kept version extended now forks from its own view, not from the latest one.
      const forked = k.version.with('fork', { at: '2099-01-01T00:00:00.000Z', post_id: 'pst_fork' }, k.from);
      expect([...forked.keys()]).to.deep.equal([
        ...model(posts.slice(0, k.posts), k.from)
          .map(([h]) => h)
          .filter((h) => h !== 'fork'),
        'fork',
      ]);
      expect([...k.version.keys()]).to.deep.equal(k.keys);
    }
  });
});
