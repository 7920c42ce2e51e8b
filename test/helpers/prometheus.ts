// A strict parser of the Prometheus text exposition format (version 0.0.4), for tests: prom-client
// ships a writer but no parser. It throws on any line that is not a comment, HELP, TYPE or sample,
// on a sample before its family's TYPE, on a bad name, label or value, and on a duplicate series.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count', ''], counter: ['', '_total'] };

function parseValue(text: string, line: string): number {
  // As Prometheus reads them (Go's ParseFloat): NaN and Inf in any case.
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  if (lower === 'nan') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq).trim();
    if (!LABEL.test(name)) throw new Error(`bad label name ${name} in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`duplicate label ${name} in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`bad label separator in: ${line}`);
  }
  return labels;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const familyOf = (sample: string): Family | undefined => {
    for (const f of families.values()) {
      const suffixes = SUFFIXES[f.type] ?? [''];
      if (suffixes.some((suffix) => sample === f.name + suffix)) return f;
    }
    return undefined;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m;
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      const f = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (f.samples.length > 0) throw new Error(`TYPE after samples in: ${line}`);
        f.type = rest;
      } else f.help = rest;
      families.set(name, f);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample: ${line}`);
    const [, name, , labelText, valueText] = m;
    const family = familyOf(name);
    if (!family) throw new Error(`sample without a TYPE: ${line}`);
    const labels = labelText ? parseLabels(labelText, line) : {};
    const series = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(series)) throw new Error(`duplicate series: ${line}`);
    seen.add(series);
    family.samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  return families;
}

/** The value of the one sample of `name` whose labels include `labels` (undefined when none). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
