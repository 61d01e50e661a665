import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { blobKey } from '../../src/core/context.js';
import { ORPHAN_GRACE_MS } from '../../src/core/sweeper.js';
import type { Caller } from '../../src/core/tenants.js';
import type { ArtifactRecord } from '../../src/wire/index.js';
import { type CoreHarness, coreHarness, DAY_MS, HOUR_MS } from './harness.js';

/**
 * The background sweeper in the core (spec: Artifact states; API.md: Background sweeper): expiry,
 * hard deletes 30 days after a soft delete (rows, then unreferenced blobs after their grace
 * period), idempotency records after 24 h, dead links, expired resumable uploads, and the counts
 * of its report. Runs are driven by hand (`runOnce`) under the manual clock. Landings swept by file
 * age (`landingsSwept`) compare real file times with the manual clock, so no count of them is
 * asserted here.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const RETENTION_MS = 30 * DAY_MS;

const storedBlob = (t: Caller, rec: ArtifactRecord) => h.adapters.blobs.stat(blobKey(t.tenant.id, rec.content_hash));

describe('a run', () => {
  it('with nothing to do reports zeros', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'fresh');
    expect(await h.core.sweeper.runOnce()).toMatchObject({
      expired: 0,
      purged: 0,
      orphansMarked: 0,
      blobsDeleted: 0,
      idempotencyPurged: 0,
      linksPurged: 0,
      pendingPurged: 0,
      resumablesPurged: 0,
    });
  });

  it('expires artifacts past their TTL, frees their storage, and says how many', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'a'.repeat(10), { ttl: '1h' });
    await h.upload(t, 'b'.repeat(20), { ttl: '1h' });
    await h.upload(t, 'c'.repeat(5), { ttl: '2h' });
    h.clock.advance(HOUR_MS);
    expect((await h.core.sweeper.runOnce()).expired).toBe(2);
    expect((await h.refresh(t)).tenant.storageBytes).toBe(5);
    // Idempotent: the next run finds nothing more.
    expect((await h.core.sweeper.runOnce()).expired).toBe(0);
  });
});

describe('hard delete', () => {
  it('removes a soft-deleted row 30 days after its delete, not before; it then reads as not found', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'bytes', { ttl: '90d' });
    await h.core.artifacts.softDelete(t, rec.artifact_id);
    h.clock.advance(RETENTION_MS);
    expect((await h.core.sweeper.runOnce()).purged).toBe(0);
    await expect(h.core.artifacts.get(t, rec.artifact_id)).rejects.toMatchObject({ code: 'artifact_already_deleted' });
    h.clock.advance(1);
    expect((await h.core.sweeper.runOnce()).purged).toBe(1);
    await expect(h.core.artifacts.get(t, rec.artifact_id)).rejects.toMatchObject({ code: 'artifact_not_found' });
  });

  it('removes an expired row 30 days after its expiry; until then it reads as artifact_expired', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'bytes', { ttl: '1d' });
    h.clock.advance(DAY_MS + RETENTION_MS);
    expect((await h.core.sweeper.runOnce()).purged).toBe(0);
    await expect(h.core.artifacts.get(t, rec.artifact_id)).rejects.toMatchObject({ code: 'artifact_expired' });
    h.clock.advance(1);
    expect((await h.core.sweeper.runOnce()).purged).toBe(1);
    await expect(h.core.artifacts.get(t, rec.artifact_id)).rejects.toMatchObject({ code: 'artifact_not_found' });
  });

  it('deletes the bytes no row references any more, once their grace period has passed', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'bytes to go');
    await h.core.artifacts.softDelete(t, rec.artifact_id);
    h.clock.advance(RETENTION_MS + 1);
    expect(await h.core.sweeper.runOnce()).toMatchObject({ purged: 1, orphansMarked: 1, blobsDeleted: 0 });
    expect(await storedBlob(t, rec)).toEqual({ sizeBytes: 11 });
    h.clock.advance(ORPHAN_GRACE_MS);
    expect((await h.core.sweeper.runOnce()).blobsDeleted).toBe(0);
    h.clock.advance(1);
    expect(await h.core.sweeper.runOnce()).toMatchObject({ orphansMarked: 0, blobsDeleted: 1 });
    expect(await storedBlob(t, rec)).toBeNull();
  });

  it('keeps bytes another artifact of the tenant still references', async () => {
    const t = await h.tenant('acme');
    const gone = await h.upload(t, 'shared bytes');
    const kept = await h.upload(t, 'shared bytes', { ttl: '90d' });
    await h.core.artifacts.softDelete(t, gone.artifact_id);
    h.clock.advance(RETENTION_MS + ORPHAN_GRACE_MS + 1);
    await h.core.sweeper.runOnce();
    h.clock.advance(ORPHAN_GRACE_MS + 1);
    expect(await h.core.sweeper.runOnce()).toMatchObject({ orphansMarked: 0, blobsDeleted: 0 });
    expect(await storedBlob(t, kept)).toEqual({ sizeBytes: 12 });
    expect((await h.refresh(t)).tenant.storageBytes).toBe(12);
  });

  it('keeps orphaned bytes that a new upload takes again within the grace period', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'come back');
    await h.core.artifacts.softDelete(t, rec.artifact_id);
    h.clock.advance(RETENTION_MS + 1);
    expect((await h.core.sweeper.runOnce()).orphansMarked).toBe(1);
    const again = await h.upload(t, 'come back');
    h.clock.advance(ORPHAN_GRACE_MS + 1);
    expect((await h.core.sweeper.runOnce()).blobsDeleted).toBe(0);
    expect(await storedBlob(t, again)).toEqual({ sizeBytes: 9 });
  });
});

describe('idempotency records', () => {
  it('are dropped once 24 hours have passed, and counted', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'one', { idempotencyKey: 'k-1' });
    await h.upload(t, 'two', { idempotencyKey: 'k-2' });
    h.clock.advance(DAY_MS);
    expect((await h.core.sweeper.runOnce()).idempotencyPurged).toBe(0);
    h.clock.advance(1);
    expect((await h.core.sweeper.runOnce()).idempotencyPurged).toBe(2);
  });
});

describe('dead links', () => {
  it('expired links are dropped; live ones stay', async () => {
    const t = await h.tenant('acme');
    const id = (await h.upload(t, 'x')).artifact_id;
    await h.core.sharing.createLink(t, id, { expiresIn: 60 });
    await h.core.sharing.createLink(t, id, { expiresIn: 60 });
    const live = await h.core.sharing.createLink(t, id);
    h.clock.advance(60_000);
    expect((await h.core.sweeper.runOnce()).linksPurged).toBe(2);
    expect(await h.core.sharing.resolveLink(live.link_id)).not.toBeNull();
  });

  it('a revoked link is kept a day, so that revoking it again answers the same; then it is gone', async () => {
    const t = await h.tenant('acme');
    const id = (await h.upload(t, 'x')).artifact_id;
    const link = await h.core.sharing.createLink(t, id);
    await h.core.sharing.revokeLink(t, link.link_id);
    h.clock.advance(DAY_MS - 1);
    expect((await h.core.sweeper.runOnce()).linksPurged).toBe(0);
    await expect(h.core.sharing.revokeLink(t, link.link_id)).resolves.toEqual({ link_id: link.link_id, revoked: true });
    h.clock.advance(1);
    expect((await h.core.sweeper.runOnce()).linksPurged).toBe(1);
    await expect(h.core.sharing.revokeLink(t, link.link_id)).rejects.toMatchObject({ code: 'artifact_not_found' });
  });
});

describe('expired resumable uploads', () => {
  it('are removed with their pieces once 24 hours have passed since creation', async () => {
    const t = await h.tenant('acme');
    const { state } = await h.core.resumable.create(t, { filename: 'big.bin', lengthBytes: 10 }, undefined);
    await h.core.resumable.append(t, state.id, 0, Readable.from([Buffer.from('abc')]), null);
    const row = await h.adapters.resumables.getResumable(t.tenant.id, state.id);
    const piece = row?.segments[0]?.landingKey as string;
    h.clock.advance(DAY_MS - 1);
    expect((await h.core.sweeper.runOnce()).resumablesPurged).toBe(0);
    h.clock.advance(1);
    expect((await h.core.sweeper.runOnce()).resumablesPurged).toBe(1);
    expect(await h.adapters.resumables.getResumable(t.tenant.id, state.id)).toBeNull();
    await expect(h.adapters.blobs.readLanded(piece)).rejects.toThrow();
    // The pending artifact the upload made goes with the abandoned presigned ones.
    h.clock.advance(1);
    expect((await h.core.sweeper.runOnce()).pendingPurged).toBe(1);
  });
});

describe('the report', () => {
  it('counts each kind of work of one run', async () => {
    const t = await h.tenant('acme');
    const deleted = await h.upload(t, 'deleted bytes');
    await h.core.artifacts.softDelete(t, deleted.artifact_id);
    h.clock.advance(RETENTION_MS + 1);
    // Fresh work, due at the same run: an artifact past its TTL, a dead link, an old key.
    const expiring = await h.upload(t, 'expiring', { ttl: '1h', idempotencyKey: 'k' });
    const kept = await h.upload(t, 'kept', { ttl: '90d' });
    await h.core.sharing.createLink(t, kept.artifact_id, { expiresIn: 60 });
    await h.core.sharing.createLink(t, expiring.artifact_id);
    await h.core.resumable.create(t, { filename: 'r.bin', lengthBytes: 5 }, undefined);
    h.clock.advance(DAY_MS + 1);
    expect(await h.core.sweeper.runOnce()).toMatchObject({
      expired: 1,
      purged: 1,
      orphansMarked: 1,
      blobsDeleted: 0,
      idempotencyPurged: 1,
      linksPurged: 1,
      resumablesPurged: 1,
    });
  });
});
