import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Core } from '../../src/core/index.js';
import { createRuntime } from '../../src/runtime.js';
import {
  DAY_MS,
  eventually,
  fetchBytes,
  HOUR_MS,
  put,
  type Rec,
  sha256,
  uploadJson,
  uploadMultipart,
} from '../helpers/e2e.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';
import { createScaleoutBackend, type ScaleoutBackend, scaleoutUnavailable } from '../helpers/scaleout.js';
import { api } from '../helpers/server.js';

/**
 * Two Cairn processes (`cairn serve`, the built binary) on one PostgreSQL schema, one Redis
 * prefix and one S3 bucket, as behind a load balancer: whatever one does, the other sees at once,
 * and shared limits stay shared. Both run their sweeper every second; the test moves stored
 * times into the past (as the sweepers' clocks would see them days later) rather than the clock.
 */

const reason = await scaleoutUnavailable();
if (reason && !process.env.CI) {
  console.warn(`\n!!! SKIPPING the two-instance scale-out tests: ${reason}.\n!!! CI runs them.\n`);
}

const silentLog = { info() {}, warn() {}, error() {} };

if (reason && process.env.CI) {
  describe('two instances', () => {
    beforeAll(() => {
      throw new Error(`CI must run the two-instance scale-out tests, but ${reason}.`);
    });
    it('needs PostgreSQL and Redis', () => {});
  });
} else {
  describe.skipIf(reason !== null)('two cairn serve processes on PostgreSQL + Redis + S3', () => {
    let backend: ScaleoutBackend;
    let a: ServeProcess;
    let b: ServeProcess;
    /** An operator's view of the same stores (what `cairn admin` uses): tenants and records. */
    let admin: { core: Core; close: () => Promise<void> };
    let db: pg.Pool;
    const dirs: string[] = [];

    async function instance(): Promise<ServeProcess> {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-two-'));
      dirs.push(dataDir);
      return spawnServe(dataDir, { ...backend.env, CAIRN_SWEEP_INTERVAL_SECONDS: '1' }, 60_000);
    }

    beforeAll(async () => {
      backend = await createScaleoutBackend();
      // Started together on an empty schema: the migrations queue on their advisory lock.
      [a, b] = await Promise.all([instance(), instance()]);
      const adminDir = await mkdtemp(path.join(tmpdir(), 'cairn-two-admin-'));
      dirs.push(adminDir);
      admin = await createRuntime(loadConfig({ dataDir: adminDir, logLevel: 'silent' }, backend.env), {
        log: silentLog,
      });
      db = backend.pool();
    }, 120_000);
    afterAll(async () => {
      await Promise.allSettled([a?.stop(), b?.stop()]);
      await admin?.close();
      await db?.end();
      await backend?.close();
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    });

    const tenant = async (name: string) => {
      const { tenant: t, apiKey } = await admin.core.tenants.create(name, 'pro');
      return { key: apiKey, id: t.id };
    };
    const download = async (s: ServeProcess, key: string, id: string) => {
      const r = await api(s.apiUrl, key, 'GET', `/v1/artifacts/${id}/download-url`);
      expect(r.status, r.text).toBe(200);
      return fetchBytes(r.json.download_url);
    };

    it('are two processes, and share one signing secret: URLs signed by one are honoured by the other', async () => {
      expect(a.child.pid).not.toBe(b.child.pid);
      const { key } = await tenant('secret');
      const art = await put(a.apiUrl, key, 'signed by a');
      const signed = (await api(a.apiUrl, key, 'GET', `/v1/artifacts/${art.artifact_id}/download-url`)).json
        .download_url;
      // Served by b's content listener with a's signature.
      const onB = new URL(signed);
      onB.port = new URL(b.contentUrl).port;
      const got = await fetchBytes(onB.href);
      expect(got.status).toBe(200);
      expect(got.body.toString()).toBe('signed by a');
    });

    it('a key revoked or a tenant suspended by an operator is refused by both instances, though both just served it', async () => {
      const { key } = await tenant('two-revoke');
      const second = await admin.core.tenants.createKey(await admin.core.tenants.byName('two-revoke'));
      // Twice, the second time after each instance's change listener is surely up, so both hold
      // the keys as callers they have already looked up.
      for (const round of [1, 2]) {
        for (const s of [a, b]) {
          expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).status).toBe(200);
          expect((await api(s.apiUrl, second, 'GET', '/v1/whoami')).status).toBe(200);
        }
        if (round === 1) await new Promise((r) => setTimeout(r, 500));
      }
      await admin.core.tenants.revokeKey(await admin.core.tenants.byName('two-revoke'), key);
      // The instances hear of it when the change commits; a request may not overtake that by much.
      for (const s of [a, b]) {
        await eventually(async () => (await api(s.apiUrl, key, 'GET', '/v1/whoami')).status === 401, 2000, 'revoked');
        expect((await api(s.apiUrl, second, 'GET', '/v1/whoami')).status).toBe(200);
      }
      await admin.core.tenants.setSuspended(await admin.core.tenants.byName('two-revoke'), true);
      for (const s of [a, b]) {
        await eventually(
          async () => {
            const r = await api(s.apiUrl, second, 'GET', '/v1/whoami');
            return r.status === 401 && /suspended/.test(r.json.error.message);
          },
          2000,
          'suspended',
        );
      }
    });

    it('a share link revoked through one is dead on both from the next request, though both just served it', async () => {
      const { key } = await tenant('two-links');
      const art = await put(a.apiUrl, key, 'shared twice');
      const link = (await api(a.apiUrl, key, 'POST', `/v1/artifacts/${art.artifact_id}/links`)).json;
      const on = (s: ServeProcess) => {
        const u = new URL(link.url);
        u.port = new URL(s.contentUrl).port;
        return u.href;
      };
      for (const s of [a, b]) expect((await fetchBytes(on(s))).status).toBe(200);
      expect((await api(b.apiUrl, key, 'GET', `/v1/artifacts/${art.artifact_id}/links`)).json.links).toHaveLength(1);
      expect((await api(b.apiUrl, key, 'DELETE', `/v1/links/${link.link_id}`)).status).toBe(200);
      // No waiting: every request for a link reads the shared store.
      for (const s of [a, b]) expect((await fetchBytes(on(s))).status).toBe(404);
      expect((await api(a.apiUrl, key, 'GET', `/v1/artifacts/${art.artifact_id}/links`)).json.links).toEqual([]);
    });

    it('an upload through one is at once visible through the other: record, list, bytes', async () => {
      const { key } = await tenant('visible');
      const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
      const up = await uploadMultipart(a.apiUrl, key, {
        content: bytes,
        filename: 'data.bin',
        before: { session_id: 's1' },
      });
      expect(up.status, up.text).toBe(201);
      const id = up.json.artifact_id as string;

      const got = await api(b.apiUrl, key, 'GET', `/v1/artifacts/${id}`);
      expect(got.status).toBe(200);
      expect(got.json).toEqual(up.json);
      const listed = await api(b.apiUrl, key, 'GET', '/v1/artifacts?session_id=s1');
      expect(listed.json.artifacts.map((x: Rec) => x.artifact_id)).toEqual([id]);
      const dl = await download(b, key, id);
      expect(dl.status).toBe(200);
      expect(sha256(dl.body)).toBe(sha256(bytes));

      // And back: a delete through b is seen by a.
      expect((await api(b.apiUrl, key, 'DELETE', `/v1/artifacts/${id}`)).status).toBe(200);
      expect((await api(a.apiUrl, key, 'GET', `/v1/artifacts/${id}`)).json.error.code).toBe('artifact_already_deleted');
      expect((await api(a.apiUrl, key, 'GET', '/v1/artifacts?session_id=s1')).json.artifacts).toEqual([]);
    });

    it('share the rate limit: one window counts the calls of both, and the 201st in it is refused', async () => {
      const { key } = await tenant('burst');
      // Real clocks: a call leaves the window 2 s (burst 200 / 100 per s) after it was counted.
      // Calls that started and finished within 2 s of the first were all counted inside one
      // window, so with one shared log each got its own `remaining`; two logs would repeat them.
      const started = Date.now();
      const results: { status: number; remaining: number; doneAt: number }[] = [];
      for (let round = 0; round < 10; round++) {
        const batch = await Promise.all(
          Array.from({ length: 25 }, async (_, i) => {
            const r = await api((i % 2 === 0 ? a : b).apiUrl, key, 'GET', '/v1/whoami');
            return { status: r.status, remaining: Number(r.headers.get('x-ratelimit-remaining')), doneAt: Date.now() };
          }),
        );
        results.push(...batch);
      }
      const inWindow = results.filter((r) => r.doneAt < started + 2000);
      const admitted = inWindow.filter((r) => r.status === 200);
      expect(admitted.length).toBeGreaterThanOrEqual(5);
      expect(new Set(admitted.map((r) => r.remaining)).size).toBe(admitted.length);
      expect(admitted.length).toBeLessThanOrEqual(200);
      // Over the whole burst, never more than the window allows plus what came back meanwhile.
      const elapsed = (Math.max(...results.map((r) => r.doneAt)) - started) / 1000;
      expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(200 + Math.ceil(elapsed * 100));
      if (inWindow.length > 200) {
        const refused = inWindow.filter((r) => r.status === 429);
        expect(refused.length).toBeGreaterThanOrEqual(inWindow.length - 200);
      }
    });

    it('the same Idempotency-Key sent to both at once makes one artifact', async () => {
      const { key, id: tid } = await tenant('idem');
      for (let round = 0; round < 6; round++) {
        const headers = { 'idempotency-key': `job-${round}` };
        const body = {
          filename: `r${round}.txt`,
          content: Buffer.from(`report ${round}`).toString('base64'),
          session_id: 'idem',
        };
        const [ra, rb] = await Promise.all([
          uploadJson(a.apiUrl, key, body, headers),
          uploadJson(b.apiUrl, key, body, headers),
        ]);
        expect([ra.status, rb.status], `${ra.text} ${rb.text}`).toEqual([201, 201]);
        expect(rb.json).toEqual(ra.json);
        const replayed = [ra, rb].filter((r) => r.headers.get('idempotent-replayed') === 'true');
        expect(replayed).toHaveLength(1);
      }
      const rows = await db.query(
        "SELECT count(*)::int AS n FROM artifacts WHERE tenant_id = $1 AND status = 'active'",
        [tid],
      );
      expect(rows.rows[0].n).toBe(6);
      expect((await api(a.apiUrl, key, 'GET', '/v1/sessions')).json.sessions[0]).toMatchObject({ artifact_count: 6 });
    });

    it('a presigned upload-url issued by one is completed on the other', async () => {
      const { key } = await tenant('presigned');
      const bytes = Buffer.alloc(200_000, 9);
      const ticket = await api(a.apiUrl, key, 'POST', '/v1/artifacts/upload-url', {
        filename: 'big.bin',
        size_bytes: bytes.length,
      });
      expect(ticket.status, ticket.text).toBe(201);
      // Straight to the bucket, not through Cairn.
      expect(ticket.json.upload_url.startsWith(backend.s3.endpoint)).toBe(true);
      const id = ticket.json.artifact_id as string;
      expect((await api(b.apiUrl, key, 'POST', `/v1/artifacts/${id}/complete`)).json.error.code).toBe(
        'upload_not_found',
      );
      const putRes = await fetch(ticket.json.upload_url, {
        method: 'PUT',
        body: bytes,
        headers: ticket.json.upload_headers,
      });
      expect(putRes.status).toBe(200);
      const done = await api(b.apiUrl, key, 'POST', `/v1/artifacts/${id}/complete`);
      expect(done.status, done.text).toBe(200);
      expect(done.json).toMatchObject({ artifact_id: id, size_bytes: bytes.length, content_hash: sha256(bytes) });
      expect((await api(a.apiUrl, key, 'POST', `/v1/artifacts/${id}/complete`)).json).toEqual(done.json);
      expect(sha256((await download(a, key, id)).body)).toBe(sha256(bytes));
      // The landing object is gone; nothing is left staged.
      const keys = await backend.objectKeys();
      expect(keys.filter((k) => k.startsWith('uploads/') || k.startsWith('staging/'))).toEqual([]);
    });

    it('a declared size that the bytes do not match is refused, at the PUT or at complete, whichever instance', async () => {
      const { key } = await tenant('wrong-size');
      const ticket = await api(a.apiUrl, key, 'POST', '/v1/artifacts/upload-url', {
        filename: 'x.bin',
        size_bytes: 20,
      });
      const put = await fetch(ticket.json.upload_url, { method: 'PUT', body: Buffer.from('short') });
      const r = await api(b.apiUrl, key, 'POST', `/v1/artifacts/${ticket.json.artifact_id}/complete`);
      if (backend.s3.checksPresignedUrls) {
        // S3 refuses the PUT (the length is signed): nothing landed, which complete says.
        expect(put.status).toBe(403);
        expect(r.status).toBe(409);
        expect(r.json.error.code).toBe('upload_not_found');
      } else {
        // s3rver does not enforce the signed length; Cairn checks the size at complete anyway.
        expect(put.status).toBe(200);
        expect(r.status).toBe(400);
        expect(r.json.error.code).toBe('invalid_request');
      }
      // Nothing became active: its owner still sees the reservation, pending, for a right PUT.
      const after = await api(a.apiUrl, key, 'GET', `/v1/artifacts/${ticket.json.artifact_id}`);
      expect(after.status).toBe(200);
      expect(after.json).toMatchObject({ status: 'pending', held_until: expect.any(String) });
    });

    it('both sweepers running together lose nothing live and leave no orphan blob', async () => {
      const { key, id: tid } = await tenant('sweep');
      const live: Rec[] = [];
      const deleted: Rec[] = [];
      const expiring: Rec[] = [];
      for (let i = 0; i < 10; i++) {
        const via = (i % 2 === 0 ? a : b).apiUrl;
        // Half of the deleted rows share their bytes with a live row.
        live.push(await put(via, key, i % 2 === 0 ? `pair ${i}` : `live ${i}`, { ttl: 'never' }));
        deleted.push(await put(via, key, i % 2 === 0 ? `pair ${i}` : `gone ${i}`, { ttl: 'never' }));
        expiring.push(await put(via, key, `short ${i}`, { ttl: '1h' }));
      }
      for (const [i, d] of deleted.entries()) {
        const via = (i % 2 === 0 ? b : a).apiUrl;
        expect((await api(via, key, 'DELETE', `/v1/artifacts/${d.artifact_id}`)).status).toBe(200);
      }
      const count = async (sql: string) => (await db.query(sql, [tid])).rows[0].n as number;

      // A month later, as far as the stored times go: past the retention and past every TTL.
      const month = 31 * DAY_MS + HOUR_MS;
      await db.query("UPDATE artifacts SET deleted_at = deleted_at - $2 WHERE tenant_id = $1 AND status = 'deleted'", [
        tid,
        month,
      ]);
      await db.query(
        'UPDATE artifacts SET expires_at = expires_at - $2 WHERE tenant_id = $1 AND expires_at IS NOT NULL',
        [tid, month],
      );
      // The two sweepers purge the rows and mark the blobs nothing references any more.
      await eventually(
        async () =>
          (await count('SELECT count(*)::int AS n FROM artifacts WHERE tenant_id = $1')) === live.length &&
          (await count('SELECT count(*)::int AS n FROM blobs WHERE tenant_id = $1 AND orphaned_at IS NOT NULL')) === 15,
        30_000,
        'rows purged and orphans marked',
      );

      // The bytes of one deleted row come back while the sweepers are about to delete them.
      const rescue = put(b.apiUrl, key, 'gone 1', { ttl: 'never' });
      await db.query(
        'UPDATE blobs SET orphaned_at = orphaned_at - $2 WHERE tenant_id = $1 AND orphaned_at IS NOT NULL',
        [tid, 2 * HOUR_MS],
      );
      live.push(await rescue);
      live.push(await put(a.apiUrl, key, 'gone 3', { ttl: 'never' }));

      const expected = [...new Set(live.map((l) => `${tid}/${l.content_hash}`))].sort();
      await eventually(
        async () =>
          JSON.stringify((await backend.objectKeys()).filter((k) => k.startsWith(`${tid}/`))) ===
          JSON.stringify(expected),
        30_000,
        'only referenced blobs left in the bucket',
      );
      for (const l of live) {
        for (const s of [a, b]) {
          expect((await api(s.apiUrl, key, 'GET', `/v1/artifacts/${l.artifact_id}`)).status).toBe(200);
          const dl = await download(s, key, l.artifact_id);
          expect(dl.status, l.filename).toBe(200);
          expect(sha256(dl.body)).toBe(l.content_hash);
        }
      }
      for (const d of [...deleted, ...expiring]) {
        expect((await api(b.apiUrl, key, 'GET', `/v1/artifacts/${d.artifact_id}`)).status).toBe(404);
      }
      expect((await backend.objectKeys()).filter((k) => k.startsWith('staging/'))).toEqual([]);
      const usage = (await api(a.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes;
      const uniqueLive = new Map(live.map((l) => [l.content_hash, l.size_bytes as number]));
      expect(usage).toBe([...uniqueLive.values()].reduce((n, x) => n + x, 0));
    }, 120_000);
  });
}
