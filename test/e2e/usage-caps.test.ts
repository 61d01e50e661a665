import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newLinkId } from '../../src/core/ids.js';
import { PLANS } from '../../src/core/plans.js';
import { ManualClock } from '../../src/ports/clock.js';
import {
  blobFiles,
  blobFilesFor,
  expectError,
  put,
  type Rec,
  sha256,
  stagingFiles,
  storeFiller,
  uploadJson,
  uploadMultipart,
} from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/** Storage quota, active link caps and usage figures. The clock stands still unless a test moves it. */
let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 10, 1, 0, 0, 0));

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const tenantOf = (name: string) => s.core.tenants.byName(name);
describe('storage quota', () => {
  /**
   * Brings a free tenant to `limit - headroom` bytes of storage with one real artifact row over a
   * pinned blob record (uploading 1 GB would be far too slow for the suite).
   */
  async function fillStorage(name: string, headroom: number) {
    const key = await s.createTenant(name, 'free');
    const tenant = await tenantOf(name);
    const size = PLANS.free.storageBytes - headroom;
    await storeFiller(s, tenant.id, size, name, clock.now());
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(size);
    return { key, tenant };
  }

  it('an upload that would pass the limit is 403 quota_exceeded and stores nothing', async () => {
    clock.set(Date.UTC(2026, 10, 2, 0, 0, 0));
    const { key } = await fillStorage('storage-full', 1000);
    const blobsBefore = await blobFiles(s);
    const listBefore = (await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts;

    const big = Buffer.alloc(1001, 1);
    const mp = await uploadMultipart(s.apiUrl, key, { content: big, filename: 'big.bin' });
    expectError(mp, 403, 'quota_exceeded');
    expect(mp.json.error.upgrade_url).toMatch(/^https?:\/\//);
    expectError(
      await uploadJson(s.apiUrl, key, { filename: 'big.bin', content: big.toString('base64') }),
      403,
      'quota_exceeded',
    );
    expect(await blobFiles(s)).toEqual(blobsBefore);
    expect(await stagingFiles(s)).toEqual([]);
    expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toEqual(listBefore);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(
      PLANS.free.storageBytes - 1000,
    );

    // Exactly up to the limit is fine.
    const fits = Buffer.alloc(1000, 2);
    const ok = await uploadMultipart(s.apiUrl, key, { content: fits, filename: 'fits.bin' });
    expect(ok.status, ok.text).toBe(201);
    const who = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    expect(who.usage_storage_bytes).toBe(who.plan_storage_limit_bytes);
    // At the limit every upload is refused before its bytes are read: a 1-byte new one, and even
    // a copy of bytes already stored (docs/api.md, "Storage quota").
    expectError(await uploadMultipart(s.apiUrl, key, { content: 'z' }), 403, 'quota_exceeded');
    expect(await blobFilesFor(s, sha256('z'))).toEqual([]);
    expectError(await uploadMultipart(s.apiUrl, key, { content: fits, filename: 'again.bin' }), 403, 'quota_exceeded');
    expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toHaveLength(listBefore.length + 1);
  });

  it('a resumable upload is refused at creation, before any byte, when its Upload-Length would pass the limit', async () => {
    clock.set(Date.UTC(2026, 10, 2, 0, 30, 0));
    const { key } = await fillStorage('storage-tus', 1000);
    const create = (length: number) =>
      fetch(`${s.apiUrl}/v1/uploads/tus`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Tus-Resumable': '1.0.0',
          'Upload-Length': String(length),
          'Upload-Metadata': `filename ${Buffer.from('big.bin').toString('base64')}`,
        },
      });
    const refused = await create(1001);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'quota_exceeded', upgrade_url: expect.any(String) } });
    expect((await create(1000)).status).toBe(201);
  });

  it('JSON uploads: exactly up to the limit passes, one byte more is refused and stores nothing', async () => {
    clock.set(Date.UTC(2026, 10, 2, 1, 0, 0));
    const { key } = await fillStorage('storage-json', 1000);
    const body = (bytes: Buffer, filename: string) => ({ filename, content: bytes.toString('base64') });
    const over = await uploadJson(s.apiUrl, key, body(Buffer.alloc(1001, 5), 'over.bin'));
    expectError(over, 403, 'quota_exceeded');
    expect(over.json.error.upgrade_url).toMatch(/^https?:\/\//);
    expect(await blobFilesFor(s, sha256(Buffer.alloc(1001, 5)))).toEqual([]);
    const fits = await uploadJson(s.apiUrl, key, body(Buffer.alloc(1000, 6), 'fits.bin'));
    expect(fits.status, fits.text).toBe(201);
    const who = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    expect(who.usage_storage_bytes).toBe(who.plan_storage_limit_bytes);
    expectError(await uploadJson(s.apiUrl, key, body(Buffer.from('!'), 'one.bin')), 403, 'quota_exceeded');
    expect(await blobFilesFor(s, sha256('!'))).toEqual([]);
    expect(await stagingFiles(s)).toEqual([]);
    const names = (await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts.map((a: Rec) => a.filename);
    expect(names.sort()).toEqual(['filler.bin', 'fits.bin']);
  });

  it('dedup uploads of bytes already stored still pass near the limit', async () => {
    const { key } = await fillStorage('storage-dedup', 1000);
    const bytes = Buffer.alloc(600, 3);
    const first = await uploadMultipart(s.apiUrl, key, { content: bytes, filename: 'd1.bin' });
    expect(first.status, first.text).toBe(201);
    // 600 more would pass the limit, but these bytes are already counted.
    const second = await uploadMultipart(s.apiUrl, key, { content: bytes, filename: 'd2.bin' });
    expect(second.status, second.text).toBe(201);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(
      PLANS.free.storageBytes - 400,
    );
    // Deleting frees the space again.
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${first.json.artifact_id}`);
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${second.json.artifact_id}`);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(
      PLANS.free.storageBytes - 1000,
    );
    expect((await uploadMultipart(s.apiUrl, key, { content: Buffer.alloc(900, 4) })).status).toBe(201);
  });
});

describe('active links cap', () => {
  it('free tenants may hold 100 active links; expired or deleted ones make room', async () => {
    clock.set(Date.UTC(2026, 10, 4, 0, 0, 0));
    const key = await s.createTenant('links-cap', 'free');
    const a = await put(s.apiUrl, key, 'link target');
    const b = await put(s.apiUrl, key, 'other target');
    const created: Rec[] = [];
    for (let i = 0; i < 100; i++) {
      const target = i < 10 ? b : a;
      const r = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${target.artifact_id}/links`, {
        expires_in: i < 20 ? 60 : 86_400,
      });
      expect(r.status, r.text).toBe(201);
      created.push(r.json);
      if (i % 50 === 49) clock.advance(3000); // stay inside the rate limit
    }
    const refused = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {});
    expectError(refused, 403, 'quota_exceeded');
    expect(refused.json.error.upgrade_url).toMatch(/^https?:\/\//);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(100);
    // Deleting b drops its 10 links.
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${b.artifact_id}`);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(90);
    for (let i = 0; i < 10; i++) {
      expect((await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {})).status).toBe(201);
    }
    expectError(await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {}), 403, 'quota_exceeded');
    // The 10 short links (60 s) on a expire: room for 10 more.
    clock.advance(60_000);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(90);
    expect((await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {})).status).toBe(201);
    expect(created).toHaveLength(100);
  });
});

describe('active links cap, pro', () => {
  it('pro tenants may hold 1,000 active links: the 1,000th is created, the 1,001st refused', async () => {
    clock.set(Date.UTC(2026, 10, 4, 6, 0, 0));
    const key = await s.createTenant('links-pro', 'pro');
    const tenant = await tenantOf('links-pro');
    const a = await put(s.apiUrl, key, 'pro link target');
    // 999 through the store (1,000 HTTP calls would be slow), in parallel batches for PostgreSQL.
    const now = clock.now();
    const max = PLANS.pro.activeLinks;
    for (let i = 0; i < max - 1; i += 111) {
      const batch = Array.from({ length: Math.min(111, max - 1 - i) }, () =>
        s.core.deps.sharingStore.createLink(
          {
            id: newLinkId(),
            tenantId: tenant.id,
            artifactId: a.artifact_id,
            createdAt: now,
            expiresAt: now + 86_400_000,
            revokedAt: null,
          },
          max,
          now,
        ),
      );
      expect(await Promise.all(batch)).not.toContain(false);
    }
    const last = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {});
    expect(last.status, last.text).toBe(201);
    const refused = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {});
    expectError(refused, 403, 'quota_exceeded');
    expect(refused.json.error.upgrade_url).toMatch(/^https?:\/\//);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json).toMatchObject({
      active_links: 1000,
      max_active_links: 1000,
    });
  });
});

describe('usage after a TTL passes, before any sweep', () => {
  it('storage, active links, the link cap and session counts drop at once (each read settles expiry)', async () => {
    clock.set(Date.UTC(2026, 10, 4, 12, 0, 0));
    const key = await s.createTenant('expiry-usage', 'free');
    const tenant = await tenantOf('expiry-usage');
    const e = [];
    for (let h = 1; h <= 4; h++)
      e.push(await put(s.apiUrl, key, `expires in ${h}h`, { ttl: `${h}h`, session_id: 'ttl' }));
    const [, , e3, e4] = e as [Rec, Rec, Rec, Rec];
    const stays = await put(s.apiUrl, key, 'stays', { ttl: '7d', session_id: 'ttl' });
    // Links to the free cap of 100, seeded through the store: 10 on e3, 89 on e4, 1 on stays.
    const now = clock.now();
    for (let i = 0; i < 99; i++) {
      const artifactId = i < 10 ? e3.artifact_id : e4.artifact_id;
      const link = {
        id: newLinkId(),
        tenantId: tenant.id,
        artifactId,
        createdAt: now,
        expiresAt: now + 86_400_000,
        revokedAt: null,
      };
      expect(await s.core.deps.sharingStore.createLink(link, PLANS.free.activeLinks, now)).toBe(true);
    }
    expect((await api(s.apiUrl, key, 'POST', `/v1/artifacts/${stays.artifact_id}/links`, {})).status).toBe(201);
    expectError(
      await api(s.apiUrl, key, 'POST', `/v1/artifacts/${stays.artifact_id}/links`, {}),
      403,
      'quota_exceeded',
    );
    const sessionCount = async () => (await api(s.apiUrl, key, 'GET', '/v1/sessions')).json.sessions[0].artifact_count;
    expect(await sessionCount()).toBe(5);

    // Nothing sweeps in this server: each figure must come right from the read itself.
    clock.advance(3_600_000);
    expect(await sessionCount()).toBe(4);
    clock.advance(3_600_000);
    const sealed = await api(s.apiUrl, key, 'POST', '/v1/sessions/ttl/seal');
    expect(sealed.json.artifact_count).toBe(3);
    clock.advance(3_600_000);
    const who = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    expect(who.usage_storage_bytes).toBe(e4.size_bytes + stays.size_bytes);
    expect(who.active_links).toBe(90);
    clock.advance(3_600_000);
    const room = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${stays.artifact_id}/links`, {});
    expect(room.status, room.text).toBe(201);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json).toMatchObject({
      usage_storage_bytes: stays.size_bytes,
      active_links: 2,
    });
    expect(await sessionCount()).toBe(1);
  });
});
