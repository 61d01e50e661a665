import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, fetchBytes, filesUnder } from '../helpers/e2e.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';
import { api } from '../helpers/server.js';
import { tusFetch, tusMetadata } from '../helpers/tus.js';

/**
 * The real binary killed with SIGKILL in the middle of a tus PATCH, restarted on the same data
 * folder, and the upload resumed to a byte-identical artifact. Local only, like crash.test.ts:
 * the two-instance test (test/scaleout) resumes on another instance of the scale-out set.
 */
const localOnly = describe.skipIf(process.env.CAIRN_TEST_BACKEND === 'scaleout');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const dirs: string[] = [];
const procs: ServeProcess[] = [];
afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

localOnly('kill -9 during a resumable upload', () => {
  it('resumes after the restart from the last recorded offset, and the artifact is byte-identical', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-tus-crash-'));
    dirs.push(dataDir);
    const first = await spawnServe(dataDir);
    procs.push(first);
    const key = first.apiKey ?? '';
    const MiB = 1024 * 1024;
    const data = randomBytes(6 * MiB);

    const created = await tusFetch(`${first.apiUrl}/v1/uploads/tus`, key, 'POST', {
      'Upload-Length': String(data.length),
      'Upload-Metadata': tusMetadata({ filename: 'crash.bin' }),
    });
    expect(created.status).toBe(201);
    const id = (created.headers.get('location') ?? '').split('/').pop() ?? '';
    const piece = (from: number) => ({
      'Content-Type': 'application/offset+octet-stream',
      'Upload-Offset': String(from),
    });
    expect(
      (await tusFetch(`${first.apiUrl}/v1/uploads/tus/${id}`, key, 'PATCH', piece(0), data.subarray(0, 2 * MiB)))
        .status,
    ).toBe(204);

    // The next PATCH sends 1 MiB and then waits: the server is killed while it holds the upload.
    const inFlight = fetch(`${first.apiUrl}/v1/uploads/tus/${id}`, {
      method: 'PATCH',
      headers: { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${key}`, ...piece(2 * MiB) },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(data.subarray(2 * MiB, 3 * MiB));
        },
      }),
      duplex: 'half',
    } as RequestInit).catch((err: unknown) => err);
    const landing = path.join(dataDir, 'blobs', '.landing');
    await eventually(
      async () => (await filesUnder(landing)).some((f) => f.includes(`${id}.${2 * MiB}.`)),
      30_000,
      'the second PATCH streaming into its piece',
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await inFlight).toBeInstanceOf(Error);

    const second = await spawnServe(dataDir);
    procs.push(second);
    const url = `${second.apiUrl}/v1/uploads/tus/${id}`;
    // The dead process's hold on the upload lapses by itself (within 8 s); the HEAD waits for
    // that, so the offset it answers is one a PATCH is accepted at.
    const head = await tusFetch(url, key, 'HEAD');
    expect(head.status).toBe(200);
    // What the killed PATCH received was never recorded: the upload continues after the first piece.
    expect(head.headers.get('upload-offset')).toBe(String(2 * MiB));
    const resumed = await tusFetch(url, key, 'PATCH', piece(2 * MiB), data.subarray(2 * MiB));
    expect(resumed.status, resumed.text).toBe(204);
    expect(resumed.headers.get('upload-offset')).toBe(String(data.length));

    const record = await api(second.apiUrl, key, 'GET', `/v1/artifacts/${id}`);
    expect(record.json).toMatchObject({ size_bytes: data.length, content_hash: sha(data) });
    const link = await api(second.apiUrl, key, 'GET', `/v1/artifacts/${id}/download-url`);
    expect(sha((await fetchBytes(link.json.download_url as string)).body)).toBe(sha(data));
    // Only the killed PATCH's unrecorded piece is left, for the sweeper's landing sweep.
    expect((await filesUnder(landing)).filter((f) => f.includes(id))).toHaveLength(1);
    expect((await second.stop()).code).toBe(0);
  }, 120_000);
});
