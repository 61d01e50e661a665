import type { ArtifactQuery, MetadataMatch, SessionQuery } from '../../ports/metadata-store.js';
import { ARTIFACT_SELECT, metadataMatchValue, SESSION_SELECT } from './rows.js';

export interface BuiltQuery {
  text: string;
  values: unknown[];
}

/**
 * The page size as a literal, not a parameter: the statements are prepared, and a plan made
 * for "LIMIT $n" must assume any number of rows (on a metadata page PostgreSQL then chose a
 * parallel scan, 15 ms instead of 0.4). With the literal, the plan made once fits every call,
 * so PostgreSQL stops planning anew each time (0.7 ms of a 1.5 ms page). Page sizes are
 * bounded (the API's 1-200, plus one to see whether there is more), so is the number of
 * distinct statements.
 */
function limitLiteral(limit: number): string {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Error(`invalid list limit ${limit}`);
  return String(limit);
}

/**
 * Collects positional parameters; `add` returns the placeholder. With `blind`, it returns
 * `(SELECT $n::type)` instead, a value the planner cannot look up in the column statistics (see
 * metadataQuery).
 */
class Params {
  readonly values: unknown[] = [];
  constructor(private readonly blind = false) {}
  add(value: unknown): string {
    this.values.push(value);
    const placeholder = `$${this.values.length}`;
    if (!this.blind) return placeholder;
    return `(SELECT ${placeholder}::${typeof value === 'number' ? 'bigint' : 'text'})`;
  }
}

/**
 * The artifact list query. Unlike SQLite, PostgreSQL needs no index hint: every filter has an
 * index in list order, and with `ORDER BY … LIMIT` the planner walks the most selective one.
 * `status = 'active'` is written literally so the partial indexes apply.
 *
 * Plans verified with EXPLAIN ANALYZE on PostgreSQL 15, one tenant with 1,000,000 artifacts
 * (950,000 active, 10,000 sessions, 10% `type=transcript`, a third with an expiry); pages of 51:
 * - first page (0.09 ms):  Limit -> Index Scan using artifacts_list
 *                            Index Cond: tenant_id = $1;  Filter: expires_at
 * - deep cursor (0.13 ms): Limit -> Index Scan using artifacts_list
 *                            Index Cond: tenant_id = $1 AND ROW(created_at, id) < ROW($c, $i)
 * - session_id (0.3 ms):   Limit -> Index Scan using artifacts_by_session
 *                            Index Cond: tenant_id, session_id [AND ROW(created_at, id) < ROW(...)]
 * - metadata.type=transcript, first or deep page (0.3-0.5 ms):
 *     Limit -> Nested Loop
 *       -> Index Only Scan using artifact_meta_lookup
 *            Index Cond: tenant_id, key, value [AND ROW(created_at, artifact_id) < ROW(...)]
 *       -> Index Scan using artifacts_pkey (id = m.artifact_id);  Filter: status, expires_at
 * - metadata.kind=k3&metadata.batch=b42 on the bench's rows (batch 1 in 100, kind 1 in 7), the
 *   same plan with values or generic (1.0-1.5 ms):
 *     Limit -> Nested Loop
 *       -> Index Only Scan using artifact_meta_lookup (b42's rows)
 *            Filter: (SubPlan 1)
 *              -> Index Scan using artifact_meta_pkey (artifact_id = m.artifact_id, key);  Filter: value
 *       -> Index Scan using artifacts_pkey (id = m.artifact_id);  Filter: status, expires_at
 *     356 of b42's rows walked and probed for k3, 51 artifacts fetched.
 * - sessions list: Limit -> Index Scan using sessions_list (tenant_id AND ROW(...) < ROW(...))
 * No Sort, no Seq Scan and no parallel Gather in any of them. Combined filters let the planner
 * pick: session_id plus a metadata filter walks the session's rows and sorts that small set
 * (2.8 ms for a 100-artifact session). With several metadata filters the sparsest drives (the
 * store reorders them, see sparsestFirst), so metadata.kind=k3&metadata.batch=b42 walks b42's
 * rows (SQLite, a million rows: 13.6 ms p50 driven by k3, 1.9 ms by b42). The known slow shape,
 * as in SQLite: filters whose values rarely co-occur still walk every row of the sparsest (70 ms
 * for 10,000).
 * test/adapters/postgres-metadata-store.test.ts checks these shapes on a smaller seeded table.
 */
export function buildArtifactListQuery(tenantId: string, q: ArtifactQuery): BuiltQuery {
  const [driver, ...others] = q.metadata ?? [];
  return driver ? metadataQuery(tenantId, q, driver, others) : plainQuery(tenantId, q);
}

function plainQuery(tenantId: string, q: ArtifactQuery): BuiltQuery {
  const p = new Params();
  const where = [`a.tenant_id = ${p.add(tenantId)}`, "a.status = 'active'"];
  addRowFilters(q, where, p, 'a.created_at', 'a.id');
  return {
    text:
      `SELECT ${ARTIFACT_SELECT} FROM artifacts AS a WHERE ${where.join(' AND ')}` +
      ` ORDER BY a.created_at DESC, a.id DESC LIMIT ${limitLiteral(q.limit)}`,
    values: p.values,
  };
}

/**
 * A metadata page with no other filter has one plan whatever the values: walk
 * artifact_meta_lookup, fetch each artifact. Its values are then hidden from the planner (see
 * Params). Otherwise PostgreSQL, which plans a prepared statement's first five calls with their
 * values, could find those plans cheaper than the one made without values (a value the
 * statistics sample finds more common than average makes the walk look shorter) and then keep
 * planning every call anew: 0.3-0.5 ms of a 0.7 ms page, seen on some ANALYZE samples of the
 * bench's million rows. With the values hidden both plans cost the same, so the statement settles
 * on its generic plan. With other filters the values pick the index, so they stay visible.
 */
function metadataQuery(tenantId: string, q: ArtifactQuery, driver: MetadataMatch, others: MetadataMatch[]): BuiltQuery {
  const onlyFilter =
    others.length === 0 &&
    q.sessionId === undefined &&
    q.agentId === undefined &&
    q.filename === undefined &&
    q.contentType === undefined;
  const p = new Params(onlyFilter);
  const tenant = p.add(tenantId);
  const where = [
    `m.tenant_id = ${tenant}`,
    `m.key = ${p.add(driver.key)}`,
    `m.value = ${p.add(metadataMatchValue(driver.value))}`,
    `a.tenant_id = ${tenant}`,
    "a.status = 'active'",
  ];
  // Each other pair is a probe of artifact_meta's primary key per walked row. `OFFSET 0` keeps
  // PostgreSQL from flattening the EXISTS into a join: flattened, it costed the walk high enough
  // (a few hundred rows for a page of two pairs) to run it in a parallel worker, whose start took
  // 13-17 ms of a 25 ms page, and it fetched every walked row's artifact before probing the
  // pair. Kept as a subplan (correlated, so never parallel), it filters the index walk itself and
  // only matching rows are fetched.
  for (const other of others) {
    where.push(
      `EXISTS (SELECT 1 FROM artifact_meta AS m2 WHERE m2.artifact_id = m.artifact_id` +
        ` AND m2.key = ${p.add(other.key)} AND m2.value = ${p.add(metadataMatchValue(other.value))} OFFSET 0)`,
    );
  }
  // Keyset and time bounds on the side table's own columns, so they are index conditions.
  addRowFilters(q, where, p, 'm.created_at', 'm.artifact_id');
  return {
    text:
      `SELECT ${ARTIFACT_SELECT} FROM artifact_meta AS m JOIN artifacts AS a ON a.id = m.artifact_id WHERE ${where.join(' AND ')}` +
      ` ORDER BY m.created_at DESC, m.artifact_id DESC LIMIT ${limitLiteral(q.limit)}`,
    values: p.values,
  };
}

/**
 * For each pair (1-based `i`), how many of its rows the index holds up to a limit and how far back
 * they reach (see sparsestFirst); a pair with no row is missing from the answer. One statement
 * whatever the number of pairs.
 */
export const METADATA_DENSITY_SQL =
  'SELECT p.i, count(*)::int AS n, min(s.created_at) AS oldest' +
  ' FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS p(key, value, i)' +
  ' CROSS JOIN LATERAL (SELECT m.created_at FROM artifact_meta AS m WHERE m.tenant_id = $1 AND m.key = p.key' +
  ' AND m.value = p.value ORDER BY m.created_at DESC, m.artifact_id DESC LIMIT $4) AS s GROUP BY p.i';

function addRowFilters(q: ArtifactQuery, where: string[], p: Params, createdAt: string, id: string): void {
  where.push(`(a.expires_at IS NULL OR a.expires_at > ${p.add(q.now)})`);
  const eq: [string, string | undefined][] = [
    ['a.session_id', q.sessionId],
    ['a.agent_id', q.agentId],
    ['a.filename', q.filename],
    ['a.content_type', q.contentType],
  ];
  for (const [column, value] of eq) if (value !== undefined) where.push(`${column} = ${p.add(value)}`);
  if (q.after) where.push(`(${createdAt}, ${id}) < (${p.add(q.after.createdAt)}, ${p.add(q.after.id)})`);
  if (q.createdAfter !== undefined) where.push(`${createdAt} > ${p.add(q.createdAfter)}`);
  if (q.createdBefore !== undefined) where.push(`${createdAt} < ${p.add(q.createdBefore)}`);
}

export function buildSessionListQuery(tenantId: string, q: SessionQuery): BuiltQuery {
  const p = new Params();
  const where = [`tenant_id = ${p.add(tenantId)}`];
  if (q.after) {
    where.push(`(last_artifact_at, session_id) < (${p.add(q.after.lastArtifactAt)}, ${p.add(q.after.sessionId)})`);
  }
  if (q.createdAfter !== undefined) {
    const after = p.add(q.createdAfter);
    // Implied (a session's last artifact is never older than its first) and stated, so that a
    // walk of sessions_list can stop at the bound instead of filtering to the end.
    where.push(`first_artifact_at > ${after}`, `last_artifact_at > ${after}`);
  }
  // A selective window is found through sessions_by_first, then sorted: the planner picks.
  if (q.createdBefore !== undefined) where.push(`first_artifact_at < ${p.add(q.createdBefore)}`);
  return {
    text:
      `SELECT ${SESSION_SELECT} FROM sessions WHERE ${where.join(' AND ')}` +
      ` ORDER BY last_artifact_at DESC, session_id DESC LIMIT ${limitLiteral(q.limit)}`,
    values: p.values,
  };
}
