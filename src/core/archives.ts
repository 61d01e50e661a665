import type { ArtifactQuery, ArtifactRow, TenantRow } from '../ports/metadata-store.js';
import { assignEntryNames } from '../shared/archive-names.js';
import { formatBytes, formatCount } from '../shared/units.js';
import type { ArchiveUrl } from '../wire/archives.js';
import type { CoreDeps } from './context.js';
import { CairnError, invalid } from './errors.js';
import { parseArtifactQuery, type RawQuery } from './list-query.js';
import { LIMITS, PLANS } from './plans.js';
import type { Caller } from './tenants.js';
import { toIso, toIsoOrNull } from './time.js';
import { type ReleaseSlot, UploadSlots } from './upload-slots.js';

export type ArchiveFormat = 'zip' | 'tar.gz';
const FORMATS: readonly string[] = ['zip', 'tar.gz'];

const ARCHIVE_PURPOSE = 'archive';

/** Rows read per list query while an archive's contents are gathered. */
const PAGE_ROWS = 1000;

/** Archives one tenant may stream at once from one instance (their rows are held meanwhile). */
export const ARCHIVES_PER_TENANT = 4;

/** What an archive holds: the list filters it was asked with (no cursor, no limit), of one tenant. */
export interface ArchiveScope {
  /** The list filters, as the list's query string takes them. */
  filters: Record<string, string>;
  /** The session it is the archive of, when it is one (names the download, and goes in the manifest). */
  sessionId?: string;
}

/** One artifact in an archive and the name it has there. */
export interface ArchiveEntry {
  name: string;
  artifact: ArtifactRow;
}

/** Everything the content origin needs to stream an archive, decided before its first byte. */
export interface ArchivePlan {
  tenant: TenantRow;
  format: ArchiveFormat;
  /** The name the archive downloads under. */
  filename: string;
  /** Oldest first. */
  entries: ArchiveEntry[];
  /** The entries' bytes together. */
  totalBytes: number;
  /** manifest.json, the archive's first entry. */
  manifest: Buffer;
  createdAt: number;
}

/** The sealed payload of a signed archive URL. */
interface ArchiveToken {
  t: string;
  f: ArchiveFormat;
  q: Record<string, string>;
  s?: string;
}

/** The ports and settings this service uses, of CoreDeps. */
export type ArchiveServiceDeps = Pick<CoreDeps, 'artifactStore' | 'tenantStore' | 'clock' | 'origins' | 'signer'>;

/**
 * Archives of many artifacts in one download: a session, or whatever a list query matches. The API
 * answers with a signed URL (one hour) on the content origin, which streams the archive: the
 * list is read again there, so the archive holds what the list shows when it is fetched. Bounds
 * (10,000 artifacts, the plan's storage) are checked both times, before any byte is sent.
 */
export class ArchiveService {
  /** Archives being streamed per tenant, in this process. */
  readonly streams: UploadSlots;

  constructor(private readonly deps: ArchiveServiceDeps) {
    this.streams = new UploadSlots(
      ARCHIVES_PER_TENANT,
      (n) => `Too many archives being downloaded for this account at once (at most ${n}); retry when one has finished.`,
    );
  }

  /** `GET /v1/artifacts/archive`: the archive of every artifact the list filters match. */
  async listArchiveUrl(caller: Caller, raw: RawQuery): Promise<ArchiveUrl> {
    const { format, rest } = takeFormat(raw);
    for (const key of ['cursor', 'limit']) {
      if (key in rest) throw invalid(`An archive holds every match of the filters: ${key} is not taken here.`);
    }
    parseArtifactQuery(rest, this.deps.clock.now()); // refuses what the list would refuse
    return this.urlFor(caller.tenant, format, { filters: onlyStrings(rest) });
  }

  /** `GET /v1/sessions/{id}/archive`: the archive of a session's live artifacts. */
  async sessionArchiveUrl(caller: Caller, sessionId: string, raw: RawQuery): Promise<ArchiveUrl> {
    const { format, rest } = takeFormat(raw);
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined)
      throw invalid(`Unknown query parameter '${unknown.slice(0, 80)}' (only format is taken).`);
    const session = await this.requireSession(caller.tenant.id, sessionId);
    return this.urlFor(caller.tenant, format, sessionScope(session));
  }

  /** The session's id as stored, or 404 `session_not_found` (another tenant's too). */
  async requireSession(tenantId: string, sessionId: string): Promise<string> {
    const row = LABEL_LIKE.test(sessionId) ? await this.deps.artifactStore.getSession(tenantId, sessionId) : null;
    if (!row) {
      throw new CairnError(
        'session_not_found',
        `Session '${sessionId.slice(0, 128)}' not found in this account. List sessions: GET /v1/sessions.`,
      );
    }
    return row.sessionId;
  }

  /** The plan of a signed archive URL's token; null (→ a bare 404) when it is invalid, expired or its tenant suspended. */
  async resolveToken(token: string): Promise<ArchivePlan | null> {
    const { clock, signer, tenantStore } = this.deps;
    const payload = signer.open(ARCHIVE_PURPOSE, token, clock.now()) as ArchiveToken | null;
    if (!payload || typeof payload.t !== 'string') return null;
    const tenant = await tenantStore.getTenant(payload.t);
    if (!tenant || tenant.suspended) return null;
    const scope: ArchiveScope = { filters: payload.q, ...(payload.s ? { sessionId: payload.s } : {}) };
    return this.plan(tenant, payload.f, scope);
  }

  /**
   * What an archive of `scope` holds now, with its names and manifest; refuses (400 past 10,000
   * artifacts, 413 past the plan's storage) before anything is streamed.
   */
  async plan(tenant: TenantRow, format: ArchiveFormat, scope: ArchiveScope): Promise<ArchivePlan> {
    const now = this.deps.clock.now();
    const rows = await this.gather(tenant.id, scope, now);
    const totalBytes = rows.reduce((sum, r) => sum + r.sizeBytes, 0);
    const storage = PLANS[tenant.plan].storageBytes;
    if (totalBytes > storage) {
      throw new CairnError(
        'file_too_large',
        `This archive would hold ${formatBytes(totalBytes)}, more than the ${tenant.plan} plan's storage ` +
          `(${formatBytes(storage)}), the most one archive may hold: narrow it with filters (created_after, agent_id, metadata.<key>).`,
      );
    }
    const names = assignEntryNames(rows);
    const entries = rows.map((artifact, i) => ({ name: names[i] as string, artifact }));
    return {
      tenant,
      format,
      filename: `${scope.sessionId ?? `artifacts-${toIso(now).slice(0, 19).replace(/[-:]/g, '')}Z`}.${format}`,
      entries,
      totalBytes,
      manifest: manifest(entries, scope, now, totalBytes),
      createdAt: now,
    };
  }

  /** Takes one of the tenant's archive streams, or throws 429 `rate_limited`. */
  takeStream(tenantId: string): ReleaseSlot {
    return this.streams.take(tenantId);
  }

  private urlFor(tenant: TenantRow, format: ArchiveFormat, scope: ArchiveScope): Promise<ArchiveUrl> {
    return this.plan(tenant, format, scope).then((plan) => {
      const { clock, signer, origins } = this.deps;
      const exp = Math.floor(clock.now() / 1000) + LIMITS.archiveUrlSeconds;
      const token: ArchiveToken = { t: tenant.id, f: format, q: scope.filters };
      if (scope.sessionId) token.s = scope.sessionId;
      return {
        archive_url: `${origins.content}/z/${signer.seal(ARCHIVE_PURPOSE, token, exp)}/${encodeURIComponent(plan.filename)}`,
        expires_in: LIMITS.archiveUrlSeconds,
        format,
        filename: plan.filename,
        artifact_count: plan.entries.length,
        size_bytes: plan.totalBytes,
      };
    });
  }

  /** Every live artifact the filters match, oldest first; refuses past 10,000. */
  private async gather(tenantId: string, scope: ArchiveScope, now: number): Promise<ArtifactRow[]> {
    const { query } = parseArtifactQuery(scope.filters, now);
    const max = LIMITS.archiveArtifacts;
    const rows: ArtifactRow[] = [];
    let after: ArtifactQuery['after'];
    for (;;) {
      const page = await this.deps.artifactStore.listArtifacts(tenantId, {
        ...query,
        limit: PAGE_ROWS,
        ...(after ? { after } : {}),
      });
      rows.push(...page);
      if (rows.length > max) {
        throw invalid(
          `These filters match more than ${formatCount(max)} artifacts, the most one archive holds: ` +
            'narrow them (created_after, created_before, agent_id, metadata.<key>=<value>).',
        );
      }
      const last = page.at(-1);
      if (page.length < PAGE_ROWS || !last) break;
      after = { createdAt: last.createdAt, id: last.id };
    }
    return rows.reverse();
  }
}

/** A session id's shape, checked before the store is asked (anything else cannot exist). */
const LABEL_LIKE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const sessionScope = (sessionId: string): ArchiveScope => ({ filters: { session_id: sessionId }, sessionId });

function takeFormat(raw: RawQuery): { format: ArchiveFormat; rest: RawQuery } {
  const { format, ...rest } = raw;
  if (format === undefined) return { format: 'zip', rest };
  if (typeof format !== 'string' || !FORMATS.includes(format)) {
    throw invalid('format must be zip (the default) or tar.gz.');
  }
  return { format: format as ArchiveFormat, rest };
}

function onlyStrings(raw: RawQuery): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** manifest.json: what the archive holds, entry by entry, so that a reader can check every file. */
function manifest(entries: ArchiveEntry[], scope: ArchiveScope, now: number, totalBytes: number): Buffer {
  const body = {
    manifest_version: 1,
    created_at: toIso(now),
    ...(scope.sessionId ? { session_id: scope.sessionId } : { filters: scope.filters }),
    artifact_count: entries.length,
    size_bytes: totalBytes,
    entries: entries.map(({ name, artifact: a }) => ({
      path: name,
      artifact_id: a.id,
      filename: a.filename,
      content_type: a.contentType,
      size_bytes: a.sizeBytes,
      sha256: a.contentHash,
      metadata: a.metadata,
      session_id: a.sessionId,
      agent_id: a.agentId,
      created_at: toIso(a.createdAt),
      expires_at: toIsoOrNull(a.expiresAt),
    })),
  };
  return Buffer.from(`${JSON.stringify(body, null, 2)}\n`, 'utf8');
}
