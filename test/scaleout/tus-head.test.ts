import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Core } from '../../src/core/index.js';
import { createRuntime } from '../../src/runtime.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';
import { rawConnect, requestHead } from '../helpers/raw-http.js';
import { createScaleoutBackend, type ScaleoutBackend, scaleoutUnavailable } from '../helpers/scaleout.js';
import { api } from '../helpers/server.js';
import { tusFetch, tusMetadata, untilUploadHeld } from '../helpers/tus.js';

/**
 * A tus PATCH cut on one instance, and a HEAD on the other: the HEAD answers the offset a PATCH
 * at that offset is accepted at (docs/api.md, "Resuming"), so a client that trusts it never gets
 * a 409. Two `cairn serve` processes on one PostgreSQL schema, with either blob backend: the S3
 * bucket (s3rver, or the engine CAIRN_TEST_S3_ENDPOINT names) or one data folder both share.
 */
const reason = await scaleoutUnavailable();
if (reason && !process.env.CI) {
  console.warn(`\n!!! SKIPPING the tus HEAD-on-another-instance tests: ${reason}.\n!!! CI runs them.\n`);
}
const silentLog = { info() {}, warn() {}, error() {} };
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

type Blobs = 's3' | 'folder';

if (reason && process.env.CI) {
  describe('tus HEAD on another instance', () => {
    beforeAll(() => {
      throw new Error(`CI must run the tus HEAD-on-another-instance tests, but ${reason}.`);
    });
    it('needs PostgreSQL and Redis', () => {});
  });
} else {
  describe.skipIf(reason !== null).each<Blobs>(['s3', 'folder'])(
    'tus HEAD on another instance, blobs in %s',
    (blobs) => {
      let backend: ScaleoutBackend;
      let a: ServeProcess;
      let b: ServeProcess;
      let admin: { core: Core; close: () => Promise<void> };
      let db: pg.Pool;
      const dirs: string[] = [];
      const tempDir = async () => {
        const dir = await mkdtemp(path.join(tmpdir(), 'cairn-tus-head-'));
        dirs.push(dir);
        return dir;
      };

      beforeAll(async () => {
        backend = await createScaleoutBackend();
        // The folder backend: PostgreSQL and Redis as before, the blobs in one folder both serve.
        const env = Object.fromEntries(
          Object.entries(backend.env).filter(([name]) => blobs === 's3' || !name.startsWith('CAIRN_S3_')),
        );
        const shared = await tempDir();
        const dataDir = async () => (blobs === 'folder' ? shared : tempDir());
        a = await spawnServe(await dataDir(), { ...env, CAIRN_SWEEP_INTERVAL_SECONDS: '0' }, 60_000);
        b = await spawnServe(await dataDir(), { ...env, CAIRN_SWEEP_INTERVAL_SECONDS: '0' }, 60_000);
        admin = await createRuntime(loadConfig({ dataDir: await tempDir(), logLevel: 'silent' }, env), {
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

      it('a HEAD on B while A still holds a cut PATCH answers the offset B then accepts', async () => {
        const { apiKey } = await admin.core.tenants.create(`tus-head-${blobs}`, 'pro');
        const data = randomBytes(6 * MiB);
        const created = await tusFetch(`${a.apiUrl}/v1/uploads/tus`, apiKey, 'POST', {
          'Upload-Length': String(data.length),
          'Upload-Metadata': tusMetadata({ filename: 'cut.bin' }),
        });
        expect(created.status).toBe(201);
        const id = (created.headers.get('location') ?? '').split('/').pop() ?? '';
        const onA = `${a.apiUrl}/v1/uploads/tus/${id}`;
        const onB = `${b.apiUrl}/v1/uploads/tus/${id}`;

        // A PATCH of the whole file to A sends 2 MiB, then nothing: A holds the upload, reading.
        const patch = await rawConnect(onA);
        patch.write(
          requestHead(
            a.apiUrl,
            'PATCH',
            new URL(onA).pathname,
            {
              'Tus-Resumable': '1.0.0',
              Authorization: `Bearer ${apiKey}`,
              'Content-Type': 'application/offset+octet-stream',
              'Upload-Offset': '0',
            },
            data.length,
          ),
        );
        patch.write(data.subarray(0, 2 * MiB));
        await untilUploadHeld(db, id, 'instance A holding the upload');

        // The client gives up on that connection and asks B where to continue. The cut comes once
        // B has answered, or after a second: a HEAD that reads the offset while A still holds the
        // upload answers at once, with the offset from before the PATCH (0), which A is about to
        // move; a HEAD that waits for A answers only after the cut.
        const head = tusFetch(onB, apiKey, 'HEAD');
        await Promise.race([head, sleep(1000)]);
        patch.destroy();
        const answered = await head;
        expect(answered.status).toBe(200);
        const offset = Number(answered.headers.get('upload-offset'));
        // What A received before the cut is kept, and the HEAD says so.
        expect(offset).toBeGreaterThan(0);
        expect(offset).toBeLessThanOrEqual(2 * MiB);

        // Trusting that one HEAD: the rest goes to B at that offset, and is accepted.
        const rest = await tusFetch(
          onB,
          apiKey,
          'PATCH',
          { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) },
          data.subarray(offset),
        );
        expect(rest.status, rest.text).toBe(204);
        expect(rest.headers.get('upload-offset')).toBe(String(data.length));
        const record = await api(a.apiUrl, apiKey, 'GET', `/v1/artifacts/${id}`);
        expect(record.json).toMatchObject({ size_bytes: data.length, content_hash: sha(data) });
      }, 120_000);
    },
  );
}
