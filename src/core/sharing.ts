import type { ArtifactRow, SessionLinkRow, TenantRow } from '../ports/metadata-store.js';
import { durationSeconds } from '../shared/duration.js';
import type {
  BatchDownloadUrl,
  BatchDownloadUrls,
  DownloadUrl,
  LinkList,
  LinkRecord,
  RevokeLinkResult,
  SessionLinkList,
  SessionLinkRecord,
} from '../wire/sharing.js';
import { blobKey, type CoreDeps } from './context.js';
import { encodeCursor } from './cursor.js';
import { CairnError, invalid } from './errors.js';
import { ARTIFACT_ID, LABEL, LINK_ID, newLinkId } from './ids.js';
import { checkArtifactId, isServable, requireReadable, settleExpiry } from './lifecycle.js';
import { parseLinkQuery, type RawQuery } from './list-query.js';
import { LIMITS, PLANS } from './plans.js';
import { sessionLinkRecord } from './records.js';
import type { Caller } from './tenants.js';
import { toIso } from './time.js';
import { shownDuration } from './ttl.js';

const DOWNLOAD_PURPOSE = 'download';

/** An id the caller cannot download: unknown or another tenant's, deleted, expired. */
const GONE = new Set(['artifact_not_found', 'artifact_already_deleted', 'artifact_expired']);

/** Something the content origin may stream to an anonymous client. */
export interface Servable {
  artifact: ArtifactRow;
  tenant: TenantRow;
}

/** A live session link, as the content and viewer origins resolve it. */
export interface ServableSession {
  link: SessionLinkRow;
  tenant: TenantRow;
}

/** The ports and settings this service uses, of CoreDeps. */
export type SharingServiceDeps = Pick<
  CoreDeps,
  'artifactStore' | 'sharingStore' | 'blobs' | 'clock' | 'directDownloads' | 'origins' | 'signer' | 'upgradeUrl'
>;

/**
 * Two ways to hand bytes to someone without a key: a private signed URL (one hour, for the
 * caller itself) and a download link (a shareable `lnk_` URL with its own lifetime and quota).
 * Both are served by the content origin and both stop working the moment the artifact goes.
 */
export class SharingService {
  constructor(private readonly deps: SharingServiceDeps) {}

  async downloadUrl(caller: Caller, id: string): Promise<DownloadUrl> {
    checkArtifactId(id);
    const { artifactStore, clock, signer, origins } = this.deps;
    const now = clock.now();
    const row = requireReadable(await artifactStore.getArtifact(caller.tenant.id, id), now, id);
    const exp = Math.floor(now / 1000) + LIMITS.downloadUrlSeconds;
    const { blobs, directDownloads } = this.deps;
    const url =
      directDownloads && blobs.presignGet
        ? await blobs.presignGet(
            blobKey(row.tenantId, row.contentHash),
            row.filename,
            row.contentType,
            LIMITS.downloadUrlSeconds,
          )
        : `${origins.content}/d/${id}?exp=${exp}&sig=${signer.sign(DOWNLOAD_PURPOSE, id, exp)}`;
    return {
      download_url: url,
      expires_in: LIMITS.downloadUrlSeconds,
      filename: row.filename,
      content_type: row.contentType,
      size_bytes: row.sizeBytes,
    };
  }

  /**
   * Download URLs for 1-20 artifacts, one item per requested id in request order (a repeated id
   * gets its URL twice). An id with no URL gets the error its own download-url call would have
   * answered, in the item; anything else (a malformed id, a store failure) fails the whole call.
   */
  async downloadUrls(caller: Caller, ids: unknown): Promise<BatchDownloadUrls> {
    const max = LIMITS.batchDownloadUrls;
    if (!Array.isArray(ids) || ids.length < 1 || ids.length > max) {
      throw invalid(`artifact_ids must be an array of 1 to ${max} artifact ids.`);
    }
    ids.forEach((id, i) => {
      if (typeof id !== 'string' || !ARTIFACT_ID.test(id)) {
        throw invalid(`artifact_ids[${i}] is not an artifact id (art_ followed by 16 letters or digits).`);
      }
    });
    const items = await Promise.all(
      (ids as string[]).map(async (id): Promise<BatchDownloadUrl> => {
        try {
          return { artifact_id: id, ...(await this.downloadUrl(caller, id)) };
        } catch (err) {
          if (!(err instanceof CairnError) || !GONE.has(err.code)) throw err;
          return { artifact_id: id, error: { code: err.code, message: err.message, status: err.status } };
        }
      }),
    );
    return { download_urls: items };
  }

  /** Resolves a signed download URL; null (→ a bare 404) for anything invalid, expired or gone. */
  async resolveSigned(id: string, exp: string | undefined, sig: string | undefined): Promise<Servable | null> {
    if (exp === undefined || sig === undefined || !/^\d{1,12}$/.test(exp)) return null;
    const now = this.deps.clock.now();
    if (!this.deps.signer.verify(DOWNLOAD_PURPOSE, id, Number(exp), sig, now)) return null;
    return this.servable(await this.deps.artifactStore.getArtifactAnyTenant(id), now);
  }

  async createLink(caller: Caller, id: string, lifetime: LinkLifetime = {}): Promise<LinkRecord> {
    checkArtifactId(id);
    const seconds = linkSeconds(lifetime);
    const { artifactStore, sharingStore, clock, origins } = this.deps;
    const now = clock.now();
    requireReadable(await artifactStore.getArtifact(caller.tenant.id, id), now, id);
    const link = {
      id: newLinkId(),
      tenantId: caller.tenant.id,
      artifactId: id,
      createdAt: now,
      expiresAt: now + seconds * 1000,
      revokedAt: null,
    };
    await this.underCap(caller, (max) => sharingStore.createLink(link, max, now));
    return {
      link_id: link.id,
      url: `${origins.download}/${link.id}`,
      artifact_id: id,
      expires_at: toIso(link.expiresAt),
      created_at: toIso(now),
    };
  }

  /**
   * A link to a sealed session's archive (sealed, so what it serves cannot grow): `url` is its
   * page on the viewer origin (the files with their sizes, and "download all"), `archive_url` the
   * archive itself on the download origin. Lifetime, cap and revoke as for an artifact's link.
   */
  async createSessionLink(caller: Caller, sessionId: string, lifetime: LinkLifetime = {}): Promise<SessionLinkRecord> {
    const seconds = linkSeconds(lifetime);
    const { artifactStore, sharingStore, clock } = this.deps;
    const session = await artifactStore.getSession(caller.tenant.id, checkSessionId(sessionId));
    if (!session) throw sessionNotFound(sessionId);
    if (session.sealedAt === null) {
      throw new CairnError(
        'invalid_request',
        `Session '${session.sessionId}' is not sealed: only a sealed session can be shared by a link, so that what ` +
          'the link serves cannot change. Seal it first: POST /v1/sessions/{id}/seal (irreversible).',
      );
    }
    const now = clock.now();
    const link: SessionLinkRow = {
      id: newLinkId(),
      tenantId: caller.tenant.id,
      sessionId: session.sessionId,
      createdAt: now,
      expiresAt: now + seconds * 1000,
      revokedAt: null,
    };
    await this.underCap(caller, (max) => sharingStore.createSessionLink(link, max, now));
    return { ...sessionLinkRecord(link, this.deps.origins), session_id: session.sessionId };
  }

  /** The artifact's unexpired links, newest first, a page at a time. */
  async listLinks(caller: Caller, id: string, raw: RawQuery): Promise<LinkList> {
    checkArtifactId(id);
    const { artifactStore, sharingStore, clock, origins } = this.deps;
    const now = clock.now();
    const { query, limit } = parseLinkQuery(raw, now);
    requireReadable(await artifactStore.getArtifact(caller.tenant.id, id), now, id);
    const rows = await sharingStore.listLinks(caller.tenant.id, id, query);
    return linkPage(rows, limit, (l) => ({
      link_id: l.id,
      url: `${origins.download}/${l.id}`,
      expires_at: toIso(l.expiresAt),
      created_at: toIso(l.createdAt),
    }));
  }

  /** The session's unexpired links, newest first, a page at a time. */
  async listSessionLinks(caller: Caller, sessionId: string, raw: RawQuery): Promise<SessionLinkList> {
    const { artifactStore, sharingStore, clock } = this.deps;
    const { query, limit } = parseLinkQuery(raw, clock.now());
    const session = await artifactStore.getSession(caller.tenant.id, checkSessionId(sessionId));
    if (!session) throw sessionNotFound(sessionId);
    const rows = await sharingStore.listSessionLinks(caller.tenant.id, session.sessionId, query);
    return linkPage(rows, limit, (l) => sessionLinkRecord(l, this.deps.origins));
  }

  /** A live session link (unexpired, unrevoked, its tenant not suspended), or null (→ a bare 404). */
  async resolveSessionLink(linkId: string): Promise<ServableSession | null> {
    if (!LINK_ID.test(linkId)) return null;
    const found = await this.deps.sharingStore.getSessionLink(linkId);
    const now = this.deps.clock.now();
    if (!found || found.link.revokedAt !== null || found.link.expiresAt <= now || found.tenant.suspended) return null;
    return found;
  }

  /** Runs `insert` with the plan's cap of active links (both kinds), or throws 403 `quota_exceeded`. */
  private async underCap(caller: Caller, insert: (max: number) => Promise<boolean>): Promise<void> {
    const max = PLANS[caller.tenant.plan].activeLinks;
    // Links of artifacts that expired since the last sweep must not hold places under the cap.
    await settleExpiry(this.deps, caller.tenant.id);
    if (!(await insert(max))) {
      throw new CairnError('quota_exceeded', `The ${caller.tenant.plan} plan allows ${max} active links.`, {
        upgradeUrl: this.deps.upgradeUrl,
      });
    }
  }

  /**
   * Revokes a link: it is marked revoked, so the next request for its URL (on any instance: every
   * request reads the store) is a 404, and it frees its place under the plan's cap. Idempotent for
   * its owner: one already revoked (kept a day) answers the same, as does one expired and not yet
   * swept. An id that names none of the caller's links, another tenant's included, is not found,
   * as every other object of another tenant is: the answer says nothing about other tenants' ids.
   */
  async revokeLink(caller: Caller, linkId: string): Promise<RevokeLinkResult> {
    if (!LINK_ID.test(linkId)) throw invalid('link_id must be lnk_ followed by 20 letters or digits.');
    if (!(await this.deps.sharingStore.revokeLink(caller.tenant.id, linkId, this.deps.clock.now()))) {
      throw linkNotFound(linkId);
    }
    return { link_id: linkId, revoked: true };
  }

  async resolveLink(linkId: string): Promise<Servable | null> {
    if (!LINK_ID.test(linkId)) return null;
    const found = await this.deps.sharingStore.getLink(linkId);
    const now = this.deps.clock.now();
    if (!found || found.link.revokedAt !== null || found.link.expiresAt <= now) return null;
    return this.servable(found, now);
  }

  private servable(found: Servable | null, now: number): Servable | null {
    if (!found || found.tenant.suspended || !isServable(found.artifact, now)) return null;
    return found;
  }
}

/** One page of a keyset-paginated link list. */
function linkPage<Row extends { createdAt: number; id: string }, Item>(
  rows: Row[],
  limit: number,
  item: (row: Row) => Item,
): { links: Item[]; next_cursor: string | null; has_more: boolean } {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  const hasMore = rows.length > limit && last !== undefined;
  return {
    links: shown.map(item),
    next_cursor: hasMore ? encodeCursor([last.createdAt, last.id]) : null,
    has_more: hasMore,
  };
}

/** A session id's shape (anything else cannot exist: not found, as for a well-formed unknown one). */
function checkSessionId(sessionId: string): string {
  if (!LABEL.test(sessionId)) throw sessionNotFound(sessionId);
  return sessionId;
}

const sessionNotFound = (id: string) =>
  new CairnError(
    'session_not_found',
    `Session '${id.slice(0, 128)}' not found in this account. List sessions: GET /v1/sessions.`,
  );

/** 404 with the code of every other object the caller cannot see (the links routes' own 404). */
const linkNotFound = (id: string) =>
  new CairnError(
    'artifact_not_found',
    `Link ${id} not found in this account (or removed with its artifact). ` +
      "An artifact's live links: GET /v1/artifacts/{id}/links.",
  );

/** How long a new link lives: `expires_in` seconds, or `ttl` as a duration (`"3d"`); neither is 7 days. */
export interface LinkLifetime {
  expiresIn?: unknown;
  ttl?: unknown;
}

const LINK_MAX = `${LIMITS.linkMaxSeconds / 86_400} days`;

function linkSeconds({ expiresIn, ttl }: LinkLifetime): number {
  const given = (v: unknown) => v !== undefined && v !== null;
  if (given(expiresIn) && given(ttl)) {
    throw invalid('Give the link\'s lifetime once: expires_in (seconds, e.g. 259200) or ttl (e.g. "3d"), not both.');
  }
  if (given(ttl)) {
    const seconds = typeof ttl === 'string' ? durationSeconds(ttl) : null;
    if (seconds === null) {
      throw invalid(`ttl must be a duration such as "3d", "12h" or "90m" (at most "30d"); got ${JSON.stringify(ttl)}.`);
    }
    if (seconds > LIMITS.linkMaxSeconds) {
      throw invalid(`ttl ${shownDuration(ttl as string)} is longer than a share link may live (${LINK_MAX}: "30d").`);
    }
    return seconds;
  }
  if (!given(expiresIn)) return LIMITS.linkDefaultSeconds;
  if (
    typeof expiresIn !== 'number' ||
    !Number.isInteger(expiresIn) ||
    expiresIn < 1 ||
    expiresIn > LIMITS.linkMaxSeconds
  ) {
    throw invalid(
      `expires_in must be an integer number of seconds from 1 to ${LIMITS.linkMaxSeconds} (${LINK_MAX}), ` +
        'e.g. 259200 for 3 days; or give ttl as a duration, e.g. "3d".',
    );
  }
  return expiresIn;
}
