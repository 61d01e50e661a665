import type {
  NewResumable,
  ResumableCaps,
  ResumableRow,
  ResumableSegment,
  ResumableUploadStore,
} from '../../ports/resumable-upload-store.js';
import type { SqlDriver } from './runner.js';
import { type Stored, table } from './table.js';
import { all, one, run } from './work.js';

const UPLOADS = table<ResumableRow>()(
  'resumable_uploads',
  'id tenant_id length_bytes offset_bytes segments created_at expires_at lease_owner lease_until',
  { segments: 'json' },
);
const COLUMNS = UPLOADS.list;
const GET = `SELECT ${COLUMNS} FROM resumable_uploads WHERE id = ? AND tenant_id = ?`;
/** A tenant's unfinished uploads: how many, and their lengths. */
const OPEN = `SELECT count(*) AS n, CAST(coalesce(sum(length_bytes), 0) AS BIGINT) AS bytes
  FROM resumable_uploads WHERE tenant_id = ? AND expires_at > ?`;
type OpenFigures = { n: number | string; bytes: number | string };

/**
 * ResumableUploadStore in SQL written once for SQLite and PostgreSQL (see SqlDriver). Each write
 * is one conditional statement; where a method reads first (appendResumable, leaseResumable's
 * answer), the write's conditions are what make it safe.
 */
export class SqlResumableUploads implements ResumableUploadStore {
  constructor(private readonly sql: SqlDriver) {}

  async createResumable(row: NewResumable, caps: ResumableCaps): Promise<'created' | 'too_many' | 'storage_full'> {
    const fresh = { ...row, offsetBytes: 0, segments: [], leaseOwner: null, leaseUntil: null };
    const lockTenant = `SELECT storage_bytes FROM tenants WHERE id = ?${this.sql.dialect.forNoKeyUpdate}`;
    return this.sql.write(function* () {
      // The tenant row's lock makes the count, the sum and the insert one step for the tenant
      // across instances (as for links and keys); SQLite's write transaction holds the database.
      const tenant = yield* one<{ storage_bytes: number }>(lockTenant, [row.tenantId]);
      if (!tenant) throw new Error(`Unknown tenant ${row.tenantId}.`);
      const open = (yield* one<OpenFigures>(OPEN, [row.tenantId, row.createdAt]))!;
      if (Number(open.n) >= caps.maxOpen) return 'too_many' as const;
      if (Number(tenant.storage_bytes) + Number(open.bytes) + row.lengthBytes > caps.storageLimitBytes) {
        return 'storage_full' as const;
      }
      yield* run(UPLOADS.insert, UPLOADS.values(fresh));
      return 'created' as const;
    });
  }

  async getResumable(tenantId: string, id: string): Promise<ResumableRow | null> {
    return UPLOADS.read(await this.sql.one<Stored>(GET, [id, tenantId]));
  }

  async leaseResumable(
    tenantId: string,
    id: string,
    owner: string,
    now: number,
    until: number,
  ): Promise<ResumableRow | 'held' | null> {
    const r = await this.sql.change<Stored>(
      `UPDATE resumable_uploads SET lease_owner = ?, lease_until = ?
       WHERE id = ? AND tenant_id = ? AND (lease_owner IS NULL OR lease_until <= ? OR lease_owner = ?)
       RETURNING ${COLUMNS}`,
      [owner, until, id, tenantId, now, owner],
    );
    if (r) return UPLOADS.read(r);
    return (await this.sql.one(GET, [id, tenantId])) ? 'held' : null;
  }

  async renewResumableLease(id: string, owner: string, until: number): Promise<boolean> {
    const renew = 'UPDATE resumable_uploads SET lease_until = ? WHERE id = ? AND lease_owner = ?';
    return (await this.sql.run(renew, [until, id, owner])) === 1;
  }

  async releaseResumable(id: string, owner: string): Promise<void> {
    await this.sql.run(
      'UPDATE resumable_uploads SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?',
      [id, owner],
    );
  }

  /**
   * Read, then a write conditional on the offset read: segments change only together with the
   * offset, so if the offset (and the lease) are still as read, so are the segments.
   */
  async appendResumable(
    id: string,
    owner: string,
    fromOffset: number,
    segment: ResumableSegment,
    now: number,
  ): Promise<boolean> {
    const r = await this.sql.one<{ segments: string; offset_bytes: number; lease_owner: string | null }>(
      'SELECT segments, offset_bytes, lease_owner FROM resumable_uploads WHERE id = ?',
      [id],
    );
    if (!r || Number(r.offset_bytes) !== fromOffset || r.lease_owner !== owner) return false;
    const segments = [...(JSON.parse(r.segments) as ResumableSegment[]), segment];
    const changed = await this.sql.run(
      `UPDATE resumable_uploads SET offset_bytes = ?, segments = ?
       WHERE id = ? AND lease_owner = ? AND offset_bytes = ? AND expires_at > ?`,
      [fromOffset + segment.sizeBytes, JSON.stringify(segments), id, owner, fromOffset, now],
    );
    return changed === 1;
  }

  async deleteResumable(tenantId: string, id: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM resumable_uploads WHERE id = ? AND tenant_id = ?', [id, tenantId])) === 1;
  }

  async claimExpiredResumables(owner: string, now: number, until: number, batch: number): Promise<ResumableRow[]> {
    // As the other sweeper batches: candidates another sweeper is claiming right now are skipped
    // (PostgreSQL), and the lease each claimed row gets keeps every later claim off it.
    const claim = `UPDATE resumable_uploads SET lease_owner = ?, lease_until = ? WHERE id IN (
        SELECT id FROM resumable_uploads WHERE expires_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
        ORDER BY expires_at LIMIT ?${this.sql.dialect.skipLocked})
      RETURNING ${COLUMNS}`;
    const rows = await this.sql.write(() => all<Stored>(claim, [owner, until, now, now, batch]));
    return rows.map((r) => UPLOADS.read(r)).sort((a, b) => a.expiresAt - b.expiresAt || (a.id < b.id ? -1 : 1));
  }

  async openResumables(tenantId: string, now: number): Promise<{ count: number; lengthBytes: number }> {
    const r = await this.sql.one<OpenFigures>(OPEN, [tenantId, now]);
    return { count: Number(r?.n ?? 0), lengthBytes: Number(r?.bytes ?? 0) };
  }
}
