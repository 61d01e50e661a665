/**
 * Durations as the API and the MCP tools take them (a TTL, a link's lifetime): a count of seconds,
 * minutes, hours or days. Shared by the core and the MCP tool table, which the local MCP server
 * loads without the core.
 */
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const DURATION = /^[1-9]\d*[smhd]$/;

/** Seconds of a duration such as `3d`, `12h`, `90m` or `45s` (surrounding blanks allowed); else null. */
export function durationSeconds(text: string): number | null {
  const t = text.trim();
  if (!DURATION.test(t)) return null;
  return Number(t.slice(0, -1)) * UNIT_SECONDS[t.slice(-1) as keyof typeof UNIT_SECONDS];
}
