/**
 * Tool input schemas in the subset of JSON Schema every MCP host and model API reads alike. The
 * converter writes a few forms some of them warn about or refuse ("Schema portability: … 3
 * warnings" in a host's log): a draft-07 `$schema` (MCP's default dialect is 2020-12), `const`,
 * a list of types, and `{}` for "any value". Each has a plainer equivalent with the same meaning.
 */

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The keywords whose values are one schema, and those whose values are maps or lists of them. */
const ONE = ['additionalProperties', 'items', 'not'];
const MAP = ['properties'];
const LIST = ['anyOf', 'oneOf', 'allOf'];

export function portableSchema(schema: Schema, top = true): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' && top) continue;
    if (key === 'const') {
      out.enum = [value];
    } else if (key === 'type' && Array.isArray(value)) {
      out.anyOf = value.map((type) => ({ type }));
    } else if (ONE.includes(key) && isObject(value)) {
      // `{}` accepts anything; `true` says so in every dialect and to every reader.
      out[key] = Object.keys(value).length === 0 ? true : portableSchema(value, false);
    } else if (MAP.includes(key) && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, s]) => [name, isObject(s) ? portableSchema(s, false) : s]),
      );
    } else if (LIST.includes(key) && Array.isArray(value)) {
      out[key] = value.map((s) => (isObject(s) ? portableSchema(s, false) : s));
    } else {
      out[key] = value;
    }
  }
  return out;
}
