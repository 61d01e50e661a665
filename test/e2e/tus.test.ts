import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { Balancer, freePort } from '../helpers/balancer.js';
import { fetchBytes, put } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { tusFetch, tusJsUpload, tusMetadata } from '../helpers/tus.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const idOf = (uploadUrl: string) => uploadUrl.split('/').pop() ?? '';

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
      'Upload-Length': '500000001',
      'Upload-Metadata': tusMetadata({ filename: 'a' }),
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.json).toMatchObject({ error: { code: 'file_too_large', upgrade_url: expect.any(String) } });
    expect(
      (
        await tusFetch(endpoint, free, 'POST', {
          'Upload-Length': '500000000',
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
  });

  it('refuses a second PATCH while one is in flight (409), never interleaving them', async () => {
    const url = await create(2000);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = fetch(url, {
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
    // Watched in the store, not with requests that would compete for the upload themselves.
    const tenantId = (await s.core.tenants.byName('main')).id;
    for (let i = 0; i < 1000 && !(await s.core.deps.resumables.getResumable(tenantId, idOf(url)))?.leaseOwner; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
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
    const report = await s.core.sweeper.runOnce();
    expect(report.resumablesPurged).toBe(1);
    expect(report.pendingPurged).toBe(1);
    expect((await s.landedFiles()).filter((f) => f.includes(idOf(url)))).toEqual([]);
    const tenantId = (await s.core.tenants.byName('main')).id;
    expect(await s.core.deps.resumables.getResumable(tenantId, idOf(url))).toBeNull();
  });
});
