import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PLANS } from '../../src/core/plans.js';
import { MAX_OPEN_UPLOADS } from '../../src/core/resumable.js';
import { createRuntime } from '../../src/runtime.js';
import { eventually, expectError, fetchBytes, sha256, uploadJson } from '../helpers/e2e.js';
import { connectHttpMcp } from '../helpers/hosted.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';
import { createScaleoutBackend, type ScaleoutBackend, scaleoutUnavailable } from '../helpers/scaleout.js';
import { api } from '../helpers/server.js';
import { tusFetch, tusMetadata } from '../helpers/tus.js';
import { data } from '../mcp/mcp-client.js';

/**
 * Races on the scale-out set: two `cairn serve` processes (and two operator runtimes, for what has
 * no API route) on one PostgreSQL schema, Redis prefix and S3 bucket, each race run through both.
 *
 * A race that depends on timing is forced where it can be: the test holds a lock on the table the
 * raced step writes last (`LOCK TABLE … IN EXCLUSIVE MODE`, which lets reads through and stops
 * writes), lets every request run up to that write, and lets go only once all of them wait on
 * the lock, or on a request that waits on it. A check made outside the writing transaction has
 * then been made by every request before any of them wrote, as the unluckiest interleaving
 * would have it, on any machine, however loaded.
 */
const reason = await scaleoutUnavailable();
if (reason && !process.env.CI) {
  console.warn(`\n!!! SKIPPING the scale-out race tests: ${reason}.\n!!! CI runs them.\n`);
}
const silentLog = { info() {}, warn() {}, error() {} };
type Runtime = Awaited<ReturnType<typeof createRuntime>>;

if (reason && process.env.CI) {
  describe('races on two instances', () => {
    beforeAll(() => {
      throw new Error(`CI must run the scale-out race tests, but ${reason}.`);
    });
    it('needs PostgreSQL and Redis', () => {});
  });
} else {
  describe.skipIf(reason !== null)('races on two cairn serve processes on PostgreSQL + Redis + S3', () => {
    let backend: ScaleoutBackend;
    let a: ServeProcess;
    let b: ServeProcess;
    /** Two operators' runtimes on the same stores (`cairn admin` on two machines). */
    let admin: Runtime;
    let admin2: Runtime;
    let db: pg.Pool;
    const dirs: string[] = [];
    const tempDir = async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'cairn-races-'));
      dirs.push(dir);
      return dir;
    };

    beforeAll(async () => {
      backend = await createScaleoutBackend();
      // No sweeper of their own: the sweep test runs its sweeps itself.
      const env = { ...backend.env, CAIRN_SWEEP_INTERVAL_SECONDS: '0' };
      [a, b] = await Promise.all([spawnServe(await tempDir(), env, 60_000), spawnServe(await tempDir(), env, 60_000)]);
      const runtime = async () =>
        createRuntime(loadConfig({ dataDir: await tempDir(), logLevel: 'silent' }, backend.env), { log: silentLog });
      admin = await runtime();
      admin2 = await runtime();
      db = backend.pool(4);
    }, 120_000);
    afterAll(async () => {
      await Promise.allSettled([a?.stop(), b?.stop()]);
      await admin?.close();
      await admin2?.close();
      await db?.end();
      await backend?.close();
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    });

    const tenant = async (name: string, plan: 'free' | 'pro' = 'pro') => {
      const { tenant: t, apiKey } = await admin.core.tenants.create(name, plan);
      return { key: apiKey, id: t.id, row: t };
    };
    /** Instance a for even i, b for odd: every race is split over both. */
    const on = (i: number) => (i % 2 === 0 ? a : b);
    /** Leaves `headroom` bytes of the plan's storage to the tenant. */
    const leaveStorage = (tenantId: string, plan: 'free' | 'pro', headroom: number) =>
      db.query('UPDATE tenants SET storage_bytes = $2 WHERE id = $1', [tenantId, PLANS[plan].storageBytes - headroom]);

    /**
     * Runs `race` (n requests started at once) while holding `LOCK TABLE <table> IN EXCLUSIVE
     * MODE`, and lets go once n backends wait on it, directly or through one another.
     */
    async function underLock<T>(table: string, n: number, race: () => Promise<T>[]): Promise<T[]> {
      const holder = await db.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
        const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        const settled = Promise.allSettled(race());
        await eventually(async () => (await waitingBehind(pid)) >= n, 15_000, `${n} requests waiting on ${table}`);
        await holder.query('ROLLBACK');
        return (await settled).map((r) => {
          if (r.status === 'rejected') throw r.reason;
          return r.value;
        });
      } finally {
        // Also when the wait failed: the lock goes before the connection returns to the pool.
        await holder.query('ROLLBACK').catch(() => {});
        holder.release();
      }
    }
    /** Backends waiting on `pid`, directly or through a chain of waits. */
    async function waitingBehind(pid: number): Promise<number> {
      const r = await db.query<{ n: number }>(
        `WITH RECURSIVE chain(pid) AS (
           SELECT $1::int
           UNION
           SELECT w.pid FROM pg_stat_activity AS w JOIN chain AS c ON c.pid = ANY (pg_blocking_pids(w.pid))
         )
         SELECT count(*)::int - 1 AS n FROM chain`,
        [pid],
      );
      return r.rows[0]!.n;
    }
    const statuses = (results: { status: number }[]) => results.map((r) => r.status).sort();
    const tusCreate = (s: ServeProcess, key: string, length: number, name = 'race.bin') =>
      tusFetch(`${s.apiUrl}/v1/uploads/tus`, key, 'POST', {
        'Upload-Length': String(length),
        'Upload-Metadata': tusMetadata({ filename: name }),
      });
    const openUploads = async (tenantId: string) =>
      (await db.query('SELECT count(*)::int AS n FROM resumable_uploads WHERE tenant_id = $1', [tenantId])).rows[0]
        .n as number;

    describe('item 1: every cap holds under concurrency on two instances', () => {
      it(`${MAX_OPEN_UPLOADS} unfinished uploads at most: 10 creations at once with 5 places left open 5`, async () => {
        const { key, id } = await tenant('tus-count');
        for (let i = 0; i < MAX_OPEN_UPLOADS - 5; i++) expect((await tusCreate(on(i), key, 10)).status).toBe(201);
        const results = await underLock('resumable_uploads', 10, () =>
          Array.from({ length: 10 }, (_, i) => tusCreate(on(i), key, 10)),
        );
        expect(statuses(results)).toEqual([...Array(5).fill(201), ...Array(5).fill(403)]);
        for (const r of results.filter((x) => x.status === 403)) {
          expect(r.json).toMatchObject({ error: { code: 'quota_exceeded' } });
        }
        expect(await openUploads(id)).toBe(MAX_OPEN_UPLOADS);
      });

      it('the storage reservation: 10 creations of 1,000,000 bytes at once with 3,000,000 left open 3', async () => {
        const { key, id } = await tenant('tus-bytes');
        await leaveStorage(id, 'pro', 3_000_000);
        const results = await underLock('resumable_uploads', 10, () =>
          Array.from({ length: 10 }, (_, i) => tusCreate(on(i), key, 1_000_000)),
        );
        expect(statuses(results)).toEqual([...Array(3).fill(201), ...Array(7).fill(403)]);
        expect(await openUploads(id)).toBe(3);
      });

      it(`40 creations at once, unforced, as the probe sent them, open exactly ${MAX_OPEN_UPLOADS}`, async () => {
        const { key, id } = await tenant('tus-burst');
        const results = await Promise.all(Array.from({ length: 40 }, (_, i) => tusCreate(on(i), key, 10)));
        expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_OPEN_UPLOADS);
        expect(await openUploads(id)).toBe(MAX_OPEN_UPLOADS);
      });

      it('active links per plan: 10 creations at once with 5 places left make 5', async () => {
        const { key, id } = await tenant('link-cap', 'free');
        const art = (await uploadJson(a.apiUrl, key, { filename: 'l.txt', content: 'bGluaw==' })).json;
        const max = PLANS.free.activeLinks;
        await db.query(
          `INSERT INTO links (id, tenant_id, artifact_id, created_at, expires_at)
           SELECT 'lnk_' || lpad(g::text, 20, '0'), $1, $2, $3::bigint, $3::bigint + 86400000 FROM generate_series(1, $4) AS g`,
          [id, art.artifact_id, Date.now(), max - 5],
        );
        const results = await underLock('links', 10, () =>
          Array.from({ length: 10 }, (_, i) =>
            api(on(i).apiUrl, key, 'POST', `/v1/artifacts/${art.artifact_id}/links`),
          ),
        );
        expect(statuses(results)).toEqual([...Array(5).fill(201), ...Array(5).fill(403)]);
        expect((await api(b.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(max);
      });

      it('API keys per plan: 12 creations at once by two operators with 9 places left make 9', async () => {
        const { id, row } = await tenant('key-cap', 'free');
        const results = await underLock('api_keys', 12, () =>
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? admin2 : admin).core.tenants.createKey(row).then(
              () => 'created',
              (err: { code?: string }) => err.code,
            ),
          ),
        );
        expect(results.filter((r) => r === 'created')).toHaveLength(PLANS.free.apiKeys - 1);
        expect(results.filter((r) => r === 'quota_exceeded')).toHaveLength(13 - PLANS.free.apiKeys);
        const keys = await db.query('SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1', [id]);
        expect(keys.rows[0].n).toBe(PLANS.free.apiKeys);
      });

      it('storage, multipart and JSON uploads: 10 of 1,000 bytes at once with 3,000 left store 3', async () => {
        const { key, id } = await tenant('upload-bytes');
        await leaveStorage(id, 'pro', 3000);
        // Metadata makes the insert write artifact_meta last, after the storage is counted.
        const results = await underLock('artifact_meta', 10, () =>
          Array.from({ length: 10 }, (_, i) =>
            uploadJson(on(i).apiUrl, key, {
              filename: `u${i}.bin`,
              content: randomBytes(1000).toString('base64'),
              metadata: { race: 'storage' },
            }),
          ),
        );
        expect(statuses(results)).toEqual([...Array(3).fill(201), ...Array(7).fill(403)]);
        expect((await admin.core.deps.tenantStore.getTenant(id))?.storageBytes).toBe(PLANS.pro.storageBytes);
      });

      it('storage, presigned completes: 10 of 1,000 bytes at once with 3,000 left activate 3', async () => {
        const { key, id } = await tenant('presigned-bytes');
        await leaveStorage(id, 'pro', 3000);
        const ids: string[] = [];
        for (let i = 0; i < 10; i++) {
          const ticket = await api(on(i).apiUrl, key, 'POST', '/v1/artifacts/upload-url', {
            filename: `p${i}.bin`,
            size_bytes: 1000,
            metadata: { race: 'presigned' },
          });
          expect(ticket.status, ticket.text).toBe(201);
          const put = await fetch(ticket.json.upload_url, {
            method: 'PUT',
            body: randomBytes(1000),
            headers: ticket.json.upload_headers,
          });
          expect(put.status).toBe(200);
          ids.push(ticket.json.artifact_id);
        }
        const results = await underLock('artifact_meta', 10, () =>
          ids.map((artifactId, i) => api(on(i).apiUrl, key, 'POST', `/v1/artifacts/${artifactId}/complete`)),
        );
        expect(statuses(results)).toEqual([...Array(3).fill(200), ...Array(7).fill(403)]);
        expect((await admin.core.deps.tenantStore.getTenant(id))?.storageBytes).toBe(PLANS.pro.storageBytes);
      });
    });

    describe('item 2: a committed blob is never written again, and every complete answers the record', () => {
      /** CopyObject calls that created each object: a blob is copied into place exactly once. */
      const copies = new Map<string, number>();
      let stopWatching: () => void;
      beforeAll(() => {
        stopWatching = backend.s3.onObjectEvent((name, objectKey) => {
          if (name === 'ObjectCreated:Copy') copies.set(objectKey, (copies.get(objectKey) ?? 0) + 1);
        });
      });
      afterAll(() => stopWatching?.());
      const blobObject = (tenantId: string, hash: string) => `${backend.env.CAIRN_S3_PREFIX}${tenantId}/${hash}`;
      const downloaded = async (s: ServeProcess, key: string, artifactId: string) => {
        const link = await api(s.apiUrl, key, 'GET', `/v1/artifacts/${artifactId}/download-url`);
        if (link.status !== 200) return `download-url ${link.status}`;
        const got = await fetchBytes(link.json.download_url);
        return got.status === 200 ? sha256(got.body) : `download ${got.status}`;
      };

      it('4 completes of one presigned upload at once, 2 on each instance, 15 times: the same record each, one copy', async () => {
        const { key, id } = await tenant('complete-race');
        const problems: string[] = [];
        for (let round = 0; round < 15; round++) {
          const bytes = randomBytes(512 * 1024);
          const ticket = await api(on(round).apiUrl, key, 'POST', '/v1/artifacts/upload-url', {
            filename: `c${round}.bin`,
            size_bytes: bytes.length,
          });
          expect(ticket.status, ticket.text).toBe(201);
          const artifactId = ticket.json.artifact_id as string;
          const put = await fetch(ticket.json.upload_url, {
            method: 'PUT',
            body: bytes,
            headers: ticket.json.upload_headers,
          });
          expect(put.status).toBe(200);
          const results = await Promise.all(
            [0, 1, 2, 3].map((i) => api(on(i).apiUrl, key, 'POST', `/v1/artifacts/${artifactId}/complete`)),
          );
          const answers = new Set(results.map((r) => `${r.status} ${r.status === 200 ? r.text : r.json?.error?.code}`));
          const copied = copies.get(blobObject(id, sha256(bytes))) ?? 0;
          const got = await downloaded(on(round + 1), key, artifactId);
          if (answers.size !== 1 || results[0]!.status !== 200 || copied !== 1 || got !== sha256(bytes)) {
            problems.push(
              `round ${round}: answers ${[...answers].map((x) => x.slice(0, 40))}, copies ${copied}, ${got}`,
            );
          }
        }
        expect(problems).toEqual([]);
        // Every landed object went once its artifact was active.
        expect((await backend.objectKeys()).filter((k) => k.startsWith(`uploads/${id}/`))).toEqual([]);
      }, 120_000);

      it('8 uploads of the same new bytes at once, 4 on each instance, 10 times: 8 artifacts, one copy', async () => {
        const { key, id } = await tenant('same-bytes-race');
        const problems: string[] = [];
        for (let round = 0; round < 10; round++) {
          const bytes = randomBytes(256 * 1024);
          const results = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              uploadJson(on(i).apiUrl, key, { filename: `s${round}-${i}.bin`, content: bytes.toString('base64') }),
            ),
          );
          const copied = copies.get(blobObject(id, sha256(bytes))) ?? 0;
          const created = results.filter((r) => r.status === 201);
          const got = created[0] ? await downloaded(on(round), key, created[0].json.artifact_id) : 'none';
          if (created.length !== 8 || copied !== 1 || got !== sha256(bytes)) {
            problems.push(`round ${round}: ${statuses(results)}, copies ${copied}, ${got}`);
          }
        }
        expect(problems).toEqual([]);
      }, 120_000);
    });

    describe('item 4: parallel sweeps', () => {
      it('two sweeps over 5 expired resumable uploads report 5 purged between them, however they interleave', async () => {
        const { key, id } = await tenant('sweep-tus');
        const urls: string[] = [];
        for (let i = 0; i < 5; i++) {
          const created = await tusCreate(on(i), key, 100);
          const url = created.headers.get('location')!;
          const patched = await tusFetch(
            url,
            key,
            'PATCH',
            { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
            randomBytes(40),
          );
          expect(patched.status, patched.text).toBe(204);
          urls.push(url);
        }
        await db.query('UPDATE resumable_uploads SET expires_at = $2 WHERE tenant_id = $1', [id, Date.now() - 1000]);
        const pieces = async () => (await backend.objectKeys()).filter((k) => k.startsWith(`uploads/${id}/`));
        expect(await pieces()).toHaveLength(5);
        const sweep = (r: Runtime) => r.core.sweeper.runOnce().then((report) => report.resumablesPurged);

        // Two sweeps while the rows are held, as by a third that is deleting them: a sweep that
        // merely lists them goes on to drop their pieces and then waits to delete the rows.
        const holder = await db.connect();
        let first: number[];
        try {
          await holder.query('BEGIN');
          await holder.query('SELECT id FROM resumable_uploads WHERE tenant_id = $1 FOR UPDATE', [id]);
          const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
          let done = 0;
          const both = Promise.all([sweep(admin), sweep(admin2)].map((p) => p.finally(() => done++)));
          await eventually(async () => done === 2 || (await waitingBehind(pid)) >= 2, 15_000, 'both sweeps');
          await holder.query('ROLLBACK');
          first = await both;
        } finally {
          await holder.query('ROLLBACK').catch(() => {});
          holder.release();
        }
        const reports = [...first];
        for (let i = 0; i < 5 && (await openUploads(id)) > 0; i++) {
          reports.push(...(await Promise.all([sweep(admin), sweep(admin2)])));
        }
        expect(await openUploads(id)).toBe(0);
        expect(reports.reduce((n, x) => n + x, 0)).toBe(5);
        expect(await pieces()).toEqual([]);
        for (const url of urls) expect((await tusFetch(url, key, 'HEAD')).status).toBe(404);
      });
    });

    describe("item 5: another tenant's link", () => {
      it('revoking it is 404 artifact_not_found on both instances, by REST and hosted MCP, and the link keeps serving', async () => {
        const owner = await tenant('link-owner', 'free');
        const stranger = await tenant('link-stranger', 'free');
        const art = (await uploadJson(a.apiUrl, owner.key, { filename: 'o.txt', content: 'b3duZXI=' })).json;
        const link = (await api(a.apiUrl, owner.key, 'POST', `/v1/artifacts/${art.artifact_id}/links`)).json;
        const served = async () =>
          Promise.all(
            [a, b].map(async (s) => {
              const u = new URL(link.url);
              u.port = new URL(s.contentUrl).port;
              const res = await fetch(u);
              return [res.status, await res.text()];
            }),
          );
        for (const s of [a, b]) {
          expectError(
            await api(s.apiUrl, stranger.key, 'DELETE', `/v1/links/${link.link_id}`),
            404,
            'artifact_not_found',
          );
        }
        const mcp = await connectHttpMcp(b.apiUrl, stranger.key);
        try {
          const refused = await mcp.call('revoke_link', { link_id: link.link_id });
          expect(refused.isError).toBe(true);
          expect(refused._meta).toMatchObject({ status: 404, code: 'artifact_not_found' });
        } finally {
          await mcp.close();
        }
        expect(await served()).toEqual([
          [200, 'owner'],
          [200, 'owner'],
        ]);
        expect((await api(a.apiUrl, owner.key, 'GET', '/v1/whoami')).json.active_links).toBe(1);

        // Its owner revokes it through one, and again through the other: the same answer.
        for (const s of [b, a]) {
          const r = await api(s.apiUrl, owner.key, 'DELETE', `/v1/links/${link.link_id}`);
          expect(r.status, r.text).toBe(200);
          expect(r.json).toEqual({ link_id: link.link_id, revoked: true });
        }
        expect((await served()).map(([status]) => status)).toEqual([404, 404]);
        const ownerMcp = await connectHttpMcp(a.apiUrl, owner.key);
        try {
          expect(data(await ownerMcp.call('revoke_link', { link_id: link.link_id }))).toEqual({
            link_id: link.link_id,
            revoked: true,
          });
        } finally {
          await ownerMcp.close();
        }
        expectError(
          await api(b.apiUrl, stranger.key, 'DELETE', `/v1/links/${link.link_id}`),
          404,
          'artifact_not_found',
        );
        expect((await api(b.apiUrl, owner.key, 'GET', '/v1/whoami')).json.active_links).toBe(0);
      });
    });
  });
}
