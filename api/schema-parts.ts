// Reading the parts of a JSON Schema held as a plain object (the route table's `Schema`): each part
// is checked as it is read, so code that derives documents and tool schemas from the route table
// needs no type assertions.
import { isRecord } from './guards.ts';

type Schema = Record<string, unknown>;

/** An object schema's properties by name, each a schema ({} when it declares none). */
export function propertiesOf(schema: unknown): Record<string, Schema> {
  const properties = isRecord(schema) ? schema.properties : undefined;
  if (!isRecord(properties)) return {};
  return Object.fromEntries(Object.entries(properties).filter((entry): entry is [string, Schema] => isRecord(entry[1])));
}

/** The property names an object schema requires ([] when none). */
export function requiredOf(schema: unknown): string[] {
  const required = isRecord(schema) ? schema.required : undefined;
  return Array.isArray(required) ? required.filter((name): name is string => typeof name === 'string') : [];
}

/** A value as plain JSON (a TypeBox schema without its symbol keys), read back as unknown. */
export function plainJson(value: unknown): unknown {
  const parsed: unknown = JSON.parse(JSON.stringify(value));
  return parsed;
}

/** A schema as plain JSON (see plainJson): still an object schema. */
export function plainSchema(schema: Schema): Schema {
  const parsed = plainJson(schema);
  if (!isRecord(parsed)) throw new TypeError('a schema serialised to JSON is no longer an object');
  return parsed;
}
