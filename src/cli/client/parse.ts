import { InvalidArgumentError } from 'commander';
import { ARTIFACT_ID, LABEL, LINK_ID, PAGE_SLUG } from '../../shared/id-shapes.js';

/**
 * Option value parsers. Each throws commander's InvalidArgumentError, which commander reports as
 * "error: option '--x <v>' argument 'y' is invalid. <why>" and main() turns into exit code 2.
 */

const METADATA_KEY = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** `k=v` → [k, v]; the value may itself contain '='. */
export function parseMetaPair(raw: string): [string, string] {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('Expected key=value, e.g. --meta model=gpt-5.');
  const key = raw.slice(0, eq);
  if (!METADATA_KEY.test(key)) {
    throw new InvalidArgumentError(
      `Metadata key '${key}' must start with a letter and use only letters, digits, '_' and '-' (at most 64).`,
    );
  }
  return [key, raw.slice(eq + 1)];
}

/** For repeatable `--meta k=v`: validates each pair as it arrives and collects them. */
export function collectMeta(raw: string, previous: [string, string][] = []): [string, string][] {
  return [...previous, parseMetaPair(raw)];
}

export function parseLimit(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 200)
    throw new InvalidArgumentError('Limit must be a whole number from 1 to 200.');
  return n;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** `7d`, `12h`, `30m`, `3600s` or a bare number of seconds → seconds. */
export function parseDurationSeconds(raw: string): number {
  const m = /^(\d+)\s*([smhdw]?)$/i.exec(raw.trim());
  const n = m ? Number(m[1]) : Number.NaN;
  if (!m || !Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidArgumentError('Use a duration like 7d, 12h, 30m or 3600s.');
  }
  return n * (UNIT_SECONDS[(m[2] || 's').toLowerCase()] ?? 1);
}

/** The API's longest share link (LIMITS.linkMaxSeconds): checked here so a typo costs no request. */
export const LINK_MAX_DAYS = 30;

/** `cairn link --expires`: a duration of at most LINK_MAX_DAYS days. */
export function parseLinkExpiry(raw: string): number {
  const seconds = parseDurationSeconds(raw);
  if (seconds > LINK_MAX_DAYS * 86_400) {
    throw new InvalidArgumentError(
      `A link lives at most ${LINK_MAX_DAYS} days (${LINK_MAX_DAYS}d, ${LINK_MAX_DAYS * 86_400}s); ${raw} is ${formatDays(seconds)}.`,
    );
  }
  return seconds;
}

function formatDays(seconds: number): string {
  const days = seconds / 86_400;
  return `${Number.isInteger(days) ? days : days.toFixed(1)} days`;
}

/** An ISO date or date-time, or a duration back from now ("2d" = two days ago) → RFC 3339 UTC. */
export function parseTimeBound(raw: string, now: () => number = Date.now): string {
  if (/^\d+\s*[smhdw]$/i.test(raw.trim())) return new Date(now() - parseDurationSeconds(raw) * 1000).toISOString();
  const ms = Date.parse(raw);
  if (Number.isNaN(ms))
    throw new InvalidArgumentError('Use an ISO date such as 2026-11-22 or 2026-11-22T08:00:00Z, or an age such as 2d.');
  return new Date(ms).toISOString();
}

/** `--ttl`: `Nd`, `Nh` (the server also takes `Nm`, `Ns`) or `never`, as the API takes it. */
export function parseTtl(raw: string): string {
  if (raw === 'never' || /^[1-9]\d*[smhd]$/.test(raw)) return raw;
  throw new InvalidArgumentError("TTL must be like 12h, 30d or 'never'.");
}

export function parseVisibility(raw: string): 'unlisted' | 'public' {
  if (raw === 'unlisted' || raw === 'public') return raw;
  throw new InvalidArgumentError("Visibility must be 'unlisted' or 'public'.");
}

/*
 * Ids given as arguments. A value that cannot be the id a command takes is a usage error (exit 2),
 * found before any request is sent, with the same shapes the server checks (shared/id-shapes.ts).
 */

export function parseArtifactId(raw: string): string {
  if (ARTIFACT_ID.test(raw)) return raw;
  throw new InvalidArgumentError(
    'An artifact id is art_ and 16 letters or digits (e.g. art_3kTqZ8vQpL2mN7xY); find ids with `cairn ls` (e.g. `cairn ls --filename report.md`).',
  );
}

export function parseLinkId(raw: string): string {
  if (LINK_ID.test(raw)) return raw;
  throw new InvalidArgumentError('A link id is lnk_ and 20 letters or digits; find them with `cairn links art_…`.');
}

/** unpublish: an artifact id or a page id. */
export function parsePageRef(raw: string): string {
  if (ARTIFACT_ID.test(raw) || PAGE_SLUG.test(raw)) return raw;
  throw new InvalidArgumentError(
    'Give an artifact id (art_ and 16 letters or digits) or a page id (pg_ and 16); `cairn ls` shows both.',
  );
}

export function parseSessionId(raw: string): string {
  if (LABEL.test(raw)) return raw;
  throw new InvalidArgumentError(
    "A session id is 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit; `cairn sessions` lists them.",
  );
}
