import type { ArtifactRow, LinkQuery, LinkRow, PageInput, PageRow, TenantRow } from '../../ports/metadata-store.js';
import type { Connection } from './database.js';
import {
  ARTIFACT_COLUMNS,
  type ArtifactRecord,
  JoinedColumns,
  LINK_COLUMNS,
  type LinkRecord,
  PAGE_COLUMNS,
  type PageRecord,
  TENANT_COLUMNS,
  type TenantRecord,
  toArtifact,
  toLink,
  toPage,
  toTenant,
} from './rows.js';

/** Download links and pages. */

export function createLink(c: Connection, link: LinkRow, maxActive: number, now: number): boolean {
  return c.write(() => {
    if (countActiveLinks(c, link.tenantId, now) >= maxActive) return false;
    c.run(
      'INSERT INTO links (id, tenant_id, artifact_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      link.id,
      link.tenantId,
      link.artifactId,
      link.createdAt,
      link.expiresAt,
    );
    return true;
  });
}

export function countActiveLinks(c: Connection, tenantId: string, now: number): number {
  return c.get<{ n: number }>('SELECT count(*) AS n FROM links WHERE tenant_id = ? AND expires_at > ?', tenantId, now)!
    .n;
}

export function listLinks(c: Connection, tenantId: string, artifactId: string, q: LinkQuery): LinkRow[] {
  const after = q.after ? ' AND (created_at < ? OR (created_at = ? AND id < ?))' : '';
  const params: unknown[] = [tenantId, artifactId, q.now];
  if (q.after) params.push(q.after[0], q.after[0], q.after[1]);
  return c
    .all<LinkRecord>(
      `SELECT ${LINK_COLUMNS.join(', ')} FROM links WHERE tenant_id = ? AND artifact_id = ? AND expires_at > ?${after}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
      ...params,
      q.limit,
    )
    .map(toLink);
}

export function deleteLink(c: Connection, tenantId: string, linkId: string): boolean {
  return c.write(() => c.run('DELETE FROM links WHERE id = ? AND tenant_id = ?', linkId, tenantId) > 0);
}

const LINK_ARTIFACT_TENANT = new JoinedColumns({ l: LINK_COLUMNS, a: ARTIFACT_COLUMNS, t: TENANT_COLUMNS });

export function getLink(c: Connection, id: string): { link: LinkRow; artifact: ArtifactRow; tenant: TenantRow } | null {
  const J = LINK_ARTIFACT_TENANT;
  const v = c.getValues(
    J.select(`FROM links AS l JOIN artifacts AS a ON a.id = l.artifact_id JOIN tenants AS t ON t.id = a.tenant_id
     WHERE l.id = ?`),
    id,
  );
  if (!v) return null;
  return {
    link: toLink(J.record<LinkRecord>(v, 'l')!),
    artifact: toArtifact(J.record<ArtifactRecord>(v, 'a')!),
    tenant: toTenant(J.record<TenantRecord>(v, 't')!),
  };
}

export function upsertPage(c: Connection, page: PageInput, now: number): PageRow {
  return c.write(() => {
    // One page per artifact: re-publishing updates it in place and keeps its slug. A page an
    // operator took down is not touched (decided here, in the write, so no takedown is lost).
    c.run(
      `INSERT INTO pages (slug, tenant_id, artifact_id, visibility, access, title, password_hash, live, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
       ON CONFLICT (artifact_id) DO UPDATE SET visibility = excluded.visibility, access = excluded.access,
         title = excluded.title, password_hash = excluded.password_hash, live = 1, updated_at = excluded.updated_at
       WHERE pages.taken_down_at IS NULL`,
      page.slug,
      page.tenantId,
      page.artifactId,
      page.visibility,
      page.access,
      page.title,
      page.passwordHash,
      now,
      now,
    );
    return getPageForArtifact(c, page.tenantId, page.artifactId)!;
  });
}

const PAGE_ARTIFACT_TENANT = new JoinedColumns({ p: PAGE_COLUMNS, a: ARTIFACT_COLUMNS, t: TENANT_COLUMNS });

export function getPageBySlug(
  c: Connection,
  slug: string,
): { page: PageRow; artifact: ArtifactRow; tenant: TenantRow } | null {
  const J = PAGE_ARTIFACT_TENANT;
  const v = c.getValues(
    J.select(`FROM pages AS p JOIN artifacts AS a ON a.id = p.artifact_id JOIN tenants AS t ON t.id = a.tenant_id
     WHERE p.slug = ?`),
    slug,
  );
  if (!v) return null;
  return {
    page: toPage(J.record<PageRecord>(v, 'p')!),
    artifact: toArtifact(J.record<ArtifactRecord>(v, 'a')!),
    tenant: toTenant(J.record<TenantRecord>(v, 't')!),
  };
}

const ARTIFACT_PAGE = new JoinedColumns({ a: ARTIFACT_COLUMNS, p: PAGE_COLUMNS });

/** What GET of a record shows, in one read: it is the hottest read of the API. */
export function getArtifactWithPage(
  c: Connection,
  tenantId: string,
  id: string,
): { artifact: ArtifactRow; page: PageRow | null } | null {
  const J = ARTIFACT_PAGE;
  const v = c.getValues(
    J.select(`FROM artifacts AS a LEFT JOIN pages AS p ON p.artifact_id = a.id AND p.tenant_id = a.tenant_id
     WHERE a.id = ? AND a.tenant_id = ?`),
    id,
    tenantId,
  );
  if (!v) return null;
  const page = J.record<PageRecord>(v, 'p');
  return { artifact: toArtifact(J.record<ArtifactRecord>(v, 'a')!), page: page && toPage(page) };
}

export function getPageForArtifact(c: Connection, tenantId: string, artifactId: string): PageRow | null {
  const row = c.get<PageRecord>('SELECT * FROM pages WHERE artifact_id = ? AND tenant_id = ?', artifactId, tenantId);
  return row ? toPage(row) : null;
}

export function unpublishPage(c: Connection, tenantId: string, idOrSlug: string, now: number): PageRow | null {
  return c.write(() => {
    const row =
      c.get<PageRecord>('SELECT * FROM pages WHERE slug = ? AND tenant_id = ?', idOrSlug, tenantId) ??
      c.get<PageRecord>('SELECT * FROM pages WHERE artifact_id = ? AND tenant_id = ?', idOrSlug, tenantId);
    if (!row) return null;
    if (row.live === 0) return toPage(row);
    c.run('UPDATE pages SET live = 0, updated_at = ? WHERE slug = ?', now, row.slug);
    return toPage({ ...row, live: 0, updated_at: now });
  });
}

export function takeDownPage(c: Connection, slug: string, now: number): PageRow | null {
  return c.write(() => {
    c.run(
      'UPDATE pages SET live = 0, taken_down_at = coalesce(taken_down_at, ?), updated_at = ? WHERE slug = ?',
      now,
      now,
      slug,
    );
    const row = c.get<PageRecord>('SELECT * FROM pages WHERE slug = ?', slug);
    return row ? toPage(row) : null;
  });
}

export function restorePage(c: Connection, slug: string, now: number): PageRow | null {
  return c.write(() => {
    c.run(
      'UPDATE pages SET taken_down_at = NULL, updated_at = ? WHERE slug = ? AND taken_down_at IS NOT NULL',
      now,
      slug,
    );
    const row = c.get<PageRecord>('SELECT * FROM pages WHERE slug = ?', slug);
    return row ? toPage(row) : null;
  });
}
