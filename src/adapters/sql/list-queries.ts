import type { ArtifactQuery, MetadataMatch, SessionQuery } from '../../ports/metadata-store.js';
import type { Dialect } from './dialect.js';
import { ARTIFACTS, metadataMatchValue, SESSIONS } from './rows.js';

export interface BuiltQuery {
  sql: string;
  params: unknown[];
}

const ARTIFACT = ARTIFACTS.qualified('a');
const SESSION = SESSIONS.list;

/**
 * The page size as a literal: a prepared plan made for "LIMIT $n" must assume any number of rows
 * (on a metadata page PostgreSQL then chose a parallel scan, 15 ms instead of 0.4). Page sizes are
 * bounded, so is the number of texts.
 */
function limitLiteral(limit: number): string {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Error(`invalid list limit ${limit}`);
  return String(limit);
}

/** Collects parameters; `add` returns the placeholder (with `blind`, see metadataQuery). */
class Params {
  readonly values: unknown[] = [];
  constructor(
    private readonly d: Dialect,
    private readonly blind = false,
  ) {}
  add(value: string | number): string {
    this.values.push(value);
    return this.blind ? this.d.blind(value) : '?';
  }
}

/**
 * The artifact list query. Every filter has an index in list order (`created_at DESC, id DESC`
 * within a tenant), so a page is one forward walk from the cursor with no sort, whatever the depth;
 * `status = 'active'` is written literally so the partial indexes apply. SQLite is told the
 * driving index (INDEXED BY): with range constraints on `created_at` its planner would filter a
 * session's rows out of the whole tenant. The plans and their timings are in
 * docs/architecture.md; the adapter tests check their shapes.
 */
export function buildArtifactListQuery(d: Dialect, tenantId: string, q: ArtifactQuery): BuiltQuery {
  const [driver, ...others] = q.metadata ?? [];
  return driver ? metadataQuery(d, tenantId, q, driver, others) : plainQuery(d, tenantId, q);
}

function plainQuery(d: Dialect, tenantId: string, q: ArtifactQuery): BuiltQuery {
  const p = new Params(d);
  const where = [`a.tenant_id = ${p.add(tenantId)}`, "a.status = 'active'"];
  // The most selective equality names the index the walk follows (SQLite).
  let index = 'artifacts_list';
  if (q.sessionId !== undefined) index = 'artifacts_by_session';
  else if (q.agentId !== undefined) index = 'artifacts_by_agent';
  else if (q.filename !== undefined) index = 'artifacts_by_filename';
  else if (q.contentType !== undefined) index = 'artifacts_by_type';
  addRowFilters(q, where, p, 'a.created_at', 'a.id');
  return {
    sql:
      `SELECT ${ARTIFACT} FROM artifacts AS a ${d.indexedBy(index)} WHERE ${where.join(' AND ')}` +
      ` ORDER BY a.created_at DESC, a.id DESC LIMIT ${limitLiteral(q.limit)}`,
    params: p.values,
  };
}

/**
 * A metadata page walks artifact_meta_lookup and fetches each artifact by id (CROSS JOIN fixes
 * that order on SQLite). When the pair is the only filter its values are hidden from PostgreSQL's
 * planner, so the statement keeps its generic plan instead of being planned anew on every call
 * (docs/architecture.md, "Reads on the hot path"); with other filters the values pick the index.
 */
function metadataQuery(
  d: Dialect,
  tenantId: string,
  q: ArtifactQuery,
  driver: MetadataMatch,
  others: MetadataMatch[],
): BuiltQuery {
  const onlyFilter =
    others.length === 0 &&
    q.sessionId === undefined &&
    q.agentId === undefined &&
    q.filename === undefined &&
    q.contentType === undefined;
  const p = new Params(d, onlyFilter);
  const tenant = p.add(tenantId);
  const where = [
    `m.tenant_id = ${tenant}`,
    `m.key = ${p.add(driver.key)}`,
    `m.value = ${p.add(metadataMatchValue(d, driver.value))}`,
    // The pair's rows carry their artifact's tenant: `m.tenant_id` confines the walk, and a second
    // test on `a` would only cost (1.7x as slow a page of two pairs on SQLite).
    'a.id = m.artifact_id',
    "a.status = 'active'",
  ];
  // Each other pair is a probe of artifact_meta's primary key per walked row. The fence keeps it a
  // subplan filtering the index walk: flattened into a join, PostgreSQL ran the walk in a parallel
  // worker (13-17 ms of a 25 ms page to start) and fetched every walked row's artifact first.
  for (const other of others) {
    where.push(
      `EXISTS (SELECT 1 FROM artifact_meta AS m2 WHERE m2.artifact_id = m.artifact_id` +
        ` AND m2.key = ${p.add(other.key)} AND m2.value = ${p.add(metadataMatchValue(d, other.value))}${d.fence})`,
    );
  }
  // Keyset and time bounds on the side table's own columns, so they are index conditions.
  addRowFilters(q, where, p, 'm.created_at', 'm.artifact_id');
  return {
    sql:
      `SELECT ${ARTIFACT} FROM artifact_meta AS m ${d.indexedBy('artifact_meta_lookup')} CROSS JOIN artifacts AS a` +
      ` WHERE ${where.join(' AND ')} ORDER BY m.created_at DESC, m.artifact_id DESC LIMIT ${limitLiteral(q.limit)}`,
    params: p.values,
  };
}

/**
 * For each pair (in order, `i` from 0), how many of its rows the index holds up to `probe` and how
 * far back they reach (see sparsestFirst): one statement whatever the number of pairs.
 */
export function buildMetadataDensityQuery(
  d: Dialect,
  tenantId: string,
  pairs: MetadataMatch[],
  probe: number,
): BuiltQuery {
  const one = (i: number) =>
    `SELECT ${i} AS i, count(*) AS n, min(s.created_at) AS oldest FROM (SELECT created_at FROM artifact_meta ` +
    `${d.indexedBy('artifact_meta_lookup')} WHERE tenant_id = ? AND key = ? AND value = ?` +
    ` ORDER BY created_at DESC, artifact_id DESC LIMIT ${limitLiteral(probe)}) AS s`;
  return {
    sql: pairs.map((_, i) => one(i)).join(' UNION ALL '),
    params: pairs.flatMap((m) => [tenantId, m.key, metadataMatchValue(d, m.value)]),
  };
}

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

export function buildSessionListQuery(d: Dialect, tenantId: string, q: SessionQuery): BuiltQuery {
  const p = new Params(d);
  const where = [`tenant_id = ${p.add(tenantId)}`];
  if (q.after) {
    where.push(`(last_artifact_at, session_id) < (${p.add(q.after.lastArtifactAt)}, ${p.add(q.after.sessionId)})`);
  }
  if (q.createdAfter !== undefined) {
    // Implied (a session's last artifact is never older than its first) and stated, so that a
    // walk of sessions_list can stop at the bound instead of filtering to the end.
    where.push(`first_artifact_at > ${p.add(q.createdAfter)}`, `last_artifact_at > ${p.add(q.createdAfter)}`);
  }
  // PostgreSQL finds a selective window through sessions_by_first, then sorts; SQLite walks sessions_list.
  if (q.createdBefore !== undefined) where.push(`first_artifact_at < ${p.add(q.createdBefore)}`);
  return {
    sql:
      `SELECT ${SESSION} FROM sessions ${d.indexedBy('sessions_list')} WHERE ${where.join(' AND ')}` +
      ` ORDER BY last_artifact_at DESC, session_id DESC LIMIT ${limitLiteral(q.limit)}`,
    params: p.values,
  };
}
