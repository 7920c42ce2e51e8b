/**
 * JSON helpers that never recurse: they work for a value of any nesting depth, where
 * JSON.stringify, v8.serialize and recursive canonicalisers overflow the call stack (about 4,000
 * levels). The API bounds the depth of what it accepts (api/validation.ts screenBody); these keep
 * every serialiser on the event path working for anything that was ever accepted.
 */

type Frame =
  { kind: 'array'; items: unknown[]; at: number; out: string[] } | { kind: 'object'; keys: string[]; obj: Record<string, unknown>; at: number; out: string[] };

/** The nesting depth of a JSON value: 0 for a scalar, 1 for `{}` or `[]`, and so on. */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    const depth = d + 1;
    if (depth > max) max = depth;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth]);
  }
  return max;
}

function scalar(v: unknown, inArray: boolean): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object':
    case 'undefined':
    case 'function':
    case 'symbol':
      // Objects never get here; undefined, functions, symbols: dropped from objects, null in arrays (as JSON.stringify does).
      return inArray ? 'null' : undefined;
  }
}

/**
 * JSON text of a plain JSON value without recursion; `sortKeys` gives RFC 8785 (JCS) order (keys
 * sorted by UTF-16 code units; numbers and strings are already serialised as JCS wants by
 * JSON.stringify). `toJSON` is honoured for Dates only.
 */
export function stringifyIteratively(value: unknown, sortKeys = false): string | undefined {
  const open = (v: unknown): Frame | string | undefined => {
    if (v instanceof Date) return JSON.stringify(v);
    if (v !== null && typeof v === 'object') {
      if (Array.isArray(v)) return { kind: 'array', items: v, at: 0, out: [] };
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj);
      if (sortKeys) keys.sort();
      return { kind: 'object', keys, obj, at: 0, out: [] };
    }
    return undefined;
  };
  const first = open(value);
  if (first === undefined) return scalar(value, false);
  if (typeof first === 'string') return first;
  const stack: Frame[] = [first];
  let finished: string | undefined;
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (finished !== undefined) {
      // The child just closed: place it.
      if (top.kind === 'array') top.out.push(finished);
      else top.out.push(`${JSON.stringify(top.keys[top.at - 1])}:${finished}`);
      finished = undefined;
    }
    const length = top.kind === 'array' ? top.items.length : top.keys.length;
    if (top.at >= length) {
      stack.pop();
      finished = top.kind === 'array' ? `[${top.out.join(',')}]` : `{${top.out.join(',')}}`;
      if (!stack.length) return finished;
      continue;
    }
    const child = top.kind === 'array' ? top.items[top.at] : top.obj[top.keys[top.at]];
    top.at++;
    const opened = open(child);
    if (opened === undefined) {
      const text = scalar(child, top.kind === 'array');
      if (text === undefined) continue;
      if (top.kind === 'array') top.out.push(text);
      else top.out.push(`${JSON.stringify(top.keys[top.at - 1])}:${text}`);
    } else if (typeof opened === 'string') {
      if (top.kind === 'array') top.out.push(opened);
      else top.out.push(`${JSON.stringify(top.keys[top.at - 1])}:${opened}`);
    } else {
      stack.push(opened);
    }
  }
  return finished;
}

const isStackOverflow = (err: unknown) => err instanceof RangeError && /call stack/i.test(err.message);

/** JSON.stringify, falling back to the iterative form when the value is too deep for it. */
export function stringifyAnyDepth(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!isStackOverflow(err)) throw err;
    return stringifyIteratively(value);
  }
}

export { isStackOverflow };
