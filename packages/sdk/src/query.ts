import type { ListArtifactsQuery, ListSessionsQuery } from './types.js';

type Query = Record<string, string | undefined>;

const str = (v: number | undefined) => (v === undefined ? undefined : String(v));

/** camelCase list options → the wire's snake_case query string. */
export function artifactsQuery(q: ListArtifactsQuery = {}): Query {
  const out: Query = {
    cursor: q.cursor,
    limit: str(q.limit),
    session_id: q.sessionId,
    agent_id: q.agentId,
    filename: q.filename,
    content_type: q.contentType,
    created_after: q.createdAfter,
    created_before: q.createdBefore,
    transcript: q.transcript ? 'true' : undefined,
  };
  // More than one pair is passed on as-is, so the server answers with its own invalid_request.
  for (const [k, v] of Object.entries(q.metadata ?? {})) out[`metadata.${k}`] = v;
  return out;
}

export function sessionsQuery(q: ListSessionsQuery = {}): Query {
  return {
    cursor: q.cursor,
    limit: str(q.limit),
    created_after: q.createdAfter,
    created_before: q.createdBefore,
  };
}
