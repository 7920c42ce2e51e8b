// How `npm run bench` writes docs/PERFORMANCE.md: it owns only the text between BEGIN and END,
// and in it one block per suite between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`.
// Everything outside BEGIN and END is written by hand and kept as it is.

export const BEGIN = '<!-- bench:begin (written by npm run bench; edit outside the bench markers) -->';
export const END = '<!-- bench:end -->';
const OPEN = /^<!-- bench:([\w-]+) -->$/;
const CLOSE = /^<!-- \/bench:([\w-]+) -->$/;
const BEGIN_LINE = /^<!-- bench:begin\b.*-->$/;

export interface SuiteReport {
  /** The suite's name, as `npm run bench -- NAME` takes it. */
  name: string;
  lines: string[];
}

export interface BenchReport {
  /** The lines before the first suite (the machine and date of a full run); kept as they were when absent. */
  header?: string[];
  suites: SuiteReport[];
}

interface Generated {
  header: string[];
  suites: SuiteReport[];
}

function parseGenerated(lines: string[]): Generated {
  const header: string[] = [];
  const suites: SuiteReport[] = [];
  let current: SuiteReport | null = null;
  for (const line of lines) {
    const open = OPEN.exec(line);
    const close = CLOSE.exec(line);
    if (open && open[1] !== 'begin' && open[1] !== 'end') {
      current = { name: open[1], lines: [] };
      suites.push(current);
    } else if (close && current !== null && close[1] === current.name) {
      current = null;
    } else if (current !== null) {
      current.lines.push(line);
    } else if (suites.length === 0) {
      header.push(line);
    }
    // A stray line between two suites is the bench's own and is dropped.
  }
  return { header: trimBlank(header), suites: suites.map((s) => ({ name: s.name, lines: trimBlank(s.lines) })) };
}

function trimBlank(lines: string[]): string[] {
  let from = 0;
  let to = lines.length;
  while (from < to && lines[from].trim() === '') from++;
  while (to > from && lines[to - 1].trim() === '') to--;
  return lines.slice(from, to);
}

function renderGenerated(g: Generated): string[] {
  const out = [BEGIN];
  if (g.header.length > 0) out.push('', ...g.header);
  for (const s of g.suites) out.push('', `<!-- bench:${s.name} -->`, '', ...s.lines, '', `<!-- /bench:${s.name} -->`);
  out.push('', END);
  return out;
}

/**
 * The document with `report` written into its generated part. A suite already there is replaced
 * where it stands; a new one is added after the others. With `replaceAll` (a full run) the
 * suites come in the report's order, followed by those the run did not measure. Text outside the
 * generated part is kept; a document without one gets it after its title.
 */
export function writeReport(doc: string | null, report: BenchReport, options: { replaceAll: boolean }): string {
  const lines = (doc ?? '# Performance\n').split('\n');
  const begin = lines.findIndex((l) => BEGIN_LINE.test(l));
  const end = begin < 0 ? -1 : lines.indexOf(END, begin + 1);
  let before: string[];
  let after: string[];
  let old: Generated;
  if (begin >= 0 && end < 0) throw new Error(`The bench's begin marker has no end marker (${END}) after it`);
  if (begin >= 0) {
    before = lines.slice(0, begin);
    after = lines.slice(end + 1);
    old = parseGenerated(lines.slice(begin + 1, end));
  } else {
    const title = lines.findIndex((l) => l.startsWith('# '));
    before = lines.slice(0, title + 1);
    after = lines.slice(title + 1);
    if (before.length > 0) before.push('');
    old = { header: [], suites: [] };
  }
  const fresh = report.suites.map((s) => ({ name: s.name, lines: trimBlank(s.lines) }));
  const freshNames = new Set(fresh.map((s) => s.name));
  let suites: SuiteReport[];
  if (options.replaceAll) {
    suites = [...fresh, ...old.suites.filter((s) => !freshNames.has(s.name))];
  } else {
    suites = old.suites.map((s) => fresh.find((f) => f.name === s.name) ?? s);
    for (const f of fresh) if (!old.suites.some((s) => s.name === f.name)) suites.push(f);
  }
  const generated = renderGenerated({ header: report.header ? trimBlank(report.header) : old.header, suites });
  const tail = after.length > 0 && after[0].trim() !== '' ? ['', ...after] : after;
  return [...before, ...generated, ...tail].join('\n');
}
