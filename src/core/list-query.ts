import type { ArtifactQuery, LinkQuery, MetadataMatch, SessionQuery } from '../ports/metadata-store.js';
import { decodeCursor } from './cursor.js';
import { invalid } from './errors.js';
import { ARTIFACT_ID, LABEL, LINK_ID } from './ids.js';
import { LIMITS } from './plans.js';
import { parseTimestamp } from './time.js';
import { checkContentType, checkFilename, checkLabel, METADATA_KEY } from './validation.js';

export type RawQuery = Record<string, string | string[] | undefined>;

const ARTIFACT_FILTERS = new Set([
  'cursor',
  'limit',
  'session_id',
  'agent_id',
  'filename',
  'content_type',
  'created_after',
  'created_before',
  'transcript',
]);

function single(query: RawQuery, key: string): string | undefined {
  const v = query[key];
  if (Array.isArray(v)) throw invalid(`${key} may be given once.`);
  return v;
}

export function parseLimit(value: string | undefined): number {
  if (value === undefined) return LIMITS.listDefault;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > LIMITS.listMax) {
    throw invalid(`limit must be an integer from 1 to ${LIMITS.listMax}.`);
  }
  return Number(value);
}

function timestamp(value: string | undefined, key: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseTimestamp(value);
  if (ms === null) throw invalid(`${key} must be an RFC 3339 timestamp such as 2026-11-22T08:00:00Z.`);
  return ms;
}

/** Turns the list endpoint's query string into a store query; anything unknown is refused, not ignored. */
export function parseArtifactQuery(query: RawQuery, now: number): { query: ArtifactQuery; limit: number } {
  const metadata: MetadataMatch[] = [];
  for (const key of Object.keys(query)) {
    if (key.startsWith('metadata.')) {
      const metaKey = key.slice('metadata.'.length);
      if (!METADATA_KEY.test(metaKey)) throw invalid(`'${key.slice(0, 80)}' is not a valid metadata filter.`);
      const value = single(query, key) ?? '';
      metadata.push({ key: metaKey, value });
    } else if (!ARTIFACT_FILTERS.has(key)) {
      throw invalid(`Unknown query parameter '${key.slice(0, 80)}'.`);
    }
  }
  if (metadata.length > LIMITS.metadataFilters) {
    throw invalid(`At most ${LIMITS.metadataFilters} metadata.<key>=<value> filters are allowed per query.`);
  }
  const transcript = single(query, 'transcript');
  if (transcript !== undefined && transcript !== 'true' && transcript !== 'false') {
    throw invalid('transcript must be true or false.');
  }
  if (transcript === 'true') metadata.push({ key: 'type', value: 'transcript' });

  const limit = parseLimit(single(query, 'limit'));
  const cursor = single(query, 'cursor');
  const q: ArtifactQuery = { now, limit: limit + 1 };
  if (cursor !== undefined) {
    const [createdAt, id] = decodeCursor(cursor, ARTIFACT_ID);
    q.after = { createdAt, id };
  }
  const session = single(query, 'session_id');
  if (session !== undefined) q.sessionId = checkLabel(session, 'session_id');
  const agent = single(query, 'agent_id');
  if (agent !== undefined) q.agentId = checkLabel(agent, 'agent_id');
  const filename = single(query, 'filename');
  if (filename !== undefined) q.filename = checkFilename(filename);
  const contentType = checkContentType(single(query, 'content_type'));
  if (contentType !== undefined) q.contentType = contentType;
  const after = timestamp(single(query, 'created_after'), 'created_after');
  if (after !== undefined) q.createdAfter = after;
  const before = timestamp(single(query, 'created_before'), 'created_before');
  if (before !== undefined) q.createdBefore = before;
  if (metadata.length > 0) q.metadata = metadata;
  return { query: q, limit };
}

const SESSION_FILTERS = new Set(['cursor', 'after', 'limit', 'created_after', 'created_before']);

export function parseSessionQuery(query: RawQuery): { query: SessionQuery; limit: number } {
  for (const key of Object.keys(query)) {
    if (!SESSION_FILTERS.has(key)) throw invalid(`Unknown query parameter '${key.slice(0, 80)}'.`);
  }
  const limit = parseLimit(single(query, 'limit'));
  const q: SessionQuery = { limit: limit + 1 };
  const cursor = single(query, 'cursor') ?? single(query, 'after');
  if (cursor !== undefined) {
    const [lastArtifactAt, sessionId] = decodeCursor(cursor, LABEL);
    q.after = { lastArtifactAt, sessionId };
  }
  const after = timestamp(single(query, 'created_after'), 'created_after');
  if (after !== undefined) q.createdAfter = after;
  const before = timestamp(single(query, 'created_before'), 'created_before');
  if (before !== undefined) q.createdBefore = before;
  return { query: q, limit };
}

const LINK_FILTERS = new Set(['cursor', 'limit']);

/** The query of an artifact's link list: `cursor` and `limit` only. */
export function parseLinkQuery(query: RawQuery, now: number): { query: LinkQuery; limit: number } {
  for (const key of Object.keys(query)) {
    if (!LINK_FILTERS.has(key)) throw invalid(`Unknown query parameter '${key.slice(0, 80)}'.`);
  }
  const limit = parseLimit(single(query, 'limit'));
  const q: LinkQuery = { now, limit: limit + 1 };
  const cursor = single(query, 'cursor');
  if (cursor !== undefined) q.after = decodeCursor(cursor, LINK_ID);
  return { query: q, limit };
}
