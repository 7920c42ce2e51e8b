/** `value`, or a failed assertion naming `what` when it is null or undefined (instead of a `!`). */
export function defined<T>(value: T | null | undefined, what = 'a value'): T {
  if (value === null || value === undefined) throw new Error(`expected ${what}, got ${String(value)}`);
  return value;
}
