import type {
  NewResumable,
  ResumableRow,
  ResumableSegment,
  ResumableUploadStore,
} from '../../ports/resumable-upload-store.js';
import type { SqlDriver } from './runner.js';
import { type Stored, table } from './table.js';

const UPLOADS = table<ResumableRow>()(
  'resumable_uploads',
  'id tenant_id length_bytes offset_bytes segments created_at expires_at lease_owner lease_until',
  { segments: 'json' },
);
const COLUMNS = UPLOADS.list;
const GET = `SELECT ${COLUMNS} FROM resumable_uploads WHERE id = ? AND tenant_id = ?`;

/**
 * ResumableUploadStore in SQL written once for SQLite and PostgreSQL (see SqlDriver). Each write
 * is one conditional statement; where a method reads first (appendResumable, leaseResumable's
 * answer), the write's conditions are what make it safe.
 */
export class SqlResumableUploads implements ResumableUploadStore {
  constructor(private readonly sql: SqlDriver) {}

  async createResumable(row: NewResumable): Promise<void> {
    const fresh = { ...row, offsetBytes: 0, segments: [], leaseOwner: null, leaseUntil: null };
    await this.sql.run(UPLOADS.insert, UPLOADS.values(fresh));
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

  async listExpiredResumables(now: number, batch: number): Promise<ResumableRow[]> {
    const rows = await this.sql.all<Stored>(
      `SELECT ${COLUMNS} FROM resumable_uploads
       WHERE expires_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY expires_at LIMIT ?`,
      [now, now, batch],
    );
    return rows.map((r) => UPLOADS.read(r));
  }

  async openResumables(tenantId: string, now: number): Promise<{ count: number; lengthBytes: number }> {
    const r = await this.sql.one<{ n: number | string; bytes: number | string }>(
      `SELECT count(*) AS n, CAST(coalesce(sum(length_bytes), 0) AS BIGINT) AS bytes
       FROM resumable_uploads WHERE tenant_id = ? AND expires_at > ?`,
      [tenantId, now],
    );
    return { count: Number(r?.n ?? 0), lengthBytes: Number(r?.bytes ?? 0) };
  }
}
