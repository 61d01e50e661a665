import type { ArtifactRow, LinkQuery, LinkRow, PageInput, PageRow, TenantRow } from '../../ports/metadata-store.js';
import { all, allPrepared, type Database, one, onePrepared, type Querier } from './database.js';
import {
  ARTIFACT_SELECT,
  type ArtifactRecord,
  type LinkRecord,
  type PageRecord,
  type TenantRecord,
  toArtifact,
  toLink,
  toPage,
  toTenant,
} from './rows.js';
import { lockTenant } from './tenants.js';

/** Download links and pages. */

export async function createLink(db: Database, link: LinkRow, maxActive: number, now: number): Promise<boolean> {
  return db.tx(async (q) => {
    // Without the lock two instances could both count maxActive - 1 and both insert.
    await lockTenant(q, link.tenantId);
    if ((await countActiveLinks(q, link.tenantId, now)) >= maxActive) return false;
    await q.query(
      'INSERT INTO links (id, tenant_id, artifact_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [link.id, link.tenantId, link.artifactId, link.createdAt, link.expiresAt],
    );
    return true;
  });
}

export async function countActiveLinks(q: Querier, tenantId: string, now: number): Promise<number> {
  const row = await one<{ n: number }>(q, 'SELECT count(*) AS n FROM links WHERE tenant_id = $1 AND expires_at > $2', [
    tenantId,
    now,
  ]);
  return row!.n;
}

export async function listLinks(
  q: Querier,
  tenantId: string,
  artifactId: string,
  query: LinkQuery,
): Promise<LinkRow[]> {
  const values: unknown[] = [tenantId, artifactId, query.now, query.limit];
  let after = '';
  if (query.after) {
    values.push(query.after[0], query.after[1]);
    after = ' AND (created_at, id) < ($5, $6)';
  }
  const rows = await all<LinkRecord>(
    q,
    `SELECT * FROM links WHERE tenant_id = $1 AND artifact_id = $2 AND expires_at > $3${after}
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    values,
  );
  return rows.map(toLink);
}

export async function deleteLink(q: Querier, tenantId: string, linkId: string): Promise<boolean> {
  const r = await q.query('DELETE FROM links WHERE id = $1 AND tenant_id = $2', [linkId, tenantId]);
  return (r.rowCount ?? 0) > 0;
}

export async function getLink(
  q: Querier,
  id: string,
): Promise<{ link: LinkRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
  const row = await one<{ l: LinkRecord; a: ArtifactRecord; t: TenantRecord }>(
    q,
    `SELECT to_jsonb(l.*) AS l, to_jsonb(a.*) AS a, to_jsonb(t.*) AS t
     FROM links AS l JOIN artifacts AS a ON a.id = l.artifact_id JOIN tenants AS t ON t.id = a.tenant_id
     WHERE l.id = $1`,
    [id],
  );
  return row ? { link: toLink(row.l), artifact: toArtifact(row.a), tenant: toTenant(row.t) } : null;
}

export async function upsertPage(q: Querier, page: PageInput, now: number): Promise<PageRow> {
  // One page per artifact (unique artifact_id): re-publishing updates it in place and keeps its
  // slug. A page an operator took down is not touched (decided in the statement itself, so a
  // takedown racing a publish is never lost); then no row is returned and the page is read.
  const row = await one<PageRecord>(
    q,
    `INSERT INTO pages (slug, tenant_id, artifact_id, visibility, access, title, password_hash, live, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, true, $8, $8)
     ON CONFLICT (artifact_id) DO UPDATE SET visibility = excluded.visibility, access = excluded.access,
       title = excluded.title, password_hash = excluded.password_hash, live = true, updated_at = excluded.updated_at
       WHERE pages.taken_down_at IS NULL
     RETURNING *`,
    [page.slug, page.tenantId, page.artifactId, page.visibility, page.access, page.title, page.passwordHash, now],
  );
  return row ? toPage(row) : (await getPageForArtifact(q, page.tenantId, page.artifactId))!;
}

export async function getPageBySlug(
  q: Querier,
  slug: string,
): Promise<{ page: PageRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
  const row = await one<{ p: PageRecord; a: ArtifactRecord; t: TenantRecord }>(
    q,
    `SELECT to_jsonb(p.*) AS p, to_jsonb(a.*) AS a, to_jsonb(t.*) AS t
     FROM pages AS p JOIN artifacts AS a ON a.id = p.artifact_id JOIN tenants AS t ON t.id = a.tenant_id
     WHERE p.slug = $1`,
    [slug],
  );
  return row ? { page: toPage(row.p), artifact: toArtifact(row.a), tenant: toTenant(row.t) } : null;
}

export interface ArtifactKey {
  tenantId: string;
  id: string;
}

export type ArtifactWithPage = { artifact: ArtifactRow; page: PageRow | null } | null;

type ArtifactWithPageRecord = ArtifactRecord & { page_row: PageRecord | null };

const withPage = (row: ArtifactWithPageRecord | undefined): ArtifactWithPage =>
  row ? { artifact: toArtifact(row), page: row.page_row === null ? null : toPage(row.page_row) } : null;

// The artifact's own columns as they are; the page (or null) as one JSON value beside them.
const WITH_PAGE = `${ARTIFACT_SELECT}, to_jsonb(p.*) AS page_row`;
const PAGE_JOIN = 'LEFT JOIN pages AS p ON p.artifact_id = a.id AND p.tenant_id = a.tenant_id';
// Built once: a statement's text is looked up per call (see `prepared`), and a text built per
// call would be hashed whole every time.
const ARTIFACT_WITH_PAGE = `SELECT ${WITH_PAGE} FROM artifacts AS a ${PAGE_JOIN} WHERE a.id = $1 AND a.tenant_id = $2`;
const ARTIFACTS_WITH_PAGES = `SELECT k.n AS key_n, ${WITH_PAGE}
     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k (id, tenant_id, n)
     JOIN artifacts AS a ON a.id = k.id AND a.tenant_id = k.tenant_id ${PAGE_JOIN}`;

export async function getArtifactWithPage(q: Querier, tenantId: string, id: string): Promise<ArtifactWithPage> {
  const row = await onePrepared<ArtifactWithPageRecord>(q, ARTIFACT_WITH_PAGE, [id, tenantId]);
  return withPage(row ?? undefined);
}

/**
 * Several artifacts with their pages in one query (see TurnBatch), one answer per key in key
 * order. The keys travel as two arrays, so every batch size shares one prepared statement; each
 * row carries its key's position, which also answers a key asked for twice.
 */
export async function getArtifactsWithPages(q: Querier, keys: ArtifactKey[]): Promise<ArtifactWithPage[]> {
  if (keys.length === 1) return [await getArtifactWithPage(q, keys[0]!.tenantId, keys[0]!.id)];
  const rows = await allPrepared<ArtifactWithPageRecord & { key_n: number }>(q, ARTIFACTS_WITH_PAGES, [
    keys.map((k) => k.id),
    keys.map((k) => k.tenantId),
  ]);
  const byPosition = new Map(rows.map((row) => [row.key_n, row]));
  return keys.map((_, i) => withPage(byPosition.get(i + 1)));
}

export async function getPageForArtifact(q: Querier, tenantId: string, artifactId: string): Promise<PageRow | null> {
  const row = await one<PageRecord>(q, 'SELECT * FROM pages WHERE artifact_id = $1 AND tenant_id = $2', [
    artifactId,
    tenantId,
  ]);
  return row ? toPage(row) : null;
}

export async function unpublishPage(
  db: Database,
  tenantId: string,
  idOrSlug: string,
  now: number,
): Promise<PageRow | null> {
  return db.tx(async (q) => {
    const row =
      (await one<PageRecord>(q, 'SELECT * FROM pages WHERE slug = $1 AND tenant_id = $2 FOR UPDATE', [
        idOrSlug,
        tenantId,
      ])) ??
      (await one<PageRecord>(q, 'SELECT * FROM pages WHERE artifact_id = $1 AND tenant_id = $2 FOR UPDATE', [
        idOrSlug,
        tenantId,
      ]));
    if (!row) return null;
    if (!row.live) return toPage(row);
    await q.query('UPDATE pages SET live = false, updated_at = $2 WHERE slug = $1', [row.slug, now]);
    return toPage({ ...row, live: false, updated_at: now });
  });
}

export async function takeDownPage(q: Querier, slug: string, now: number): Promise<PageRow | null> {
  const row = await one<PageRecord>(
    q,
    `UPDATE pages SET live = false, taken_down_at = coalesce(taken_down_at, $2), updated_at = $2 WHERE slug = $1
     RETURNING *`,
    [slug, now],
  );
  return row ? toPage(row) : null;
}

export async function restorePage(q: Querier, slug: string, now: number): Promise<PageRow | null> {
  const row = await one<PageRecord>(
    q,
    `UPDATE pages SET taken_down_at = NULL,
       updated_at = CASE WHEN taken_down_at IS NULL THEN updated_at ELSE $2 END
     WHERE slug = $1 RETURNING *`,
    [slug, now],
  );
  return row ? toPage(row) : null;
}
