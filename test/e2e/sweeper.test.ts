import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKey } from '../../src/core/context.js';
import { CLAIM_WORK_MS, ORPHAN_GRACE_MS, STALE_CLAIM_MS, Sweeper } from '../../src/core/sweeper.js';
import { UploadService, WRITE_CLAIM_MS } from '../../src/core/upload.js';
import { ManualClock } from '../../src/ports/clock.js';
import {
  blobFilesFor,
  DAY_MS,
  expectError,
  fetchBytes,
  HOUR_MS,
  put,
  type Rec,
  sha256,
  uploadJson,
} from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { crashedStagingFolder } from '../helpers/staging.js';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../../bin/cairn.js');

let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 0, 5, 0, 0, 0));
const RETENTION_MS = 30 * DAY_MS;

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const sweep = () => s.core.sweeper.runOnce();
const tenantId = async (name: string) => (await s.core.tenants.byName(name)).id;

describe('sweeper', () => {
  it('expires artifacts past their TTL, frees their storage and removes their links', async () => {
    const key = await s.createTenant('sweep-expiry', 'pro');
    const a = await put(s.apiUrl, key, 'expires soon', { ttl: '1h', session_id: 'sx' });
    const keep = await put(s.apiUrl, key, 'stays', { ttl: '7d' });
    const link = (await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {})).json;
    await sweep();
    expect((await s.core.deps.artifactStore.getArtifact(await tenantId('sweep-expiry'), a.artifact_id))?.status).toBe(
      'active',
    );

    clock.advance(HOUR_MS);
    const report = await sweep();
    expect(report.expired).toBeGreaterThanOrEqual(1);
    const row = await s.core.deps.artifactStore.getArtifact(await tenantId('sweep-expiry'), a.artifact_id);
    expect(row?.status).toBe('expired');
    expect(await s.core.deps.sharingStore.getLink(link.link_id)).toBeNull();
    expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_expired');
    const who = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    expect(who.usage_storage_bytes).toBe(keep.size_bytes);
    expect(who.active_links).toBe(0);
    expect((await api(s.apiUrl, key, 'GET', '/v1/sessions')).json.sessions[0]).toMatchObject({ artifact_count: 0 });
    // The bytes stay until the expired row itself is purged, 30 days on.
    const tid = await tenantId('sweep-expiry');
    expect(await s.hasBlob(tid, a.content_hash)).toBe(true);
    clock.advance(RETENTION_MS + 1);
    expect((await sweep()).purged).toBeGreaterThanOrEqual(1);
    expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`), 404, 'artifact_not_found');
    clock.advance(ORPHAN_GRACE_MS + 1);
    await sweep();
    expect(await s.hasBlob(tid, a.content_hash)).toBe(false);
  });

  it('hard-deletes soft-deleted rows after 30 days, then their blob after the grace period', async () => {
    const key = await s.createTenant('sweep-purge', 'pro');
    const tid = await tenantId('sweep-purge');
    const a = await put(s.apiUrl, key, 'purge me', { ttl: 'never' });
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`);
    expect(await s.hasBlob(tid, a.content_hash)).toBe(true);

    clock.advance(RETENTION_MS - 1000);
    await sweep();
    expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_already_deleted');
    expect(await s.hasBlob(tid, a.content_hash)).toBe(true);

    clock.advance(2000);
    const report = await sweep();
    expect(report.purged).toBeGreaterThanOrEqual(1);
    expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`), 404, 'artifact_not_found');
    // Marked as an orphan now; the file waits out the grace period.
    expect(await s.hasBlob(tid, a.content_hash)).toBe(true);
    clock.advance(ORPHAN_GRACE_MS - 1000);
    await sweep();
    expect(await s.hasBlob(tid, a.content_hash)).toBe(true);
    clock.advance(2000);
    expect((await sweep()).blobsDeleted).toBeGreaterThanOrEqual(1);
    expect(await s.hasBlob(tid, a.content_hash)).toBe(false);
  });

  it('keeps a blob another row still shares; removes it only after the last row and the grace period', async () => {
    const key = await s.createTenant('sweep-shared', 'pro');
    const tid = await tenantId('sweep-shared');
    const x = await put(s.apiUrl, key, 'shared bytes', { ttl: 'never', filename: 'x.txt' });
    const y = await put(s.apiUrl, key, 'shared bytes', { ttl: 'never', filename: 'y.txt' });
    const stored = () => s.hasBlob(tid, x.content_hash);
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${x.artifact_id}`);
    clock.advance(RETENTION_MS + 1000);
    await sweep();
    clock.advance(ORPHAN_GRACE_MS * 3);
    await sweep();
    expect(await stored()).toBe(true);
    const url = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${y.artifact_id}/download-url`)).json.download_url;
    expect((await fetchBytes(url)).body.toString()).toBe('shared bytes');
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(y.size_bytes);

    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${y.artifact_id}`);
    clock.advance(RETENTION_MS + 1000);
    await sweep();
    expect(await stored()).toBe(true);
    clock.advance(ORPHAN_GRACE_MS + 1000);
    await sweep();
    expect(await stored()).toBe(false);
  });

  it('an upload of the same bytes during the grace period rescues the blob', async () => {
    const key = await s.createTenant('sweep-rescue', 'pro');
    const tid = await tenantId('sweep-rescue');
    const a = await put(s.apiUrl, key, 'rescued bytes', { ttl: 'never' });
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`);
    clock.advance(RETENTION_MS + 1000);
    await sweep(); // purges the row and marks the blob
    const b = await put(s.apiUrl, key, 'rescued bytes', { ttl: 'never' });
    clock.advance(ORPHAN_GRACE_MS * 2);
    await sweep();
    expect(await s.hasBlob(tid, a.content_hash)).toBe(true);
    const url = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${b.artifact_id}/download-url`)).json.download_url;
    expect((await fetchBytes(url)).body.toString()).toBe('rescued bytes');
  });

  it('drops idempotency records older than 24 h: the same key then makes a new upload', async () => {
    const key = await s.createTenant('sweep-idem', 'pro');
    const headers = { 'idempotency-key': 'daily-report' };
    const body = { filename: 'r.txt', content: Buffer.from('report').toString('base64'), ttl: 'never' };
    const first = await uploadJson(s.apiUrl, key, body, headers);
    expect(first.status).toBe(201);
    clock.advance(24 * HOUR_MS - 1000);
    expect((await sweep()).idempotencyPurged).toBe(0);
    const replay = await uploadJson(s.apiUrl, key, body, headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.json.artifact_id).toBe(first.json.artifact_id);
    clock.advance(2000);
    expect((await sweep()).idempotencyPurged).toBeGreaterThanOrEqual(1);
    const fresh = await uploadJson(s.apiUrl, key, body, headers);
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.json.artifact_id).not.toBe(first.json.artifact_id);
    // And the new record is honoured again.
    const again = await uploadJson(s.apiUrl, key, body, headers);
    expect(again.json.artifact_id).toBe(fresh.json.artifact_id);
  });

  it('purges dead links: a link past its own expiry stops at once, and the sweep removes its row', async () => {
    const key = await s.createTenant('sweep-links', 'pro');
    const a = await put(s.apiUrl, key, 'linked bytes', { ttl: 'never' });
    const mk = async (expires_in: number) =>
      (await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, { expires_in })).json;
    const short = await mk(60);
    const long = await mk(86_400);
    clock.advance(61_000);
    // Dead before any sweep, but its row is still there.
    expect((await fetchBytes(short.url)).status).toBe(404);
    expect(await s.core.deps.sharingStore.getLink(short.link_id)).not.toBeNull();
    const report = await sweep();
    expect(report.linksPurged).toBeGreaterThanOrEqual(1);
    expect(await s.core.deps.sharingStore.getLink(short.link_id)).toBeNull();
    // The live one is untouched.
    expect(await s.core.deps.sharingStore.getLink(long.link_id)).not.toBeNull();
    expect((await fetchBytes(long.url)).body.toString()).toBe('linked bytes');
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(1);
  });

  it('a sweeper killed half-way leaves work the next run finishes', async () => {
    const key = await s.createTenant('sweep-killed', 'pro');
    const tid = await tenantId('sweep-killed');
    const { sweeperStore: store, blobs } = s.core.deps;
    const one = await put(s.apiUrl, key, 'killed one', { ttl: 'never' });
    const two = await put(s.apiUrl, key, 'killed two', { ttl: 'never' });
    for (const a of [one, two]) await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`);
    clock.advance(RETENTION_MS + 1000);
    await sweep(); // purge + mark
    clock.advance(ORPHAN_GRACE_MS + 1000);

    // The "killed" sweeper: claims both, deletes the bytes of one, dies before forgetting either.
    const now = clock.now();
    const claimed = await store.claimOrphanBlobs(now - ORPHAN_GRACE_MS, now - STALE_CLAIM_MS, now, 500);
    const mine = claimed.filter((c) => c.tenantId === tid);
    expect(mine.map((c) => c.contentHash).sort()).toEqual([one.content_hash, two.content_hash].sort());
    await blobs.delete(blobKey(tid, one.content_hash));
    expect(await s.hasBlob(tid, one.content_hash)).toBe(false);
    expect(await s.hasBlob(tid, two.content_hash)).toBe(true);

    // A fresh claim belongs to a live sweeper: the next run leaves it alone.
    await sweep();
    expect(await s.hasBlob(tid, two.content_hash)).toBe(true);
    // Once the claim is stale, the next run finishes both jobs.
    clock.advance(STALE_CLAIM_MS + 1000);
    const report = await sweep();
    expect(report.blobsDeleted).toBeGreaterThanOrEqual(2);
    expect(await s.hasBlob(tid, two.content_hash)).toBe(false);
    // The blob records are gone too: the same bytes upload normally (no "busy" wait) and are stored again.
    const again = await put(s.apiUrl, key, 'killed one', { ttl: 'never' });
    expect(await s.hasBlob(tid, again.content_hash)).toBe(true);
    const url = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${again.artifact_id}/download-url`)).json.download_url;
    expect((await fetchBytes(url)).body.toString()).toBe('killed one');
  });

  it('a dead sweeper’s claim: the same bytes get 503 with Retry-After until a sweep takes it over 2 minutes on', async () => {
    expect(STALE_CLAIM_MS).toBe(2 * 60 * 1000);
    const key = await s.createTenant('sweep-claimed', 'pro');
    const tid = await tenantId('sweep-claimed');
    const bytes = { filename: 'again.txt', content: Buffer.from('claimed bytes').toString('base64'), ttl: 'never' };
    const a = (await uploadJson(s.apiUrl, key, bytes)).json;
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`);
    clock.advance(RETENTION_MS + 1000);
    await sweep();
    clock.advance(ORPHAN_GRACE_MS + 1000);
    // A sweeper claims the blob for deletion and dies: nothing deleted, nothing forgotten.
    const now = clock.now();
    const claimed = await s.core.deps.sweeperStore.claimOrphanBlobs(
      now - ORPHAN_GRACE_MS,
      now - STALE_CLAIM_MS,
      now,
      500,
    );
    expect(claimed.map((c) => c.contentHash)).toContain(a.content_hash);

    const original = s.core.uploads;
    // The same service, waiting out the claim for 3 × 10 ms instead of 100 × 100 ms.
    s.core.uploads = new UploadService(s.core.deps, { attempts: 3, delayMs: 10 });
    try {
      const busy = await uploadJson(s.apiUrl, key, bytes);
      expectError(busy, 503, 'server_error');
      expect(busy.json.error.retry_after_seconds).toBe(60);
      expect(busy.json.error.retry_after).toBe(60);
      expect(busy.json.error.request_id).toEqual(expect.any(String));
      expect(busy.headers.get('retry-after')).toBe('60');
      expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toEqual([]);

      // Not stale yet: the next run leaves the claim alone.
      clock.advance(STALE_CLAIM_MS - 1000);
      await sweep();
      expectError(await uploadJson(s.apiUrl, key, bytes), 503, 'server_error');
      // Stale: the next run takes it over and finishes, and the bytes upload again.
      clock.advance(2000);
      expect((await sweep()).blobsDeleted).toBeGreaterThanOrEqual(1);
      const ok = await uploadJson(s.apiUrl, key, bytes);
      expect(ok.status, ok.text).toBe(201);
      expect(await s.hasBlob(tid, a.content_hash)).toBe(true);
      const url = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${ok.json.artifact_id}/download-url`)).json;
      expect((await fetchBytes(url.download_url)).body.toString()).toBe('claimed bytes');
    } finally {
      s.core.uploads = original;
    }
  });

  it('an upload that died holding the write of new bytes: the same bytes get 503 until its write lapses, 2 minutes on', async () => {
    expect(WRITE_CLAIM_MS).toBe(2 * 60 * 1000);
    const key = await s.createTenant('dead-writer', 'pro');
    const tid = await tenantId('dead-writer');
    const bytes = { filename: 'w.txt', content: Buffer.from('bytes of a dead upload').toString('base64') };
    const hash = createHash('sha256').update('bytes of a dead upload').digest('hex');
    // Pinned with the write taken, as an upload does before putting the bytes in place; it never goes on.
    const now = clock.now();
    const dead = { owner: 'dead-upload', until: now + WRITE_CLAIM_MS };
    expect(await s.core.deps.artifactStore.pinBlob(tid, hash, 22, now, dead)).toBe('write');

    const original = s.core.uploads;
    s.core.uploads = new UploadService(s.core.deps, { attempts: 3, delayMs: 10 });
    try {
      const busy = await uploadJson(s.apiUrl, key, bytes);
      expectError(busy, 503, 'server_error');
      expect(busy.json.error.message).toMatch(/another upload/);
      expect(busy.headers.get('retry-after')).toBe('5');
      expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toEqual([]);
      clock.advance(WRITE_CLAIM_MS - 1000);
      expectError(await uploadJson(s.apiUrl, key, bytes), 503, 'server_error');
      // Lapsed: the next upload takes the write over and stores the bytes.
      clock.advance(1000);
      const ok = await uploadJson(s.apiUrl, key, bytes);
      expect(ok.status, ok.text).toBe(201);
      const url = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${ok.json.artifact_id}/download-url`)).json;
      expect((await fetchBytes(url.download_url)).body.toString()).toBe('bytes of a dead upload');
      // Stored now: the write is over, and the same bytes again cost no wait.
      expect((await uploadJson(s.apiUrl, key, bytes)).status).toBe(201);
    } finally {
      s.core.uploads = original;
    }
  });

  it('a slow sweeper stops deleting under its claim long before the claim could be taken over', async () => {
    const c2 = new ManualClock(Date.UTC(2026, 0, 5, 0, 0, 0));
    const s2 = await startTestServer({ clock: c2 });
    try {
      const tid = (await s2.core.tenants.byName('main')).id;
      const rows: Rec[] = [];
      for (const text of ['slow one', 'slow two', 'slow three']) rows.push(await put(s2.apiUrl, s2.apiKey, text));
      for (const r of rows) await api(s2.apiUrl, s2.apiKey, 'DELETE', `/v1/artifacts/${r.artifact_id}`);
      c2.advance(RETENTION_MS + 1000);
      await s2.core.sweeper.runOnce();
      c2.advance(ORPHAN_GRACE_MS + 1000);

      // Every reading of this clock is one more slow blob delete later: the second delete would
      // end past CLAIM_WORK_MS, so the sweeper stops after the first.
      let ticks = 0;
      const slow = { now: () => c2.now() + ticks++ * (CLAIM_WORK_MS / 2 + 1) };
      const report = await new Sweeper({ ...s2.core.deps, clock: slow }).runOnce();
      expect(report.blobsDeleted).toBe(1);
      const present = async () => (await Promise.all(rows.map((r) => s2.hasBlob(tid, r.content_hash)))).filter(Boolean);
      expect(await present()).toHaveLength(2);

      // The two left claimed are finished once their claim is stale.
      c2.advance(ticks * (CLAIM_WORK_MS / 2 + 1) + STALE_CLAIM_MS + 1000);
      expect((await s2.core.sweeper.runOnce()).blobsDeleted).toBe(2);
      expect(await present()).toHaveLength(0);
    } finally {
      await s2.close();
    }
  });

  it('two sweepers at once lose nothing that is live, and do no work twice', async () => {
    // A server of its own, so the sweep reports count this test's rows only.
    const c2 = new ManualClock(Date.UTC(2026, 0, 5, 0, 0, 0));
    const s2 = await startTestServer({ clock: c2 });
    try {
      const key = s2.apiKey;
      const tid = (await s2.core.tenants.byName('main')).id;
      const live: Rec[] = [];
      const deleted: Rec[] = [];
      const expiring: Rec[] = [];
      for (let i = 0; i < 12; i++) {
        // Half of the deleted rows share their bytes with a live row.
        live.push(await put(s2.apiUrl, key, i % 2 === 0 ? `pair ${i}` : `live ${i}`, { ttl: 'never' }));
        deleted.push(await put(s2.apiUrl, key, `pair ${i}`, { ttl: 'never' }));
        expiring.push(await put(s2.apiUrl, key, `short ${i}`, { ttl: '1h' }));
      }
      for (const d of deleted) await api(s2.apiUrl, key, 'DELETE', `/v1/artifacts/${d.artifact_id}`);
      const totals = { expired: 0, purged: 0, blobsDeleted: 0 };
      for (let round = 0; round < 4; round++) {
        c2.advance(round === 0 ? RETENTION_MS + HOUR_MS : ORPHAN_GRACE_MS + 1000);
        const reports = await Promise.all([s2.core.sweeper.runOnce(), s2.core.sweeper.runOnce()]);
        for (const r of reports) {
          totals.expired += r.expired;
          totals.purged += r.purged;
          totals.blobsDeleted += r.blobsDeleted;
        }
      }
      expect(totals).toEqual({ expired: 12, purged: 24, blobsDeleted: 12 + 6 });
      for (const a of live) {
        const got = await api(s2.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`);
        expect(got.status).toBe(200);
        const url = (await api(s2.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json.download_url;
        const bytes = await fetchBytes(url);
        expect(bytes.status).toBe(200);
        expect(sha256(bytes.body)).toBe(a.content_hash);
      }
      for (const d of [...deleted, ...expiring]) {
        expectError(await api(s2.apiUrl, key, 'GET', `/v1/artifacts/${d.artifact_id}`), 404, 'artifact_not_found');
        const shared = live.some((l) => l.content_hash === d.content_hash);
        expect(await s2.hasBlob(tid, d.content_hash), d.filename).toBe(shared);
      }
      const expected = live.reduce((sum, l) => sum + l.size_bytes, 0);
      expect((await api(s2.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(expected);
    } finally {
      await s2.close();
    }
  });
});

describe('sweeper, local folder', () => {
  // On S3 nothing is staged on a local disk; the bucket's lifecycle rule covers staging/ there.
  it.skipIf(process.env.CAIRN_TEST_BACKEND === 'scaleout')(
    'removes the staging of a process that stopped after this one started, and keeps its own',
    async () => {
      const staging = path.join(s.dataDir, 'blobs', '.staging');
      const [own] = await readdir(staging);
      await crashedStagingFolder(staging);
      expect((await sweep()).stagingSwept).toBe(1);
      expect(await readdir(staging)).toEqual([own]);
    },
  );
});

describe('cairn admin sweep', () => {
  it('runs one sweep on a data folder and prints the counts as JSON', async () => {
    // This server's clock is far in the past of the real one; the real-clock CLI sees the
    // 1-hour artifact as long expired.
    const key = await s.createTenant('sweep-cli', 'pro');
    const a = await put(s.apiUrl, key, 'cli expiry', { ttl: '1h' });
    expect(clock.now() + HOUR_MS).toBeLessThan(Date.now());
    const { stdout } = await run(process.execPath, [BIN, 'admin', '--data', s.dataDir, 'sweep', '--json'], {
      env: { ...process.env, ...s.env, CAIRN_LOG_LEVEL: 'silent' },
      timeout: 30_000,
    });
    const report = JSON.parse(stdout.trim());
    for (const k of [
      'expired',
      'purged',
      'orphansMarked',
      'blobsDeleted',
      'idempotencyPurged',
      'linksPurged',
      'stagingSwept',
    ]) {
      expect(report, k).toHaveProperty(k);
    }
    for (const v of Object.values(report)) expect(Number.isInteger(v)).toBe(true);
    // Expired long ago by the real clock, so also past the 30-day retention: expired and purged.
    expect(report.expired).toBeGreaterThanOrEqual(1);
    expect(report.purged).toBeGreaterThanOrEqual(1);
    expect(await s.core.deps.artifactStore.getArtifact(await tenantId('sweep-cli'), a.artifact_id)).toBeNull();
    expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`), 404, 'artifact_not_found');
    // Human output too.
    const human = await run(process.execPath, [BIN, 'admin', 'sweep'], {
      env: { ...process.env, ...s.env, CAIRN_DATA_DIR: s.dataDir },
      timeout: 30_000,
    });
    expect(human.stdout).toMatch(/^expired\s+\d+$/m);
    // Its bytes wait out the orphan grace period.
    expect(await blobFilesFor(s, a.content_hash)).toHaveLength(1);
  });
});
