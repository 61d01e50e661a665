import type { ArtifactQuery, SessionQuery } from '../../ports/metadata-store.js';

export interface BuiltQuery {
  sql: string;
  params: unknown[];
}

/**
 * The artifact list query. The driving index is chosen here (INDEXED BY), not left to the planner:
 * with range constraints on `created_at` SQLite would otherwise prefer the plain tenant index and
 * filter a session's rows out of the whole tenant. Every driving index is in list order, so a page
 * is one forward walk from the cursor with no sort, whatever the depth.
 */
export function buildArtifactListQuery(tenantId: string, q: ArtifactQuery): BuiltQuery {
  const [driver, ...others] = q.metadata ?? [];
  return driver ? metadataQuery(tenantId, q, driver, others) : plainQuery(tenantId, q);
}

function plainQuery(tenantId: string, q: ArtifactQuery): BuiltQuery {
  const where = ['a.tenant_id = ?', "a.status = 'active'"];
  const params: unknown[] = [tenantId];
  // Most selective equality first: it names the index the walk follows.
  let index = 'artifacts_list';
  if (q.sessionId !== undefined) index = 'artifacts_by_session';
  else if (q.agentId !== undefined) index = 'artifacts_by_agent';
  else if (q.filename !== undefined) index = 'artifacts_by_filename';
  else if (q.contentType !== undefined) index = 'artifacts_by_type';
  addRowFilters(q, where, params, 'a.created_at', 'a.id');
  params.push(q.limit);
  return {
    sql:
      `SELECT a.* FROM artifacts AS a INDEXED BY ${index} WHERE ${where.join(' AND ')}` +
      ' ORDER BY a.created_at DESC, a.id DESC LIMIT ?',
    params,
  };
}

function metadataQuery(
  tenantId: string,
  q: ArtifactQuery,
  driver: { key: string; value: string },
  others: { key: string; value: string }[],
): BuiltQuery {
  const where = ['m.tenant_id = ?', 'm.key = ?', 'm.value = ?', "a.status = 'active'"];
  const params: unknown[] = [tenantId, driver.key, driver.value];
  for (const other of others) {
    where.push(
      'EXISTS (SELECT 1 FROM artifact_meta AS m2 WHERE m2.artifact_id = m.artifact_id AND m2.key = ? AND m2.value = ?)',
    );
    params.push(other.key, other.value);
  }
  addRowFilters(q, where, params, 'm.created_at', 'm.artifact_id');
  params.push(q.limit);
  // CROSS JOIN fixes the join order: walk the metadata index, then fetch each artifact by id.
  return {
    sql:
      'SELECT a.* FROM artifact_meta AS m INDEXED BY artifact_meta_lookup CROSS JOIN artifacts AS a ON a.id = m.artifact_id' +
      ` WHERE ${where.join(' AND ')} ORDER BY m.created_at DESC, m.artifact_id DESC LIMIT ?`,
    params,
  };
}

/** How many of a pair's rows the index holds, up to a limit, and how far back they reach (sparsestFirst). */
export const METADATA_DENSITY_SQL =
  'SELECT count(*) AS n, min(created_at) AS oldest FROM (SELECT created_at FROM artifact_meta INDEXED BY artifact_meta_lookup' +
  ' WHERE tenant_id = ? AND key = ? AND value = ? ORDER BY created_at DESC, artifact_id DESC LIMIT ?)';

/** Filters shared by both shapes; the keyset and time bounds use the driving index's own columns. */
function addRowFilters(q: ArtifactQuery, where: string[], params: unknown[], createdAt: string, id: string): void {
  where.push('(a.expires_at IS NULL OR a.expires_at > ?)');
  params.push(q.now);
  const eq: [string, string | undefined][] = [
    ['a.session_id', q.sessionId],
    ['a.agent_id', q.agentId],
    ['a.filename', q.filename],
    ['a.content_type', q.contentType],
  ];
  for (const [column, value] of eq) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  if (q.after) {
    where.push(`(${createdAt}, ${id}) < (?, ?)`);
    params.push(q.after.createdAt, q.after.id);
  }
  if (q.createdAfter !== undefined) {
    where.push(`${createdAt} > ?`);
    params.push(q.createdAfter);
  }
  if (q.createdBefore !== undefined) {
    where.push(`${createdAt} < ?`);
    params.push(q.createdBefore);
  }
}

export function buildSessionListQuery(tenantId: string, q: SessionQuery): BuiltQuery {
  const where = ['tenant_id = ?'];
  const params: unknown[] = [tenantId];
  if (q.after) {
    where.push('(last_artifact_at, session_id) < (?, ?)');
    params.push(q.after.lastArtifactAt, q.after.sessionId);
  }
  if (q.createdAfter !== undefined) {
    // Implied (a session's last artifact is never older than its first) and stated, so the walk
    // of sessions_list stops at the bound instead of filtering to the end of the tenant's sessions.
    where.push('first_artifact_at > ?', 'last_artifact_at > ?');
    params.push(q.createdAfter, q.createdAfter);
  }
  if (q.createdBefore !== undefined) {
    where.push('first_artifact_at < ?');
    params.push(q.createdBefore);
  }
  params.push(q.limit);
  return {
    sql:
      `SELECT * FROM sessions INDEXED BY sessions_list WHERE ${where.join(' AND ')}` +
      ' ORDER BY last_artifact_at DESC, session_id DESC LIMIT ?',
    params,
  };
}
