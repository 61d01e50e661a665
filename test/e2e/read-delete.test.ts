import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, fetchBytes, HOUR_MS, ISO_MS, put, sha256, uploadMultipart } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 4, 10, 8, 0, 0));

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

/** GET that takes each chunk only a moment after the last, so the server's socket stays full. */
function slowGet(url: string, range?: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: range ? { range } : {} }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          parts.push(chunk);
          res.pause();
          void sleep(1).then(() => res.resume());
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** GET whose client goes away after the first chunk, while the server is still sending. */
function abandonedGet(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve() : reject(err)));
  });
}

describe('GET /v1/artifacts/{id}', () => {
  it('returns the record with page: null', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'get me', { filename: 'g.txt', metadata: { x: 1 } });
    const r = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(a);
    expect(r.json.page).toBeNull();
    expect(r.json).not.toHaveProperty('deleted_at');
    expect(r.json).not.toHaveProperty('tenant_id');
  });

  it('an unknown id is 404 artifact_not_found naming it; an ill-formed one is 400 naming the shape', async () => {
    for (const id of ['art_AAAAAAAAAAAAAAAA', 'art_0123456789abcdef']) {
      for (const [method, path, body] of [
        ['GET', `/v1/artifacts/${id}`],
        ['DELETE', `/v1/artifacts/${id}`],
        ['GET', `/v1/artifacts/${id}/download-url`],
        ['POST', `/v1/artifacts/${id}/links`, {}],
      ] as const) {
        const res = await api(s.apiUrl, s.apiKey, method, path, body);
        expectError(res, 404, 'artifact_not_found');
        expect(res.json.error.message).toContain(id);
        expect(res.json.error.message).toContain('GET /v1/artifacts');
      }
    }
    for (const id of ['art_short', 'report.md', 'art_AAAAAAAAAAAAAAAA0', '%20', 'lnk_AAAAAAAAAAAAAAAAAAAA']) {
      for (const [method, path, body] of [
        ['GET', `/v1/artifacts/${id}`],
        ['DELETE', `/v1/artifacts/${id}`],
        ['GET', `/v1/artifacts/${id}/download-url`],
        ['POST', `/v1/artifacts/${id}/links`, {}],
        ['GET', `/v1/artifacts/${id}/links`],
        ['POST', `/v1/artifacts/${id}/publish`, { visibility: 'unlisted' }],
        ['POST', `/v1/artifacts/${id}/complete`],
      ] as const) {
        const res = await api(s.apiUrl, s.apiKey, method, path, body);
        expectError(res, 400, 'invalid_request');
        expect(res.json.error.message).toMatch(/art_ followed by 16 letters or digits \(e\.g\. art_[A-Za-z0-9]{16}\)/);
      }
    }
  });

  it('past its expiry an artifact is 410 artifact_expired on every read (before any sweep)', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'short-lived', { ttl: '2h' });
    const url = (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json.download_url;
    const link = (await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${a.artifact_id}/links`, { expires_in: 86_400 }))
      .json.url;
    clock.advance(2 * HOUR_MS - 1);
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}`)).status).toBe(200);
    clock.advance(1);
    expectError(await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_expired');
    expectError(
      await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`),
      410,
      'artifact_expired',
    );
    expectError(
      await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {}),
      410,
      'artifact_expired',
    );
    expectError(await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_expired');
    expect((await fetchBytes(url)).status).toBe(404);
    expect((await fetchBytes(link)).status).toBe(404);
    const list = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?limit=200');
    expect(list.json.artifacts.map((x: { artifact_id: string }) => x.artifact_id)).not.toContain(a.artifact_id);
  });
});

describe('DELETE /v1/artifacts/{id}', () => {
  it('soft-deletes; again → 410; gone from lists, download-url, links and signed URLs at once', async () => {
    const key = await s.createTenant('deleter', 'pro');
    const a = await put(s.apiUrl, key, 'delete me', { session_id: 'del-sess' });
    const other = await put(s.apiUrl, key, 'keep me', { session_id: 'del-sess' });
    const signed = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json.download_url;
    const link = (await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {})).json.url;
    expect((await fetchBytes(signed)).status).toBe(200);
    expect((await fetchBytes(link)).status).toBe(200);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(1);

    const del = await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({
      artifact_id: a.artifact_id,
      deleted: true,
      deleted_at: new Date(clock.now()).toISOString(),
    });
    expect(del.json.deleted_at).toMatch(ISO_MS);

    expectError(await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_already_deleted');
    expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_already_deleted');
    expectError(
      await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`),
      410,
      'artifact_already_deleted',
    );
    expectError(
      await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {}),
      410,
      'artifact_already_deleted',
    );
    expect((await fetchBytes(signed)).status).toBe(404);
    expect((await fetchBytes(link)).status).toBe(404);
    const list = await api(s.apiUrl, key, 'GET', '/v1/artifacts');
    expect(list.json.artifacts.map((x: { artifact_id: string }) => x.artifact_id)).toEqual([other.artifact_id]);
    const bySession = await api(s.apiUrl, key, 'GET', '/v1/artifacts?session_id=del-sess');
    expect(bySession.json.artifacts).toHaveLength(1);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(0);
    const sessions = await api(s.apiUrl, key, 'GET', '/v1/sessions');
    expect(sessions.json.sessions[0]).toMatchObject({ session_id: 'del-sess', artifact_count: 1 });
    // The other artifact with its own bytes is untouched.
    const still = await api(s.apiUrl, key, 'GET', `/v1/artifacts/${other.artifact_id}`);
    expect(still.json).toEqual(other);
  });

  // The clock is frozen, so every delete of a round runs at the same `now`: only the store's own
  // conditional write can tell the winner (PostgreSQL runs them truly in parallel).
  it('concurrent deletes: exactly one succeeds, the rest are 410', async () => {
    for (let round = 0; round < 10; round++) {
      const a = await put(s.apiUrl, s.apiKey, `race-delete ${round}`);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${a.artifact_id}`)),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 200)) expectError(r, 410, 'artifact_already_deleted');
    }
  });
});

describe('GET /v1/artifacts/{id}/download-url', () => {
  it('returns a signed URL on the content origin that streams the bytes with safe headers', async () => {
    const content = Buffer.from('0123456789abcdefghij');
    const filename = 'résumé 📄 "q".txt';
    const up = await uploadMultipart(s.apiUrl, s.apiKey, { content, filename: 'x.txt', after: { filename } });
    expect(up.status, up.text).toBe(201);
    const a = up.json;
    const r = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      download_url: expect.any(String),
      expires_in: 3600,
      filename,
      content_type: 'text/plain',
      size_bytes: content.length,
    });
    const url = new URL(r.json.download_url);
    expect(url.origin).toBe(s.contentUrl);
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
      expect(r.headers.get(h)).toMatch(/^\d+$/);

    const got = await fetchBytes(r.json.download_url);
    expect(got.status).toBe(200);
    expect(got.body.equals(content)).toBe(true);
    expect(sha256(got.body)).toBe(a.content_hash);
    expect(got.headers.get('content-length')).toBe(String(content.length));
    expect(got.headers.get('etag')).toBe(`"${a.content_hash}"`);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    const disposition = got.headers.get('content-disposition') ?? '';
    expect(disposition).toMatch(/^attachment;/);
    expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent(filename)}`);
    const ascii = /filename="([^"]*)"/.exec(disposition)?.[1] ?? '';
    expect(ascii).toMatch(/^[\x20-\x7e]+$/);
    // The key never travels to the content origin, and the API is not served there.
    expect((await fetchBytes(`${s.contentUrl}/v1/whoami`, { authorization: `Bearer ${s.apiKey}` })).status).toBe(404);
    expect((await fetchBytes(`${s.contentUrl}/v1/artifacts/${a.artifact_id}`)).status).toBe(404);
  });

  it('streams a file-sized blob intact to clients that read slowly, whole, in ranges and side by side', async () => {
    // The content origin reuses its read buffers once the response has flushed them. More than
    // loopback's socket buffers hold, and not a whole number of 1 MiB reads, so that with slow
    // readers the server's writes wait: reusing a buffer too early shows here as wrong bytes.
    const content = randomBytes(24 * 1024 * 1024 + 333);
    const up = await uploadMultipart(s.apiUrl, s.apiKey, { content, filename: 'big.bin' });
    expect(up.status, up.text).toBe(201);
    const url = (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${up.json.artifact_id}/download-url`)).json
      .download_url;
    const [whole, range, other] = await Promise.all([
      slowGet(url),
      slowGet(url, 'bytes=1048000-3146000'),
      slowGet(url),
      abandonedGet(url),
    ]);
    expect(whole.status).toBe(200);
    expect(sha256(whole.body)).toBe(up.json.content_hash);
    expect(other.body.equals(content)).toBe(true);
    expect(range.status).toBe(206);
    expect(range.body.equals(content.subarray(1048000, 3146001))).toBe(true);
    // The read buffers those downloads gave back (the abandoned one's included) serve the next.
    const [again, tail] = await Promise.all([slowGet(url), slowGet(url, 'bytes=-1500000')]);
    expect(again.body.equals(content)).toBe(true);
    expect(tail.body.equals(content.subarray(content.length - 1500000))).toBe(true);
  });

  it('serves byte ranges: 206, suffix ranges, 416; If-None-Match → 304', async () => {
    const content = Buffer.from('abcdefghijklmnopqrstuvwxyz');
    const a = await put(s.apiUrl, s.apiKey, content.toString());
    const url = (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json.download_url;

    const part = await fetchBytes(url, { range: 'bytes=2-5' });
    expect(part.status).toBe(206);
    expect(part.body.toString()).toBe('cdef');
    expect(part.headers.get('content-range')).toBe(`bytes 2-5/${content.length}`);
    expect(part.headers.get('content-length')).toBe('4');

    const open = await fetchBytes(url, { range: 'bytes=20-' });
    expect(open.status).toBe(206);
    expect(open.body.toString()).toBe('uvwxyz');

    const suffix = await fetchBytes(url, { range: 'bytes=-3' });
    expect(suffix.status).toBe(206);
    expect(suffix.body.toString()).toBe('xyz');
    expect(suffix.headers.get('content-range')).toBe(`bytes 23-25/${content.length}`);

    const clipped = await fetchBytes(url, { range: 'bytes=24-1000' });
    expect(clipped.status).toBe(206);
    expect(clipped.body.toString()).toBe('yz');

    const bad = await fetchBytes(url, { range: 'bytes=26-' });
    expect(bad.status).toBe(416);
    expect(bad.headers.get('content-range')).toBe(`bytes */${content.length}`);
    expect((await fetchBytes(url, { range: 'bytes=10-5' })).status).toBe(416);

    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(content.length));
    expect(head.headers.get('etag')).toBe(`"${a.content_hash}"`);
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    const cached = await fetchBytes(url, { 'if-none-match': `"${a.content_hash}"` });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
  });

  it('a tampered signature or expiry, or an expired URL, is 404', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'signed bytes');
    const b = await put(s.apiUrl, s.apiKey, 'other bytes');
    const url = new URL(
      (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json.download_url,
    );
    const exp = Number(url.searchParams.get('exp'));
    expect(exp).toBe(Math.floor(clock.now() / 1000) + 3600);
    const sig = url.searchParams.get('sig') ?? '';
    const variant = (mutate: (u: URL) => void) => {
      const u = new URL(url);
      mutate(u);
      return u.toString();
    };
    const flipped = sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A');
    const tampered = [
      variant((u) => u.searchParams.set('sig', flipped)),
      variant((u) => u.searchParams.set('exp', String(exp + 1))),
      variant((u) => u.searchParams.set('exp', String(exp + 86_400 * 365))),
      variant((u) => u.searchParams.delete('sig')),
      variant((u) => u.searchParams.delete('exp')),
      variant((u) => u.searchParams.set('exp', 'abc')),
      variant((u) => {
        u.pathname = `/d/${b.artifact_id}`;
      }),
    ];
    for (const t of tampered) {
      const r = await fetchBytes(t);
      expect(r.status, t).toBe(404);
      expect(JSON.parse(r.body.toString()).error.code).toBe('artifact_not_found');
    }
    expect((await fetchBytes(url.toString())).status).toBe(200);
    clock.advance(3600 * 1000 - 1000);
    expect((await fetchBytes(url.toString())).status).toBe(200);
    clock.advance(1000);
    expect((await fetchBytes(url.toString())).status).toBe(404);
    // A fresh URL works again (the artifact itself is fine).
    const fresh = (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json
      .download_url;
    expect((await fetchBytes(fresh)).body.toString()).toBe('signed bytes');
  });

  it('expired artifacts stop serving signed URLs even while the URL is valid', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'expiring', { ttl: '1h' });
    const url = (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json.download_url;
    clock.advance(HOUR_MS - 60_000);
    expect((await fetchBytes(url)).status).toBe(200);
    clock.advance(60_000);
    expect((await fetchBytes(url)).status).toBe(404);
  });
});
