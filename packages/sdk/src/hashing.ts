import { createReadStream } from 'node:fs';
import { nodeCrypto } from './builtins.js';

/** Hex SHA-256 of a file, read as a stream so any size fits in constant memory. */
export async function sha256File(path: string): Promise<string> {
  const hash = nodeCrypto().createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Everything about an upload that shapes the artifact it creates. */
export interface IdempotencyParts {
  contentHash: string;
  filename: string;
  sessionId?: string;
  agentId?: string;
  contentType?: string;
  ttl?: string;
  transcript?: boolean;
  metadata?: Record<string, unknown>;
}

/**
 * A stable Idempotency-Key for "this content, under this name, with these labels and settings":
 * re-running the same upload (e.g. a CLI retry after a crash) replays the first artifact instead
 * of storing a second one, while changing anything that would change the record (metadata, ttl,
 * content type, transcript, session, agent) makes a new key and so a new artifact.
 *
 * `cairn-` + hex SHA-256 of the parts joined by NUL (none of them can contain it), in this order:
 * content hash, filename, session, agent, content type, ttl, "transcript" or "", and the metadata
 * as JSON with keys sorted at every level (so `{a,b}` and `{b,a}` give the same key).
 */
export function deriveIdempotencyKey(parts: IdempotencyParts): string {
  const joined = [
    parts.contentHash,
    parts.filename,
    parts.sessionId ?? '',
    parts.agentId ?? '',
    parts.contentType ?? '',
    parts.ttl ?? '',
    parts.transcript ? 'transcript' : '',
    canonicalJson(parts.metadata ?? {}),
  ].join('\u0000');
  return `cairn-${sha256Hex(joined)}`;
}

/**
 * The key to use instead of `previousKey` once the artifact it replays is gone (deleted or
 * expired): still deterministic, so re-running the same push after that replays the new artifact.
 */
export function deriveSuccessorKey(previousKey: string, deadArtifactId: string): string {
  return `cairn-${sha256Hex(`${previousKey}\u0000${deadArtifactId}`)}`;
}

function sha256Hex(text: string): string {
  return nodeCrypto().createHash('sha256').update(text, 'utf8').digest('hex');
}

/** JSON with object keys sorted at every level, so equal metadata always hashes the same. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
