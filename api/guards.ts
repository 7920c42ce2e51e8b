/** Whether `value` is one of `values`: narrows a string read from a form or a query to a union of literals. */
export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return values.some((v) => v === value);
}

/** Whether `value` is a plain object (a parsed JSON object or form body), so its fields can be read as unknown. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A parsed form body's field as a string ('' when there is no body, or the field is missing or not a string). */
export function bodyField(body: unknown, name: string): string {
  const value = isRecord(body) ? body[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/** A JSON value: what a parsed JSON body holds. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Whether `value` is plain JSON all the way down (what JSON.parse could have made). */
export function isJsonValue(value: unknown): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isRecord(value) && Object.values(value).every(isJsonValue);
}
