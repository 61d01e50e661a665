import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OPEN_UPLOADS } from '../../src/core/resumable.js';
import type { BlobStore } from '../../src/ports/blob-store.js';
import { ManualClock } from '../../src/ports/clock.js';
import { Balancer, freePort } from '../helpers/balancer.js';
import { eventually, fetchBytes, put } from '../helpers/e2e.js';
import { type Faults, withFaults } from '../helpers/faults.js';
import { parseHead, rawConnect, requestHead } from '../helpers/raw-http.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { tusFetch, tusJsUpload, tusMetadata } from '../helpers/tus.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const idOf = (uploadUrl: string) => uploadUrl.split('/').pop() ?? '';
const digestOf = (alg: string, b: Buffer) => `${alg} ${createHash(alg).update(b).digest('base64')}`;

/**
 * A PATCH of 1,000 bytes at offset 0 that sends 500, waits for `release()`, then sends the rest;
 * resolves once the server holds the upload for it (watched in the store, not with requests that
 * would compete for the upload themselves).
 */
async function heldPatch(s: TestServer, url: string): Promise<{ release: () => void; answered: Promise<Response> }> {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const answered = fetch(url, {
    method: 'PATCH',
    headers: {
      'Tus-Resumable': '1.0.0',
      Authorization: `Bearer ${s.apiKey}`,
      'Content-Type': 'application/offset+octet-stream',
      'Upload-Offset': '0',
    },
    body: new ReadableStream({
      async start(controller) {
        controller.enqueue(new Uint8Array(500).fill(1));
        await gate;
        controller.enqueue(new Uint8Array(500).fill(1));
        controller.close();
      },
    }),
    duplex: 'half',
  } as RequestInit);
  const tenantId = (await s.core.tenants.byName('main')).id;
  await until(async () => Boolean((await s.core.deps.resumables.getResumable(tenantId, idOf(url)))?.leaseOwner));
  return { release, answered };
}

/** Polls `check` every 10 ms until it holds (at most 10 s). */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not met in 10 s');
}

describe('tus 1.0.0 resumable uploads', () => {
  let s: TestServer;
  let endpoint: string;

  beforeAll(async () => {
    s = await startTestServer();
    endpoint = `${s.apiUrl}/v1/uploads/tus`;
  });
  afterAll(async () => s.close());

  const download = async (id: string) => {
    const link = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}/download-url`);
    expect(link.status).toBe(200);
    const got = await fetchBytes(link.json.download_url as string);
    expect(got.status).toBe(200);
    return got.body;
  };

  it('OPTIONS names the version, extensions, the largest size and the checksum algorithms', async () => {
    const res = await fetch(endpoint, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-resumable')).toBe('1.0.0');
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')?.split(',')).toEqual(
      expect.arrayContaining(['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum']),
    );
    expect(res.headers.get('tus-max-size')).toBe(String(5 * 1024 ** 3));
    expect(res.headers.get('tus-checksum-algorithm')?.split(',')).toEqual(['sha1', 'sha256']);
  });

  it('tus-js-client uploads a file that becomes one artifact, byte for byte, with its fields', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const run = await tusJsUpload(data, {
      endpoint,
      apiKey: s.apiKey,
      metadata: {
        filename: 'big.bin',
        content_type: 'application/octet-stream',
        session_id: 'tus-1',
        agent_id: 'uploader',
        ttl: '7d',
        metadata: JSON.stringify({ kind: 'dump', n: 3 }),
      },
    });
    expect(run.url).toMatch(new RegExp(`^${s.apiUrl}/v1/uploads/tus/art_[A-Za-z0-9]{16}$`));
    const id = idOf(run.url);
    const rec = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}`);
    expect(rec.status).toBe(200);
    expect(rec.json).toMatchObject({
      artifact_id: id,
      filename: 'big.bin',
      size_bytes: data.length,
      content_hash: sha(data),
      session_id: 'tus-1',
      agent_id: 'uploader',
      metadata: { kind: 'dump', n: 3 },
    });
    expect(sha(await download(id))).toBe(sha(data));
    // The pieces went with the upload.
    expect((await s.landedFiles()).filter((f) => f.includes(id))).toEqual([]);

    // The same bytes again: a second artifact over the one stored blob, counted once.
    const storage = async () => (await api(s.apiUrl, s.apiKey, 'GET', '/v1/whoami')).json.usage_storage_bytes as number;
    const before = await storage();
    const again = await tusJsUpload(data, { endpoint, apiKey: s.apiKey, metadata: { filename: 'copy.bin' } });
    expect(idOf(again.url)).not.toBe(id);
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${idOf(again.url)}`)).json.content_hash).toBe(
      sha(data),
    );
    expect(await storage()).toBe(before);
    expect((await s.blobFiles()).filter((f) => f.endsWith(sha(data)))).toHaveLength(1);
  });

  /** Creates an upload with raw HTTP; returns its URL. */
  async function create(length: number, fields: Record<string, string> = { filename: 'f.bin' }, key = s.apiKey) {
    const res = await tusFetch(endpoint, key, 'POST', {
      'Upload-Length': String(length),
      'Upload-Metadata': tusMetadata(fields),
    });
    expect(res.status, res.text).toBe(201);
    return res.headers.get('location') ?? '';
  }
  const patch = (url: string, offset: number, body: Buffer, headers: Record<string, string> = {}, key = s.apiKey) =>
    tusFetch(
      url,
      key,
      'PATCH',
      { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset), ...headers },
      body,
    );
  const offsetOf = async (url: string, key = s.apiKey) => {
    const head = await tusFetch(url, key, 'HEAD');
    return head.status === 200 ? Number(head.headers.get('upload-offset')) : head.status;
  };
  const digest = (alg: string, b: Buffer) => `${alg} ${createHash(alg).update(b).digest('base64')}`;

  it('resumes from the bytes that arrived when the connection is cut mid-PATCH', async () => {
    const lb = await new Balancer().start();
    const port = await freePort();
    const behind = await startTestServer({ apiPort: port, env: { CAIRN_API_ORIGIN: lb.url } });
    lb.routeTo(port);
    try {
      const data = randomBytes(8 * 1024 * 1024);
      const tenantId = (await behind.core.tenants.byName('main')).id;
      let url = '';
      // The cut comes once the server is reading the PATCH (it holds the upload's lease).
      lb.cutAfter(3 * 1024 * 1024, () =>
        until(async () => Boolean((await behind.core.deps.resumables.getResumable(tenantId, idOf(url)))?.leaseOwner)),
      );
      const run = await tusJsUpload(data, {
        endpoint: `${lb.url}/v1/uploads/tus`,
        apiKey: behind.apiKey,
        metadata: { filename: 'cut.bin' },
        retryDelays: [0, 300, 1000, 2000, 3000],
        onPatch: (patchUrl) => {
          url = patchUrl;
        },
      });
      expect(lb.cuts).toBe(1);
      // The first PATCH started at 0; the one that finished started where the cut one stopped.
      expect(run.patchOffsets[0]).toBe(0);
      expect(run.patchOffsets.at(-1)).toBeGreaterThan(1024 * 1024);
      const link = await api(behind.apiUrl, behind.apiKey, 'GET', `/v1/artifacts/${idOf(run.url)}/download-url`);
      expect(sha((await fetchBytes(link.json.download_url as string)).body)).toBe(sha(data));
      expect(await behind.landedFiles()).toEqual([]);
    } finally {
      await behind.close();
      await lb.close();
    }
  });

  it('creation-with-upload takes the first piece with the POST', async () => {
    const data = randomBytes(200_000);
    const res = await tusFetch(
      endpoint,
      s.apiKey,
      'POST',
      {
        'Upload-Length': String(data.length),
        'Upload-Metadata': tusMetadata({ filename: 'early.bin' }),
        'Content-Type': 'application/offset+octet-stream',
      },
      data.subarray(0, 50_000),
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('upload-offset')).toBe('50000');
    expect(res.headers.get('upload-expires')).toMatch(/GMT$/);
    expect(res.text).toBe('');
    expect(res.headers.get('content-type')).toBeNull();
    const url = res.headers.get('location') ?? '';
    const done = await patch(url, 50_000, data.subarray(50_000));
    expect(done.status).toBe(204);
    expect(done.headers.get('upload-offset')).toBe(String(data.length));
    expect(await offsetOf(url)).toBe(data.length);
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${idOf(url)}`)).json.content_hash).toBe(sha(data));
  });

  it('refuses a PATCH at the wrong offset (409) and keeps nothing of it', async () => {
    const url = await create(1000);
    expect((await patch(url, 0, Buffer.alloc(100, 1))).status).toBe(204);
    const wrong = await patch(url, 0, Buffer.alloc(100, 2));
    expect(wrong.status).toBe(409);
    expect(wrong.json).toMatchObject({ error: { code: 'upload_offset_conflict', status: 409 } });
    expect(wrong.headers.get('tus-resumable')).toBe('1.0.0');
    expect(await offsetOf(url)).toBe(100);
  });

  it('checks Upload-Checksum (sha1, sha256): a mismatch is 460 and nothing of the piece is kept', async () => {
    const data = randomBytes(3000);
    const url = await create(data.length);
    const first = data.subarray(0, 1000);
    expect((await patch(url, 0, first, { 'Upload-Checksum': digest('sha1', first) })).status).toBe(204);
    const second = data.subarray(1000, 2000);
    const bad = await patch(url, 1000, second, { 'Upload-Checksum': digest('sha256', Buffer.from('other')) });
    expect(bad.status).toBe(460);
    expect(bad.json).toMatchObject({ error: { code: 'checksum_mismatch', status: 460 } });
    expect(await offsetOf(url)).toBe(1000);
    expect((await s.landedFiles()).filter((f) => f.includes(idOf(url)))).toHaveLength(1);
    const md5 = await patch(url, 1000, second, { 'Upload-Checksum': digest('md5', second) });
    expect(md5.status).toBe(400);
    expect(md5.json).toMatchObject({ error: { code: 'invalid_request' } });
    expect(
      (await patch(url, 1000, data.subarray(1000), { 'Upload-Checksum': digest('sha256', data.subarray(1000)) }))
        .status,
    ).toBe(204);
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${idOf(url)}`)).json.content_hash).toBe(sha(data));
  });

  it('refuses bad requests before any byte, in the error envelope', async () => {
    const noVersion = await fetch(endpoint, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.apiKey}`, 'Upload-Length': '10' },
    });
    expect(noVersion.status).toBe(412);
    expect(noVersion.headers.get('tus-version')).toBe('1.0.0');
    expect(await noVersion.json()).toMatchObject({ error: { code: 'invalid_request', status: 412 } });

    expect((await tusFetch(endpoint, null, 'POST', { 'Upload-Length': '10' })).status).toBe(401);
    const cases: [Record<string, string>, number, string, RegExp][] = [
      [{ 'Upload-Metadata': tusMetadata({ filename: 'a' }) }, 400, 'invalid_request', /Upload-Length/],
      [
        { 'Upload-Defer-Length': '1', 'Upload-Metadata': tusMetadata({ filename: 'a' }) },
        400,
        'invalid_request',
        /Defer/,
      ],
      [
        { 'Upload-Length': '-1', 'Upload-Metadata': tusMetadata({ filename: 'a' }) },
        400,
        'invalid_request',
        /whole number/,
      ],
      [{ 'Upload-Length': '10', 'Upload-Metadata': tusMetadata({ filenme: 'a' }) }, 400, 'invalid_request', /filenme/],
      [{ 'Upload-Length': '10', 'Upload-Metadata': 'filename !!!' }, 400, 'invalid_request', /base64/],
      [{ 'Upload-Length': '10' }, 400, 'invalid_request', /filename/],
      [
        { 'Upload-Length': '10', 'Upload-Metadata': tusMetadata({ filename: 'a', metadata: '[1' }) },
        400,
        'invalid_request',
        /JSON/,
      ],
      [
        { 'Upload-Length': '10', 'Upload-Metadata': tusMetadata({ filename: 'a', ttl: '9999d' }) },
        400,
        'ttl_exceeds_plan_limit',
        /./,
      ],
      [
        { 'Upload-Length': String(5 * 1024 ** 3 + 1), 'Upload-Metadata': tusMetadata({ filename: 'a' }) },
        413,
        'file_too_large',
        /5368709120/,
      ],
    ];
    for (const [headers, status, code, message] of cases) {
      const res = await tusFetch(endpoint, s.apiKey, 'POST', headers);
      expect(res.status, JSON.stringify(headers)).toBe(status);
      expect(res.json, JSON.stringify(headers)).toMatchObject({ error: { code, status } });
      expect((res.json as { error: { message: string } }).error.message).toMatch(message);
    }
    const free = await s.createTenant('tus-free', 'free');
    const tooBig = await tusFetch(endpoint, free, 'POST', {
      'Upload-Length': '524288001',
      'Upload-Metadata': tusMetadata({ filename: 'a' }),
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.json).toMatchObject({ error: { code: 'file_too_large', upgrade_url: expect.any(String) } });
    expect(
      (
        await tusFetch(endpoint, free, 'POST', {
          'Upload-Length': '524288000',
          'Upload-Metadata': tusMetadata({ filename: 'a' }),
        })
      ).status,
    ).toBe(201);

    // A sealed session takes no upload, refused at creation.
    await put(s.apiUrl, s.apiKey, 'x', { session_id: 'sealed-tus' });
    const seal = await api(s.apiUrl, s.apiKey, 'POST', '/v1/sessions/sealed-tus/seal');
    expect(seal.status, JSON.stringify(seal.json)).toBe(200);
    const sealed = await tusFetch(endpoint, s.apiKey, 'POST', {
      'Upload-Length': '10',
      'Upload-Metadata': tusMetadata({ filename: 'a', session_id: 'sealed-tus' }),
    });
    expect(sealed.status).toBe(409);
    expect(sealed.json).toMatchObject({ error: { code: 'session_sealed' } });

    const url = await create(10);
    const wrongType = await tusFetch(
      url,
      s.apiKey,
      'PATCH',
      { 'Content-Type': 'application/octet-stream', 'Upload-Offset': '0' },
      Buffer.alloc(10),
    );
    expect(wrongType.status).toBe(415);
    expect((await patch(url, 0, Buffer.alloc(11))).status).toBe(413);
    expect(await offsetOf(url)).toBe(0);
  });

  it("answers 404 for an upload that is unknown, malformed or another tenant's, and changes nothing", async () => {
    const url = await create(100);
    expect((await patch(url, 0, Buffer.alloc(40, 1))).status).toBe(204);
    const other = await s.createTenant('tus-other');
    expect(await offsetOf(url, other)).toBe(404);
    expect((await patch(url, 40, Buffer.alloc(60, 2), {}, other)).status).toBe(404);
    expect((await tusFetch(url, other, 'DELETE')).status).toBe(404);
    expect(await offsetOf(url)).toBe(40);
    expect(await offsetOf(`${endpoint}/art_0000000000000000`)).toBe(404);
    expect(await offsetOf(`${endpoint}/..%2F..%2Fetc`)).toBe(404);
    const unknown = await patch(`${endpoint}/art_0000000000000000`, 0, Buffer.alloc(1));
    expect(unknown.json).toMatchObject({ error: { code: 'not_found', status: 404 } });
  });

  it('terminates an upload: its pieces go and it is gone', async () => {
    const url = await create(100);
    expect((await patch(url, 0, Buffer.alloc(40, 1))).status).toBe(204);
    expect((await s.landedFiles()).filter((f) => f.includes(idOf(url)))).toHaveLength(1);
    expect((await tusFetch(url, s.apiKey, 'DELETE')).status).toBe(204);
    expect(await offsetOf(url)).toBe(404);
    expect((await s.landedFiles()).filter((f) => f.includes(idOf(url)))).toEqual([]);
    expect((await tusFetch(url, s.apiKey, 'DELETE')).status).toBe(404);
  });

  it('honours Idempotency-Key on creation: the same key is the same upload', async () => {
    const headers = {
      'Upload-Length': '10',
      'Upload-Metadata': tusMetadata({ filename: 'once.bin' }),
      'Idempotency-Key': `tus-${randomBytes(4).toString('hex')}`,
    };
    const first = await tusFetch(endpoint, s.apiKey, 'POST', headers);
    expect((await patch(first.headers.get('location') ?? '', 0, Buffer.alloc(4))).status).toBe(204);
    const again = await tusFetch(endpoint, s.apiKey, 'POST', headers);
    expect(again.status).toBe(201);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('upload-offset')).toBe('4');
    // Once that upload is gone, the key names it rather than starting another under the same key.
    expect((await tusFetch(first.headers.get('location') ?? '', s.apiKey, 'DELETE')).status).toBe(204);
    const gone = await tusFetch(endpoint, s.apiKey, 'POST', headers);
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({
      error: { code: 'not_found', message: expect.stringContaining(idOf(first.headers.get('location') ?? '')) },
    });
  });

  it('refuses a second PATCH while one is in flight (409), never interleaving them', async () => {
    const url = await create(2000);
    const { release, answered: slow } = await heldPatch(s, url);
    const second = await patch(url, 0, Buffer.alloc(1000, 2));
    expect(second.status).toBe(409);
    expect(second.json).toMatchObject({ error: { code: 'upload_offset_conflict', message: /in progress/ } });
    release();
    expect((await slow).status).toBe(204);
    expect(await offsetOf(url)).toBe(1000);
  });
});

describe('tus expiration', () => {
  // Near real time: the sweeper compares the pieces' file (or object) times with this clock.
  const clock = new ManualClock(Date.now());
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ clock });
  });
  afterAll(async () => s.close());

  it('an upload left unfinished is gone after 24 h, and the sweeper removes its state and bytes', async () => {
    const created = await tusFetch(`${s.apiUrl}/v1/uploads/tus`, s.apiKey, 'POST', {
      'Upload-Length': '1000',
      'Upload-Metadata': tusMetadata({ filename: 'left.bin' }),
    });
    const url = created.headers.get('location') ?? '';
    expect(Date.parse(created.headers.get('upload-expires') ?? '')).toBeCloseTo(clock.now() + 24 * 3600_000, -4);
    const piece = await tusFetch(
      url,
      s.apiKey,
      'PATCH',
      { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0' },
      Buffer.alloc(100, 3),
    );
    expect(piece.status).toBe(204);
    expect((await s.landedFiles()).filter((f) => f.includes(idOf(url)))).toHaveLength(1);
    // Still there a moment before the 24 h are up.
    clock.advance(24 * 3600_000 - 1000);
    expect((await tusFetch(url, s.apiKey, 'HEAD')).status).toBe(200);
    clock.advance(2000);
    expect((await tusFetch(url, s.apiKey, 'HEAD')).status).toBe(404);
    const late = await tusFetch(
      url,
      s.apiKey,
      'PATCH',
      { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '100' },
      Buffer.alloc(100, 3),
    );
    expect(late.status).toBe(404);
    // While a sweeper holds it (it claims what it removes), it is gone all the same, not busy.
    const claimed = await s.core.deps.resumables.claimExpiredResumables(
      'a-sweeper',
      clock.now(),
      clock.now() + 60_000,
      10,
    );
    expect(claimed.map((r) => r.id)).toEqual([idOf(url)]);
    for (const method of ['PATCH', 'DELETE'] as const) {
      const held = await tusFetch(
        url,
        s.apiKey,
        method,
        { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '100' },
        method === 'PATCH' ? Buffer.alloc(100, 3) : undefined,
      );
      expect(held.status, method).toBe(404);
    }
    await s.core.deps.resumables.releaseResumable(idOf(url), 'a-sweeper');
    const report = await s.core.sweeper.runOnce();
    expect(report.resumablesPurged).toBe(1);
    expect(report.pendingPurged).toBe(1);
    expect((await s.landedFiles()).filter((f) => f.includes(idOf(url)))).toEqual([]);
    const tenantId = (await s.core.tenants.byName('main')).id;
    expect(await s.core.deps.resumables.getResumable(tenantId, idOf(url))).toBeNull();
  });
});

describe('tus: the last PATCH turning the bytes into the artifact', () => {
  let s: TestServer;
  let blobs: Faults<BlobStore>;
  beforeAll(async () => {
    s = await startTestServer({
      wrapAdapters: (real) => {
        blobs = withFaults(real.blobs);
        return { ...real, blobs: blobs.target };
      },
    });
  });
  afterAll(async () => s.close());

  const start = async (length: number) => {
    const res = await tusFetch(`${s.apiUrl}/v1/uploads/tus`, s.apiKey, 'POST', {
      'Upload-Length': String(length),
      'Upload-Metadata': tusMetadata({ filename: 'last.bin' }),
    });
    return res.headers.get('location') ?? '';
  };
  const send = (url: string, body: Buffer) =>
    tusFetch(url, s.apiKey, 'PATCH', { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0' }, body);

  it('a HEAD while it runs waits for it: a full offset always means the artifact exists', async () => {
    const url = await start(10);
    blobs.delayNext('stageLanded', 1500);
    const last = send(url, Buffer.alloc(10, 7));
    // The PATCH holds the upload once its bytes are recorded; the HEAD comes while it finishes.
    await new Promise((r) => setTimeout(r, 500));
    const head = await tusFetch(url, s.apiKey, 'HEAD');
    expect(head.headers.get('upload-offset')).toBe('10');
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${idOf(url)}`)).status).toBe(200);
    expect((await last).status).toBe(204);
  });

  it('a HEAD finishes an upload whose last PATCH failed at the end', async () => {
    const url = await start(10);
    blobs.failNext('stageLanded');
    expect((await send(url, Buffer.alloc(10, 8))).status).toBe(500);
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${idOf(url)}`)).json.status).toBe('pending');
    const head = await tusFetch(url, s.apiKey, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('10');
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${idOf(url)}`)).json.content_hash).toBe(
      sha(Buffer.alloc(10, 8)),
    );
  });
});

describe('tus: what one tenant can hold, and edge cases', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s.close());

  const create = (key: string, length: number, headers: Record<string, string> = {}, body?: Buffer) =>
    tusFetch(
      `${s.apiUrl}/v1/uploads/tus`,
      key,
      'POST',
      { 'Upload-Length': String(length), 'Upload-Metadata': tusMetadata({ filename: 'h.bin' }), ...headers },
      body,
    );

  it('unfinished uploads are capped per tenant, and their lengths are reserved against the storage quota', async () => {
    const key = await s.createTenant('tus-holder', 'free');
    // Free storage is 1 GB: two uploads of 400 MB are fine, a third is not while they are open.
    expect((await create(key, 400_000_000)).status).toBe(201);
    const second = await create(key, 400_000_000);
    expect(second.status).toBe(201);
    const third = await create(key, 400_000_000);
    expect(third.status).toBe(403);
    expect(third.json).toMatchObject({ error: { code: 'quota_exceeded' } });
    // Abandoning one frees its reservation.
    expect((await tusFetch(second.headers.get('location') ?? '', key, 'DELETE')).status).toBe(204);
    expect((await create(key, 400_000_000)).status).toBe(201);

    const many = await s.createTenant('tus-many', 'pro');
    for (let i = 0; i < MAX_OPEN_UPLOADS; i++) expect((await create(many, 10)).status).toBe(201);
    const over = await create(many, 10);
    expect(over.status).toBe(403);
    expect(over.json).toMatchObject({
      error: { code: 'quota_exceeded', message: expect.stringMatching(/unfinished/) },
    });
  });

  it('an empty file is an artifact as soon as it is created', async () => {
    const res = await create(s.apiKey, 0);
    expect(res.status).toBe(201);
    expect(res.headers.get('upload-expires')).toBeNull();
    const id = idOf(res.headers.get('location') ?? '');
    const rec = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}`);
    expect(rec.json).toMatchObject({ size_bytes: 0, content_hash: sha(Buffer.alloc(0)) });
  });

  it('a body announced larger than what is missing is refused before it is read', async () => {
    const url = (await create(s.apiKey, 10)).headers.get('location') ?? '';
    const conn = await rawConnect(s.apiUrl);
    try {
      conn.write(
        requestHead(
          s.apiUrl,
          'PATCH',
          new URL(url).pathname,
          {
            Authorization: `Bearer ${s.apiKey}`,
            'Tus-Resumable': '1.0.0',
            'Content-Type': 'application/offset+octet-stream',
            'Upload-Offset': '0',
          },
          1000,
        ),
      );
      // Not one byte of the body sent: the answer comes anyway.
      await eventually(() => conn.received().includes('\r\n\r\n'), 10_000, 'the answer');
      expect(parseHead(conn.received().split('\r\n\r\n')[0] ?? '').status).toBe(413);
    } finally {
      conn.destroy();
    }
  });

  it('a bad Upload-Checksum on a creation with a first piece creates nothing, so its key stays free', async () => {
    const headers = {
      'Content-Type': 'application/offset+octet-stream',
      'Upload-Checksum': 'md5 AAAA',
      'Idempotency-Key': `bad-sum-${randomBytes(4).toString('hex')}`,
    };
    const tenant = await s.createTenant('tus-sum');
    const bad = await create(tenant, 4, headers, Buffer.from('abcd'));
    expect(bad.status).toBe(400);
    const tenantId = (await s.core.tenants.byName('tus-sum')).id;
    expect(await s.core.deps.resumables.openResumables(tenantId, Date.now())).toEqual({ count: 0, lengthBytes: 0 });
    const good = await create(
      tenant,
      4,
      { ...headers, 'Upload-Checksum': digestOf('sha1', Buffer.from('abcd')) },
      Buffer.from('abcd'),
    );
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(good.headers.get('upload-offset')).toBe('4');
  });

  it('refuses metadata keys that are only inherited names', async () => {
    for (const key of ['constructor', '__proto__', 'toString']) {
      const res = await tusFetch(`${s.apiUrl}/v1/uploads/tus`, s.apiKey, 'POST', {
        'Upload-Length': '1',
        'Upload-Metadata': `filename ${Buffer.from('a').toString('base64')},${key} ${Buffer.from('x').toString('base64')}`,
      });
      expect(res.status, key).toBe(400);
    }
  });

  it('terminating an upload a PATCH holds is 409, and the PATCH completes it', async () => {
    const url = (await create(s.apiKey, 1000)).headers.get('location') ?? '';
    const { release, answered: slow } = await heldPatch(s, url);
    const del = await tusFetch(url, s.apiKey, 'DELETE');
    expect(del.status).toBe(409);
    release();
    expect((await slow).status).toBe(204);
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${idOf(url)}`)).json.size_bytes).toBe(1000);
  });
});
