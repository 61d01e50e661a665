import type { ArtifactList, ArtifactRecord, DeleteResult } from '../wire/artifacts.js';
import type { CoreDeps } from './context.js';
import { encodeCursor } from './cursor.js';
import { CairnError } from './errors.js';
import { checkArtifactId, requireReadable } from './lifecycle.js';
import { parseArtifactQuery, type RawQuery } from './list-query.js';
import { PENDING_RETENTION_MS } from './presigned.js';
import { artifactRecord, pendingRecord } from './records.js';
import type { Caller } from './tenants.js';
import { toIso } from './time.js';

/** The ports and settings this service uses, of CoreDeps. */
export type ArtifactServiceDeps = Pick<CoreDeps, 'artifactStore' | 'clock' | 'origins'>;

/** Reads and soft deletes of artifact records. */
export class ArtifactService {
  constructor(private readonly deps: ArtifactServiceDeps) {}

  async get(caller: Caller, id: string): Promise<ArtifactRecord> {
    checkArtifactId(id);
    const { artifactStore, clock, origins } = this.deps;
    const found = await artifactStore.getArtifactWithPage(caller.tenant.id, id);
    const now = clock.now();
    const row = found?.artifact ?? null;
    // A reservation (presigned or resumable) is its owner's to see: recovery after an answer that
    // was lost starts by looking. It stays unreadable everywhere else (downloads, links, pages).
    if (row?.status === 'pending' && row.createdAt + PENDING_RETENTION_MS > now) {
      return pendingRecord(row, row.createdAt + PENDING_RETENTION_MS, origins);
    }
    return artifactRecord(requireReadable(row, now, id), found?.page ?? null, origins);
  }

  async list(caller: Caller, raw: RawQuery): Promise<ArtifactList> {
    const { query, limit } = parseArtifactQuery(raw, this.deps.clock.now());
    const rows = await this.deps.artifactStore.listArtifacts(caller.tenant.id, query);
    const shown = rows.slice(0, limit);
    const last = shown.at(-1);
    const hasMore = rows.length > limit && last !== undefined;
    return {
      // Lists never carry the page summary (spec): it would cost a lookup per row.
      artifacts: shown.map((row) => artifactRecord(row, null, this.deps.origins)),
      next_cursor: hasMore ? encodeCursor([last.createdAt, last.id]) : null,
      has_more: hasMore,
    };
  }

  async softDelete(caller: Caller, id: string): Promise<DeleteResult> {
    checkArtifactId(id);
    const { artifactStore, clock } = this.deps;
    const now = clock.now();
    requireReadable(await artifactStore.getArtifact(caller.tenant.id, id), now, id);
    const result = await artifactStore.softDeleteArtifact(caller.tenant.id, id, now);
    // Someone else deleted it between our read and our write: the store says who changed the row.
    if (!result?.deleted) throw new CairnError('artifact_already_deleted', 'Artifact was deleted.');
    return { artifact_id: id, deleted: true, deleted_at: toIso(now) };
  }
}
