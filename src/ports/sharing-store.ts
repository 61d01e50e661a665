import type { ArtifactRow, LinkRow, PageRow, SessionLinkRow, TenantRow } from './metadata-records.js';

/**
 * What a tenant shares of its artifacts with people who hold no key: download links and published
 * pages (with the operator's takedowns).
 *
 * The rules every metadata port shares (each method atomic, timestamps in epoch milliseconds,
 * conflicts thrown as `CairnError`) are in metadata-store.ts.
 */

export interface LinkQuery {
  now: number;
  limit: number;
  /** `[createdAt, id]` of the last link already returned. */
  after?: [number, string];
}

/** What a publish writes; the store keeps `live`, `takenDownAt` and the timestamps. */
export type PageInput = Omit<PageRow, 'live' | 'takenDownAt' | 'createdAt' | 'updatedAt'>;

export interface SharingStore {
  // --- download links ---
  /**
   * Inserts the link unless the tenant already has `maxActive` active links (unexpired at `now`,
   * not revoked); says which happened. The check and the insert are one step: concurrent
   * creations, from any number of instances, never pass the cap together.
   */
  createLink(link: LinkRow, maxActive: number, now: number): Promise<boolean>;
  /** Any link by id, revoked ones included (with `revokedAt` set): the caller decides what it serves. */
  getLink(id: string): Promise<{ link: LinkRow; artifact: ArtifactRow; tenant: TenantRow } | null>;
  /**
   * Inserts a session link under the same cap as `createLink` (one count of both kinds of link),
   * checked and inserted in one step; says which happened.
   */
  createSessionLink(link: SessionLinkRow, maxActive: number, now: number): Promise<boolean>;
  /** Any session link by id, revoked ones included, with its tenant. */
  getSessionLink(id: string): Promise<{ link: SessionLinkRow; tenant: TenantRow } | null>;
  /** The session's active links at `query.now`, newest first, as `listLinks`. */
  listSessionLinks(tenantId: string, sessionId: string, query: LinkQuery): Promise<SessionLinkRow[]>;
  /** The tenant's active links (of artifacts and of sessions): unexpired at `now` and not revoked. */
  countActiveLinks(tenantId: string, now: number): Promise<number>;
  /**
   * The artifact's active links at `query.now`, newest first (`created_at DESC, id DESC`),
   * after `query.after` (the last row of the previous page) when given; at most `query.limit`.
   */
  listLinks(tenantId: string, artifactId: string, query: LinkQuery): Promise<LinkRow[]>;
  /**
   * Revokes the tenant's link (of an artifact or of a session): `revokedAt` is set (the first revoke's time is kept) and the link
   * expires at `now`, so it is no longer active. True when the tenant has this link, also one
   * revoked or expired already and not yet purged; false for an unknown id or another tenant's,
   * which is left alone.
   */
  revokeLink(tenantId: string, linkId: string, now: number): Promise<boolean>;

  // --- pages ---
  /**
   * Publishes the artifact: creates its page with `slug` when it has none, else updates the
   * existing page (keeping its slug) and sets it live. Returns the page. A page that is taken
   * down is left exactly as it is, and returned with `takenDownAt` set: the caller refuses.
   */
  upsertPage(page: PageInput, now: number): Promise<PageRow>;
  getPageBySlug(slug: string): Promise<{ page: PageRow; artifact: ArtifactRow; tenant: TenantRow } | null>;
  getPageForArtifact(tenantId: string, artifactId: string): Promise<PageRow | null>;
  /**
   * Takes the tenant's page offline, found by artifact id or slug. Returns the page (also when it
   * was already offline), or null when this tenant has no such page.
   */
  unpublishPage(tenantId: string, artifactIdOrSlug: string, now: number): Promise<PageRow | null>;
  /**
   * Operator takedown of any tenant's page by slug: offline (live=false) and marked taken down
   * (the first takedown's time is kept), so that a publish cannot bring it back. Returns the page
   * after the change, or null when no page has this slug.
   */
  takeDownPage(slug: string, now: number): Promise<PageRow | null>;
  /**
   * Lifts a takedown: the owner may publish again. The page itself stays offline until then.
   * Returns the page after the change, or null when no page has this slug.
   */
  restorePage(slug: string, now: number): Promise<PageRow | null>;
}
