import type {
  ArtifactRow,
  LinkQuery,
  LinkRow,
  PageInput,
  PageRow,
  SessionLinkRow,
  TenantRow,
} from '../../ports/metadata-store.js';
import { SqlArtifactStore } from './artifacts.js';
import { appendEvents, linkEvent, pageEvent, sessionLinkEvent, sessionOf } from './events.js';
import { ARTIFACTS, LINKS, PAGES, SESSION_LINKS, TENANTS } from './rows.js';
import { Joined, type Stored, type Table } from './table.js';
import { lockTenant } from './tenants.js';
import { one, run, type Work } from './work.js';

const PAGE = PAGES.list;
const LINK_ARTIFACT_TENANT = new Joined({ l: LINKS, a: ARTIFACTS, t: TENANTS });
const GET_LINK = `SELECT ${LINK_ARTIFACT_TENANT.list}
  FROM links AS l JOIN artifacts AS a ON a.id = l.artifact_id JOIN tenants AS t ON t.id = a.tenant_id WHERE l.id = ?`;
const PAGE_ARTIFACT_TENANT = new Joined({ p: PAGES, a: ARTIFACTS, t: TENANTS });
const GET_PAGE = `SELECT ${PAGE_ARTIFACT_TENANT.list}
  FROM pages AS p JOIN artifacts AS a ON a.id = p.artifact_id JOIN tenants AS t ON t.id = a.tenant_id WHERE p.slug = ?`;
// A revoke also moves expires_at to its time, so revoked links are outside this range; the
// condition on revoked_at covers the clocks of other instances being a little behind.
// Links of artifacts and of sessions count as one set against the plan's cap.
const COUNT_LINKS = `SELECT
  (SELECT count(*) FROM links WHERE tenant_id = ? AND expires_at > ? AND revoked_at IS NULL) +
  (SELECT count(*) FROM session_links WHERE tenant_id = ? AND expires_at > ? AND revoked_at IS NULL) AS n`;
const SESSION_LINK_TENANT = new Joined({ l: SESSION_LINKS, t: TENANTS });
const GET_SESSION_LINK = `SELECT ${SESSION_LINK_TENANT.list}
  FROM session_links AS l JOIN tenants AS t ON t.id = l.tenant_id WHERE l.id = ?`;
const PAGE_OF_ARTIFACT = `SELECT ${PAGE} FROM pages WHERE artifact_id = ? AND tenant_id = ?`;

/** Download links and pages. */
export class SqlSharingStore extends SqlArtifactStore {
  async createLink(link: LinkRow, maxActive: number, now: number): Promise<boolean> {
    return this.insertUnderCap(link.tenantId, LINKS.insert, LINKS.values(link), maxActive, now, function* () {
      const session = yield* sessionOf(link.artifactId, link.tenantId);
      yield* appendEvents([linkEvent('link.created', link, session, now)]);
    });
  }

  async createSessionLink(link: SessionLinkRow, maxActive: number, now: number): Promise<boolean> {
    return this.insertUnderCap(link.tenantId, SESSION_LINKS.insert, SESSION_LINKS.values(link), maxActive, now, () =>
      appendEvents([sessionLinkEvent('session_link.created', link, now)]),
    );
  }

  /**
   * Inserts a link row unless the tenant has `maxActive` active links of either kind; `recorded`
   * writes what goes with the insert in its transaction (the change feed's event).
   */
  private insertUnderCap(
    tenantId: string,
    insert: string,
    values: unknown[],
    maxActive: number,
    now: number,
    recorded: () => Work<void> = function* () {},
  ) {
    const d = this.d;
    return this.sql.write(function* () {
      // Without the tenant's lock two instances could both count maxActive - 1 and both insert.
      yield* lockTenant(d.forNoKeyUpdate, tenantId);
      if ((yield* one<{ n: number }>(COUNT_LINKS, [tenantId, now, tenantId, now]))!.n >= maxActive) return false;
      yield* run(insert, values);
      yield* recorded();
      return true;
    });
  }

  async getSessionLink(id: string): Promise<{ link: SessionLinkRow; tenant: TenantRow } | null> {
    const J = SESSION_LINK_TENANT;
    const v = await this.sql.row(GET_SESSION_LINK, [id]);
    if (!v) return null;
    return { link: J.read(v, 'l')!, tenant: J.read(v, 't')! };
  }

  async listSessionLinks(tenantId: string, sessionId: string, q: LinkQuery): Promise<SessionLinkRow[]> {
    return this.liveLinks(SESSION_LINKS, 'session_id', tenantId, sessionId, q);
  }

  async getLink(id: string): Promise<{ link: LinkRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
    const J = LINK_ARTIFACT_TENANT;
    const v = await this.sql.row(GET_LINK, [id]);
    if (!v) return null;
    return { link: J.read(v, 'l')!, artifact: J.read(v, 'a')!, tenant: J.read(v, 't')! };
  }

  async countActiveLinks(tenantId: string, now: number): Promise<number> {
    return (await this.sql.one<{ n: number }>(COUNT_LINKS, [tenantId, now, tenantId, now]))!.n;
  }

  async listLinks(tenantId: string, artifactId: string, q: LinkQuery): Promise<LinkRow[]> {
    return this.liveLinks(LINKS, 'artifact_id', tenantId, artifactId, q);
  }

  /** Active links of one artifact or session (`column` = `of`), newest first, after `q.after`. */
  private async liveLinks<Row>(
    t: Table<Row>,
    column: 'artifact_id' | 'session_id',
    tenantId: string,
    of: string,
    q: LinkQuery,
  ): Promise<Row[]> {
    const params: unknown[] = [tenantId, of, q.now];
    const after = q.after ? ' AND (created_at, id) < (?, ?)' : '';
    if (q.after) params.push(q.after[0], q.after[1]);
    params.push(q.limit);
    const rows = await this.sql.all<Stored>(
      `SELECT ${t.list} FROM ${t.name}
       WHERE tenant_id = ? AND ${column} = ? AND expires_at > ? AND revoked_at IS NULL${after}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
      params,
    );
    return rows.map((r) => t.read(r));
  }

  async revokeLink(tenantId: string, linkId: string, now: number): Promise<boolean> {
    // Expired at the revoke too: an instance of an earlier version, which knows no revoked_at,
    // stops serving and counting it as well. Only the first revoke changes the row (its time is
    // kept) and records the event; a later one finds the row revoked and answers the same.
    const d = this.d;
    const revoke = (table: string) =>
      `UPDATE ${table} SET revoked_at = ?, expires_at = ${d.least}(expires_at, ?)
      WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL`;
    const params = [now, now, linkId, tenantId];
    const exists = (table: string) => one(`SELECT id FROM ${table} WHERE id = ? AND tenant_id = ?`, [linkId, tenantId]);
    return this.sql.write(function* () {
      const revoked = yield* one<Stored>(`${revoke('links')} RETURNING ${LINKS.list}`, params);
      if (revoked) {
        const row = LINKS.read(revoked);
        const session = yield* sessionOf(row.artifactId, tenantId);
        yield* appendEvents([linkEvent('link.revoked', row, session, now)]);
        return true;
      }
      if ((yield* exists('links')) !== null) return true;
      // Link ids are unique across both tables (one CSPRNG id space): at most one row matches.
      const revokedSession = yield* one<Stored>(`${revoke('session_links')} RETURNING ${SESSION_LINKS.list}`, params);
      if (revokedSession) {
        yield* appendEvents([sessionLinkEvent('session_link.revoked', SESSION_LINKS.read(revokedSession), now)]);
        return true;
      }
      return (yield* exists('session_links')) !== null;
    });
  }

  async upsertPage(page: PageInput, now: number): Promise<PageRow> {
    // One page per artifact (unique artifact_id): re-publishing updates it in place and keeps its
    // slug. A page an operator took down is not touched (decided in the statement itself, so a
    // takedown racing a publish is never lost); then no row is returned and the page is read.
    // The artifact row is locked first (the order a delete takes too), so of two first publishes
    // one creates the page and the other finds it: one `page.published`, one `page.updated`.
    const d = this.d;
    const fresh: PageRow = { ...page, live: true, takenDownAt: null, createdAt: now, updatedAt: now };
    const upsert = `${PAGES.insert}
       ON CONFLICT (artifact_id) DO UPDATE SET visibility = excluded.visibility, access = excluded.access,
         title = excluded.title, password_hash = excluded.password_hash, live = TRUE, updated_at = excluded.updated_at
         WHERE pages.taken_down_at IS NULL
       RETURNING ${PAGE}`;
    return this.sql.write(function* () {
      const artifact = yield* one<{ session_id: string | null }>(
        `SELECT session_id FROM artifacts WHERE id = ? AND tenant_id = ?${d.forUpdate}`,
        [page.artifactId, page.tenantId],
      );
      const prior = yield* one<{ live: unknown }>(`SELECT live FROM pages WHERE artifact_id = ?`, [page.artifactId]);
      const row = yield* one<Stored>(upsert, PAGES.values(fresh));
      if (!row) return PAGES.read((yield* one<Stored>(PAGE_OF_ARTIFACT, [page.artifactId, page.tenantId]))!);
      const stored = PAGES.read(row);
      const wasLive = prior !== null && (prior.live === true || prior.live === 1);
      const type = wasLive ? 'page.updated' : 'page.published';
      yield* appendEvents([pageEvent(type, stored, artifact?.session_id ?? null, now)]);
      return stored;
    });
  }

  async getPageBySlug(slug: string): Promise<{ page: PageRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
    const J = PAGE_ARTIFACT_TENANT;
    const v = await this.sql.row(GET_PAGE, [slug]);
    if (!v) return null;
    return { page: J.read(v, 'p')!, artifact: J.read(v, 'a')!, tenant: J.read(v, 't')! };
  }

  async getPageForArtifact(tenantId: string, artifactId: string): Promise<PageRow | null> {
    return PAGES.read(await this.sql.one<Stored>(PAGE_OF_ARTIFACT, [artifactId, tenantId]));
  }

  async unpublishPage(tenantId: string, idOrSlug: string, now: number): Promise<PageRow | null> {
    const d = this.d;
    return this.sql.write(function* () {
      const bySlug = `SELECT ${PAGE} FROM pages WHERE slug = ? AND tenant_id = ?${d.forUpdate}`;
      const row =
        (yield* one<Stored>(bySlug, [idOrSlug, tenantId])) ??
        (yield* one<Stored>(`${PAGE_OF_ARTIFACT}${d.forUpdate}`, [idOrSlug, tenantId]));
      if (!row) return null;
      if (!PAGES.read(row).live) return PAGES.read(row);
      yield* run('UPDATE pages SET live = FALSE, updated_at = ? WHERE slug = ?', [now, row.slug]);
      const offline = PAGES.read({ ...row, live: false, updated_at: now });
      const session = yield* sessionOf(offline.artifactId, tenantId);
      yield* appendEvents([pageEvent('page.unpublished', offline, session, now)]);
      return offline;
    });
  }

  async takeDownPage(slug: string, now: number): Promise<PageRow | null> {
    const d = this.d;
    return this.sql.write(function* () {
      const before = yield* one<{ taken_down_at: number | null }>(
        `SELECT taken_down_at FROM pages WHERE slug = ?${d.forUpdate}`,
        [slug],
      );
      if (!before) return null;
      const row = PAGES.read(
        (yield* one<Stored>(
          `UPDATE pages SET live = FALSE, taken_down_at = coalesce(taken_down_at, ?), updated_at = ? WHERE slug = ?
           RETURNING ${PAGE}`,
          [now, now, slug],
        ))!,
      );
      // The owner hears of the first takedown only.
      if (before.taken_down_at === null) {
        const session = yield* sessionOf(row.artifactId, row.tenantId);
        yield* appendEvents([pageEvent('page.taken_down', row, session, now)]);
      }
      return row;
    });
  }

  async restorePage(slug: string, now: number): Promise<PageRow | null> {
    const row = await this.sql.change<Stored>(
      `UPDATE pages SET taken_down_at = NULL,
         updated_at = CASE WHEN taken_down_at IS NULL THEN updated_at ELSE ? END
       WHERE slug = ? RETURNING ${PAGE}`,
      [now, slug],
    );
    return PAGES.read(row);
  }
}
