import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/core/plans.js';
import {
  ART_ID,
  blobFiles,
  blobFilesFor,
  DAY_MS,
  eventually,
  expectError,
  fetchBytes,
  HOUR_MS,
  ISO_MS,
  put,
  sha256,
  stagingFiles,
  uploadJson,
  uploadMultipart,
} from '../helpers/e2e.js';
import { slowUpload } from '../helpers/process.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const b64 = (t: string | Buffer) => Buffer.from(t).toString('base64');

describe('health and whoami', () => {
  it('GET /health needs no key', async () => {
    const r = await api(s.apiUrl, null, 'GET', '/health');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok' });
  });

  it("whoami returns the spec's eleven fields with plan figures, and what is left", async () => {
    const key = await s.createTenant('who-free', 'free');
    const r = await api(s.apiUrl, key, 'GET', '/v1/whoami');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(
      [
        'tenant_name',
        'plan',
        'api_key_last_4',
        'usage_storage_bytes',
        'plan_storage_limit_bytes',
        'usage_requests_month',
        'plan_requests_limit_month',
        'active_links',
        'max_active_links',
        'rate_limit_sustained',
        'rate_limit_burst',
        'usage_storage_bytes_remaining',
        'usage_requests_remaining_month',
        'requests_month_resets_at',
        'rate_limit_unit',
      ].sort(),
    );
    expect(r.json).toMatchObject({
      usage_storage_bytes_remaining: 1_000_000_000,
      usage_requests_remaining_month: 9_999,
      rate_limit_unit: 'requests_per_second',
    });
    // The first instant of a month, after now and at most a month away.
    const reset = Date.parse(r.json.requests_month_resets_at);
    expect(new Date(reset).toISOString()).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    expect(reset).toBeGreaterThan(Date.now());
    expect(reset - Date.now()).toBeLessThanOrEqual(31 * 86_400_000);
    expect(r.json).toMatchObject({
      tenant_name: 'who-free',
      plan: 'free',
      api_key_last_4: key.slice(-4),
      usage_storage_bytes: 0,
      plan_storage_limit_bytes: 1_000_000_000,
      usage_requests_month: 1,
      plan_requests_limit_month: 10_000,
      active_links: 0,
      max_active_links: 100,
      rate_limit_sustained: 100,
      rate_limit_burst: 200,
    });
    const pro = await api(s.apiUrl, s.apiKey, 'GET', '/v1/whoami');
    expect(pro.json).toMatchObject({
      tenant_name: 'main',
      plan: 'pro',
      plan_storage_limit_bytes: 50_000_000_000,
      plan_requests_limit_month: 100_000,
      max_active_links: 1000,
    });
  });

  it('whoami reports live usage after uploads and links', async () => {
    const key = await s.createTenant('who-live', 'pro');
    const before = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    const a = await put(s.apiUrl, key, 'twelve bytes');
    await put(s.apiUrl, key, 'twelve bytes'); // same bytes: no extra storage
    await put(s.apiUrl, key, 'five!');
    const link = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {});
    expect(link.status).toBe(201);
    const after = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    expect(after.usage_storage_bytes).toBe(12 + 5);
    expect(after.active_links).toBe(1);
    // 3 uploads + 1 link + this whoami since the first whoami.
    expect(after.usage_requests_month).toBe(before.usage_requests_month + 5);
    // What is left follows the usage (a pro plan: 50 GB, 100,000 requests a month).
    expect(after.usage_storage_bytes_remaining).toBe(50_000_000_000 - 17);
    expect(after.usage_requests_remaining_month).toBe(100_000 - after.usage_requests_month);
  });

  it('a missing, malformed, unknown or non-Bearer key is 401 unauthorized', async () => {
    expectError(await api(s.apiUrl, null, 'GET', '/v1/whoami'), 401, 'unauthorized');
    expectError(await api(s.apiUrl, 'not-a-key', 'GET', '/v1/whoami'), 401, 'unauthorized');
    expectError(await api(s.apiUrl, `ak_live_${'A'.repeat(32)}`, 'GET', '/v1/whoami'), 401, 'unauthorized');
    expectError(
      await api(s.apiUrl, null, 'GET', '/v1/whoami', undefined, { authorization: `Basic ${s.apiKey}` }),
      401,
      'unauthorized',
    );
  });
});

describe('multipart upload', () => {
  it('stores the bytes and returns the full record (201)', async () => {
    const content = 'hello, cairn\n';
    const r = await uploadMultipart(s.apiUrl, s.apiKey, { content, filename: 'hello.txt' });
    expect(r.status, r.text).toBe(201);
    const rec = r.json;
    expect(Object.keys(rec).sort()).toEqual(
      [
        'artifact_id',
        'filename',
        'content_type',
        'size_bytes',
        'content_hash',
        'metadata',
        'session_id',
        'agent_id',
        'created_at',
        'expires_at',
        'page',
      ].sort(),
    );
    expect(rec.artifact_id).toMatch(ART_ID);
    expect(rec).toMatchObject({
      filename: 'hello.txt',
      content_type: 'text/plain',
      size_bytes: Buffer.byteLength(content),
      content_hash: sha256(content),
      metadata: {},
      session_id: null,
      agent_id: null,
      page: null,
    });
    expect(rec.created_at).toMatch(ISO_MS);
    expect(Date.parse(rec.expires_at) - Date.parse(rec.created_at)).toBe(30 * DAY_MS);
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      expect(r.headers.get(h)).toMatch(/^\d+$/);
    }
    const got = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${rec.artifact_id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(rec);
  });

  it('reads fields both before and after the file part', async () => {
    const r = await uploadMultipart(s.apiUrl, s.apiKey, {
      content: 'x',
      filename: 'part-name.txt',
      before: { session_id: 'sess-before', agent_id: 'agent.one' },
      after: { metadata: JSON.stringify({ run: 7, ok: true }), filename: 'renamed.log', ttl: '7d' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      filename: 'renamed.log',
      session_id: 'sess-before',
      agent_id: 'agent.one',
      metadata: { run: 7, ok: true },
    });
    expect(Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)).toBe(7 * DAY_MS);
  });

  it('content type: declared beats part type beats extension; octet-stream part says nothing', async () => {
    const cases: [Parameters<typeof uploadMultipart>[2], string][] = [
      [
        { content: 'a', filename: 'a.txt', partType: 'text/csv', before: { content_type: 'application/json' } },
        'application/json',
      ],
      [{ content: 'a', filename: 'a.txt', partType: 'application/pdf' }, 'application/pdf'],
      [{ content: 'a', filename: 'a.csv', partType: 'application/octet-stream' }, 'text/csv'],
      [{ content: 'a', filename: 'a.csv' }, 'text/csv'],
      [{ content: 'a', filename: 'noext' }, 'application/octet-stream'],
      [{ content: 'a', filename: 'a.unknownext', partType: 'application/octet-stream' }, 'application/octet-stream'],
      [
        { content: 'a', filename: 'a.txt', after: { content_type: 'Text/HTML; charset=utf-8' } },
        'text/html; charset=utf-8',
      ],
    ];
    for (const [opts, expected] of cases) {
      const r = await uploadMultipart(s.apiUrl, s.apiKey, opts);
      expect(r.status, r.text).toBe(201);
      expect(r.json.content_type, JSON.stringify(opts)).toBe(expected);
    }
  });

  it('.md .markdown .webp .jfif .apng overrides always win, over part and declared types', async () => {
    const cases: [string, string][] = [
      ['notes.md', 'text/markdown'],
      ['NOTES.MARKDOWN', 'text/markdown'],
      ['pic.webp', 'image/webp'],
      ['pic.jfif', 'image/jpeg'],
      ['anim.apng', 'image/apng'],
    ];
    for (const [filename, expected] of cases) {
      const mp = await uploadMultipart(s.apiUrl, s.apiKey, {
        content: 'bytes',
        filename,
        partType: 'text/plain',
        before: { content_type: 'application/octet-stream' },
      });
      expect(mp.status, mp.text).toBe(201);
      expect(mp.json.content_type, filename).toBe(expected);
      const js = await uploadJson(s.apiUrl, s.apiKey, { filename, content: b64('bytes'), content_type: 'image/png' });
      expect(js.status, js.text).toBe(201);
      expect(js.json.content_type, filename).toBe(expected);
    }
  });

  it('transcript=true sets metadata.type=transcript (unless set) and defaults the type to ndjson', async () => {
    const plain = await uploadMultipart(s.apiUrl, s.apiKey, {
      content: '{"a":1}\n',
      filename: 'session.bin',
      before: { transcript: 'true' },
    });
    expect(plain.status, plain.text).toBe(201);
    expect(plain.json.metadata).toEqual({ type: 'transcript' });
    expect(plain.json.content_type).toBe('application/x-ndjson');

    const typed = await uploadMultipart(s.apiUrl, s.apiKey, {
      content: '{"a":1}\n',
      filename: 'session.bin',
      after: {
        transcript: 'true',
        metadata: JSON.stringify({ type: 'snapshot', model: 'm-1' }),
        content_type: 'text/plain',
      },
    });
    expect(typed.status, typed.text).toBe(201);
    expect(typed.json.metadata).toEqual({ type: 'snapshot', model: 'm-1' });
    expect(typed.json.content_type).toBe('text/plain');

    const json = await uploadJson(s.apiUrl, s.apiKey, { filename: 't.bin', content: b64('{}'), transcript: true });
    expect(json.status, json.text).toBe(201);
    expect(json.json.metadata).toEqual({ type: 'transcript' });
    expect(json.json.content_type).toBe('application/x-ndjson');

    const off = await uploadMultipart(s.apiUrl, s.apiKey, {
      content: 'x',
      filename: 'x.bin',
      before: { transcript: 'false' },
    });
    expect(off.json.metadata).toEqual({});

    expectError(
      await uploadMultipart(s.apiUrl, s.apiKey, { content: 'x', before: { transcript: 'yes' } }),
      400,
      'invalid_request',
    );
  });

  it('refuses malformed multipart requests', async () => {
    // No file part.
    const fd = new FormData();
    fd.append('filename', 'a.txt');
    expectError(await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', fd), 400, 'invalid_request');
    // File part with another name.
    const wrong = new FormData();
    wrong.append('upload', new Blob(['x']), 'a.txt');
    expectError(await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', wrong), 400, 'invalid_request');
    // Two file parts.
    const two = new FormData();
    two.append('file', new Blob(['x']), 'a.txt');
    two.append('file', new Blob(['y']), 'b.txt');
    expectError(await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', two), 400, 'invalid_request');
    // Unknown field, before and after the file.
    expectError(
      await uploadMultipart(s.apiUrl, s.apiKey, { content: 'x', before: { color: 'red' } }),
      400,
      'invalid_request',
    );
    expectError(
      await uploadMultipart(s.apiUrl, s.apiKey, { content: 'x', after: { color: 'red' } }),
      400,
      'invalid_request',
    );
    // Names every plain object answers to (Object.prototype's) are refused, never silently taken.
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      for (const where of ['before', 'after'] as const) {
        const r = await uploadMultipart(s.apiUrl, s.apiKey, { content: 'x', [where]: { [name]: 'v' } });
        expectError(r, 400, 'invalid_request');
        expect(r.json.error.message).toMatch(/constructor or __proto__ are not accepted/);
      }
    }
    // A field given twice.
    const dup = new FormData();
    dup.append('session_id', 'a');
    dup.append('session_id', 'b');
    dup.append('file', new Blob(['x']), 'a.txt');
    expectError(await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', dup), 400, 'invalid_request');
    // Filenames that are paths or empty.
    expectError(
      await uploadMultipart(s.apiUrl, s.apiKey, { content: 'x', after: { filename: '../etc/passwd' } }),
      400,
      'invalid_request',
    );
    expectError(
      await uploadMultipart(s.apiUrl, s.apiKey, { content: 'x', after: { filename: ' ' } }),
      400,
      'invalid_request',
    );
    // A body that is not multipart or JSON, plain text included.
    for (const type of ['application/octet-stream', 'text/plain']) {
      expectError(
        await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', 'raw bytes', { 'content-type': type }),
        415,
        'unsupported_media_type',
      );
    }
  });

  it('a truncated multipart body (closing boundary missing) is a fast 400, also while precheck awaits the store', async () => {
    const boundary = 'XyZ123';
    const broken = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc`;
    const send = async () => {
      const started = Date.now();
      const r = await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', broken, {
        'content-type': `multipart/form-data; boundary=${boundary}`,
      });
      expectError(r, 400, 'invalid_request');
      // It used to hang until the client gave up when the body's end arrived during precheck.
      expect(Date.now() - started).toBeLessThan(5000);
    };
    await send();
    // Make the race certain on either backend: precheck takes longer than the rest of the body
    // takes to arrive (PostgreSQL alone made it likely; SQLite answers before the end arrives).
    const uploads = s.core.uploads;
    const precheck = uploads.precheck.bind(uploads);
    uploads.precheck = async (...args) => {
      await new Promise((r) => setTimeout(r, 200));
      return precheck(...args);
    };
    try {
      await send();
    } finally {
      uploads.precheck = precheck;
    }
    expect(await stagingFiles(s)).toEqual([]);
  });

  it('a file of 524,288,001 bytes (500 MiB + 1) is 413 file_too_large while streaming, with nothing staged or stored', async () => {
    const key = await s.createTenant('over-500mb', 'pro');
    const blobsBefore = await blobFiles(s);
    const outcome = await slowUpload(s.apiUrl, key, {
      content: LIMITS.multipartBytes + 1,
      filename: 'huge.bin',
      chunkBytes: 1 << 20,
    });
    expect(outcome.status, outcome.error ?? outcome.body).toBe(413);
    const body = JSON.parse(outcome.body ?? '{}');
    expect(body.error).toMatchObject({ code: 'file_too_large', status: 413 });
    expect(body.error.message).toContain('500 MiB (524,288,000 bytes)');
    await eventually(async () => (await stagingFiles(s)).length === 0, 10_000, 'staging to be empty');
    expect(await blobFiles(s)).toEqual(blobsBefore);
    expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toEqual([]);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(0);
  }, 180_000);

  it('an empty file is a valid artifact', async () => {
    const r = await uploadMultipart(s.apiUrl, s.apiKey, { content: '', filename: 'empty.txt' });
    expect(r.status, r.text).toBe(201);
    expect(r.json.size_bytes).toBe(0);
    expect(r.json.content_hash).toBe(sha256(''));
  });
});

describe('JSON base64 upload', () => {
  it('stores the decoded bytes (201)', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const r = await uploadJson(s.apiUrl, s.apiKey, {
      filename: 'bin.dat',
      content: bytes.toString('base64'),
      content_encoding: 'base64',
      content_type: 'application/x-custom',
      session_id: 'json-sess',
      agent_id: 'json-agent',
      metadata: { k: 'v', n: 1.5, nested: { a: [1, 2] } },
      ttl: '12h',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      filename: 'bin.dat',
      content_type: 'application/x-custom',
      size_bytes: 5,
      content_hash: sha256(bytes),
      session_id: 'json-sess',
      agent_id: 'json-agent',
      metadata: { k: 'v', n: 1.5, nested: { a: [1, 2] } },
    });
    expect(Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)).toBe(12 * HOUR_MS);
    // Unpadded base64 is accepted as well.
    const unpadded = await uploadJson(s.apiUrl, s.apiKey, { filename: 'u.txt', content: 'YWI' });
    expect(unpadded.status, unpadded.text).toBe(201);
    expect(unpadded.json.content_hash).toBe(sha256('ab'));
  });

  it('refuses bad base64, wrong types, unknown fields and other encodings (400)', async () => {
    const bad: Record<string, unknown>[] = [
      { filename: 'a.txt', content: '@@@not base64@@@' },
      { filename: 'a.txt', content: 'abcde' },
      { filename: 'a.txt', content: 12345 },
      { filename: 'a.txt' },
      { content: b64('x') },
      { filename: '', content: b64('x') },
      { filename: 42, content: b64('x') },
      { filename: 'a.txt', content: b64('x'), unknown_field: 1 },
      { filename: 'a.txt', content: b64('x'), content_encoding: 'hex' },
      { filename: 'a.txt', content: b64('x'), content_encoding: 'utf8' },
      { filename: 'a.txt', content: b64('x'), transcript: 'true' },
      { filename: 'a.txt', content: b64('x'), ttl: 7 },
      { filename: 'a.txt', content: b64('x'), session_id: 5 },
      { filename: 'a.txt', content: b64('x'), content_type: 'not a mime' },
    ];
    for (const body of bad) {
      expectError(await uploadJson(s.apiUrl, s.apiKey, body), 400, 'invalid_request');
    }
    for (const body of ['[1,2]', '"str"', '{"filename": "a.txt",', '']) {
      expectError(await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', body), 400, 'invalid_request');
    }
  });

  it('over 10 MiB decoded is 413 file_too_large and stores nothing', async () => {
    const key = await s.createTenant('json-big', 'pro');
    // 10 MiB, as the hosted service's clients count it: 10,485,760 bytes pass, one more does not.
    const exact = Buffer.alloc(10_485_760, 7);
    const ok = await uploadJson(s.apiUrl, key, { filename: 'ok.bin', content: exact.toString('base64') });
    expect(ok.status, ok.text.slice(0, 200)).toBe(201);
    expect(ok.json.size_bytes).toBe(10_485_760);
    const over = Buffer.alloc(10_485_761, 8);
    const refused = await uploadJson(s.apiUrl, key, { filename: 'big.bin', content: over.toString('base64') });
    expectError(refused, 413, 'file_too_large');
    expect(refused.json.error.message).toContain('10 MiB (10,485,760 bytes)');
    // Far beyond: refused on the body size alone.
    const huge = Buffer.alloc(11_500_000, 9);
    expectError(
      await uploadJson(s.apiUrl, key, { filename: 'huge.bin', content: huge.toString('base64') }),
      413,
      'file_too_large',
    );
    const list = await api(s.apiUrl, key, 'GET', '/v1/artifacts');
    expect(list.json.artifacts.map((a: { filename: string }) => a.filename)).toEqual(['ok.bin']);
    expect(await blobFilesFor(s, sha256(over))).toEqual([]);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(10_485_760);
  });
});

describe('metadata, labels and ttl validation', () => {
  /** Metadata whose JSON text is exactly `bytes` long. */
  const metadataOfSize = (bytes: number) => {
    const base = JSON.stringify({ pad: '' }).length;
    return { pad: 'x'.repeat(bytes - base) };
  };

  it('metadata at 8192 bytes passes, at 8193 bytes is refused (JSON and multipart)', async () => {
    const atLimit = metadataOfSize(8192);
    const over = metadataOfSize(8193);
    expect(JSON.stringify(atLimit).length).toBe(8192);
    const ok = await uploadJson(s.apiUrl, s.apiKey, { filename: 'm.txt', content: b64('m'), metadata: atLimit });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.metadata).toEqual(atLimit);
    expectError(
      await uploadJson(s.apiUrl, s.apiKey, { filename: 'm.txt', content: b64('m'), metadata: over }),
      400,
      'invalid_request',
    );
    const mpOk = await uploadMultipart(s.apiUrl, s.apiKey, {
      content: 'm',
      before: { metadata: JSON.stringify(atLimit) },
    });
    expect(mpOk.status, mpOk.text).toBe(201);
    expectError(
      await uploadMultipart(s.apiUrl, s.apiKey, { content: 'm', after: { metadata: JSON.stringify(over) } }),
      400,
      'invalid_request',
    );
    // Multi-byte characters count as UTF-8 bytes: 4100 two-byte characters are over 8 KB.
    expectError(
      await uploadJson(s.apiUrl, s.apiKey, {
        filename: 'm.txt',
        content: b64('m'),
        metadata: { pad: 'é'.repeat(4100) },
      }),
      400,
      'invalid_request',
    );
  });

  it('metadata strings holding U+0000 or an unpaired surrogate are refused on every backend, nothing stored', async () => {
    const key = await s.createTenant('unstorable-metadata', 'free');
    const blobsBefore = await blobFiles(s);
    // JSON bodies as a hand-written client sends them: the escapes are in the text itself.
    const raw = [
      '{"filename":"n.txt","content":"bg==","metadata":{"note":"a\\u0000b"}}',
      '{"filename":"n.txt","content":"bg==","metadata":{"note":"\\ud800"}}',
      '{"filename":"n.txt","content":"bg==","metadata":{"deep":[{"k\\u0000":1}]}}',
      '{"filename":"n.txt","content":"bg==","metadata":{"deep":{"x":["\\udc00 alone"]}}}',
    ];
    for (const body of raw) {
      const r = await fetch(`${s.apiUrl}/v1/artifacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      const text = await r.text();
      expect(r.status, text).toBe(400);
      expect(JSON.parse(text).error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(JSON.parse(text).error.message).toMatch(/U\+0000|surrogate/);
    }
    expectError(
      await uploadMultipart(s.apiUrl, key, { content: 'n', before: { metadata: '{"note":"a\\u0000b"}' } }),
      400,
      'invalid_request',
    );
    // A well-formed pair (an emoji) is fine.
    const ok = await uploadJson(s.apiUrl, key, { filename: 'e.txt', content: b64('e'), metadata: { note: 'ok 😀' } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.metadata).toEqual({ note: 'ok 😀' });
    await eventually(async () => (await stagingFiles(s)).length === 0, 10_000, 'staging to be empty');
    expect((await blobFiles(s)).length).toBe(blobsBefore.length + 1);
    expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toHaveLength(1);
  });

  it('metadata keys follow ^[a-zA-Z][a-zA-Z0-9_-]{0,63}$, no dots', async () => {
    const good = { a: 1, Z9_: 2, ['k'.repeat(64)]: 3, 'x-y_z': 4 };
    const ok = await uploadJson(s.apiUrl, s.apiKey, { filename: 'k.txt', content: b64('k'), metadata: good });
    expect(ok.status, ok.text).toBe(201);
    for (const badKey of ['1abc', '_x', '-x', 'a.b', 'has space', 'k'.repeat(65), '', 'ünï']) {
      expectError(
        await uploadJson(s.apiUrl, s.apiKey, { filename: 'k.txt', content: b64('k'), metadata: { [badKey]: 1 } }),
        400,
        'invalid_request',
      );
    }
    expectError(
      await uploadMultipart(s.apiUrl, s.apiKey, { content: 'k', before: { metadata: '{"a.b": 1}' } }),
      400,
      'invalid_request',
    );
  });

  it('metadata must be a JSON object', async () => {
    for (const metadata of [[1, 2], 'str', 5, true]) {
      expectError(
        await uploadJson(s.apiUrl, s.apiKey, { filename: 'o.txt', content: b64('o'), metadata }),
        400,
        'invalid_request',
      );
    }
    for (const text of ['[1]', '"s"', '5', 'not json', '{']) {
      expectError(
        await uploadMultipart(s.apiUrl, s.apiKey, { content: 'o', before: { metadata: text } }),
        400,
        'invalid_request',
      );
    }
  });

  it('metadata nests at most 32 levels; far deeper input is invalid_request, never a 500', async () => {
    /** `{"a":[[…]]}`: the object is level 1, each array one more. */
    const nested = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    const key = await s.createTenant('deep-metadata', 'pro');
    const jsonBody = (field: string, value: string) =>
      `{"filename":"deep.txt","content":"ZA==",${JSON.stringify(field)}:${value}}`;

    const ok = await api(s.apiUrl, key, 'POST', '/v1/artifacts', jsonBody('metadata', nested(32)));
    expect(ok.status, ok.text).toBe(201);
    expect(JSON.stringify(ok.json.metadata)).toBe(nested(32));
    const mpOk = await uploadMultipart(s.apiUrl, key, { content: 'd', before: { metadata: nested(32) } });
    expect(mpOk.status, mpOk.text).toBe(201);

    const refused = [
      await api(s.apiUrl, key, 'POST', '/v1/artifacts', jsonBody('metadata', nested(33))),
      await uploadMultipart(s.apiUrl, key, { content: 'd', before: { metadata: nested(33) } }),
      await uploadMultipart(s.apiUrl, key, { content: 'd', before: { metadata: nested(4500) } }),
      await uploadMultipart(s.apiUrl, key, { content: 'd', after: { metadata: nested(4500) } }),
      await api(s.apiUrl, key, 'POST', '/v1/artifacts', jsonBody('metadata', nested(100_000))),
    ];
    for (const r of refused) {
      expectError(r, 400, 'invalid_request');
      expect(r.json.error.message).toMatch(/32 levels/);
    }
    // The JSON parser and the schema checks take such bodies in their stride too.
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const r of [
      await api(s.apiUrl, key, 'POST', '/v1/artifacts', jsonBody('session_id', deep)),
      await api(s.apiUrl, key, 'POST', '/v1/artifacts', jsonBody('unknown', deep)),
      await api(s.apiUrl, key, 'POST', `/v1/artifacts/${ok.json.artifact_id}/links`, `{"expires_in":${deep}}`),
    ]) {
      expectError(r, 400, 'invalid_request');
    }
    const list = await api(s.apiUrl, key, 'GET', '/v1/artifacts');
    expect(list.json.artifacts.map((a: { artifact_id: string }) => a.artifact_id).sort()).toEqual(
      [ok.json.artifact_id, mpOk.json.artifact_id].sort(),
    );
  });

  it('session_id and agent_id follow ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$', async () => {
    const ok = await uploadJson(s.apiUrl, s.apiKey, {
      filename: 'l.txt',
      content: b64('l'),
      session_id: `S${'s'.repeat(127)}`,
      agent_id: 'claude-code_1.2',
    });
    expect(ok.status, ok.text).toBe(201);
    for (const bad of ['-lead', '.lead', 'has space', 'a/b', 'x'.repeat(129), 'ünï']) {
      expectError(
        await uploadJson(s.apiUrl, s.apiKey, { filename: 'l.txt', content: b64('l'), session_id: bad }),
        400,
        'invalid_request',
      );
      expectError(
        await uploadMultipart(s.apiUrl, s.apiKey, { content: 'l', after: { agent_id: bad } }),
        400,
        'invalid_request',
      );
    }
  });

  it('ttl: 7d, 12h, never; malformed → invalid_request; above the plan max → ttl_exceeds_plan_limit', async () => {
    const free = await s.createTenant('ttl-free', 'free');
    const expiry = async (key: string, ttl: string) => {
      const r = await uploadJson(s.apiUrl, key, { filename: 't.txt', content: b64('t'), ttl });
      expect(r.status, r.text).toBe(201);
      return Date.parse(r.json.expires_at) - Date.parse(r.json.created_at);
    };
    expect(await expiry(free, '7d')).toBe(7 * DAY_MS);
    expect(await expiry(free, '12h')).toBe(12 * HOUR_MS);
    expect(await expiry(free, '90d')).toBe(90 * DAY_MS);
    expect(await expiry(free, 'never')).toBe(90 * DAY_MS);
    expect(await expiry(s.apiKey, 'never')).toBe(365 * DAY_MS);
    expect(await expiry(s.apiKey, '365d')).toBe(365 * DAY_MS);
    expect(await expiry(s.apiKey, '91d')).toBe(91 * DAY_MS);

    for (const bad of ['abc', '7w', '0d', '-1d', '7', 'd', '1.5d', 'forever']) {
      expectError(
        await uploadJson(s.apiUrl, free, { filename: 't.txt', content: b64('t'), ttl: bad }),
        400,
        'invalid_request',
      );
    }
    expectError(
      await uploadMultipart(s.apiUrl, free, { content: 't', after: { ttl: 'soon' } }),
      400,
      'invalid_request',
    );

    const freeOver = await uploadJson(s.apiUrl, free, { filename: 't.txt', content: b64('t'), ttl: '91d' });
    expectError(freeOver, 400, 'ttl_exceeds_plan_limit');
    expect(freeOver.json.error.upgrade_url).toMatch(/^https?:\/\//);
    expectError(
      await uploadMultipart(s.apiUrl, free, { content: 't', before: { ttl: '2161h' } }),
      400,
      'ttl_exceeds_plan_limit',
    );
    expectError(
      await uploadJson(s.apiUrl, s.apiKey, { filename: 't.txt', content: b64('t'), ttl: '366d' }),
      400,
      'ttl_exceeds_plan_limit',
    );
  });
});

describe('dedup', () => {
  it('same bytes twice: two artifacts, one blob on disk, storage counted once', async () => {
    const key = await s.createTenant('dedup', 'pro');
    const content = `dedup-content-${Math.random()}`;
    const hash = sha256(content);
    const first = await uploadMultipart(s.apiUrl, key, { content, filename: 'one.txt' });
    const second = await uploadJson(s.apiUrl, key, { filename: 'two.txt', content: b64(content) });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(first.json.artifact_id).not.toBe(second.json.artifact_id);
    expect(first.json.content_hash).toBe(hash);
    expect(second.json.content_hash).toBe(hash);
    const files = await blobFilesFor(s, hash);
    expect(files).toHaveLength(1);
    const who = await api(s.apiUrl, key, 'GET', '/v1/whoami');
    expect(who.json.usage_storage_bytes).toBe(Buffer.byteLength(content));
    // Deleting one keeps the storage (the other still uses the bytes); deleting both frees it.
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${first.json.artifact_id}`);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(Buffer.byteLength(content));
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${second.json.artifact_id}`);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(0);
  });

  it('same large bytes three times (stored as a file): one blob, every artifact reads back whole, staging empties', async () => {
    const key = await s.createTenant('dedup-large', 'pro');
    // Past the 64 KiB kept in SQLite, so each upload stages a file and the later ones find the blob.
    const content = randomBytes(300 * 1024);
    const hash = sha256(content);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await uploadMultipart(s.apiUrl, key, { content, filename: `big-${i}.bin` });
      expect(r.status, r.text).toBe(201);
      expect(r.json.content_hash).toBe(hash);
      ids.push(r.json.artifact_id);
    }
    expect(await blobFilesFor(s, hash)).toHaveLength(1);
    for (const id of ids) {
      const url = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${id}/download-url`)).json.download_url;
      const got = await fetchBytes(url);
      expect(got.status).toBe(200);
      expect(got.body.equals(content)).toBe(true);
    }
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(content.length);
    // The redundant staged copies are removed after the answers.
    await eventually(async () => (await stagingFiles(s)).length === 0, 10_000, 'staging to be empty');
  });

  it('the same new bytes eight times at once (small and as a file): eight artifacts, one blob, each reads back whole', async () => {
    const key = await s.createTenant('dedup-concurrent', 'pro');
    for (const size of [1000, 300 * 1024]) {
      const content = randomBytes(size);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => uploadMultipart(s.apiUrl, key, { content, filename: `same-${i}.bin` })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
      expect(await blobFilesFor(s, sha256(content))).toHaveLength(1);
      for (const r of results) {
        const url = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${r.json.artifact_id}/download-url`)).json
          .download_url;
        expect((await fetchBytes(url)).body.equals(content)).toBe(true);
      }
    }
    await eventually(async () => (await stagingFiles(s)).length === 0, 10_000, 'staging to be empty');
  });
});

describe('idempotency', () => {
  it('the same key replays the original status and body with Idempotent-Replayed', async () => {
    const key = await s.createTenant('idem', 'pro');
    const headers = { 'idempotency-key': 'upload-001' };
    const first = await uploadMultipart(s.apiUrl, key, { content: 'first', filename: 'a.txt', headers });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await uploadMultipart(s.apiUrl, key, { content: 'first', filename: 'a.txt', headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    // No content comparison: different bytes (and a JSON body) still replay the original.
    const different = await uploadJson(s.apiUrl, key, { filename: 'b.txt', content: b64('other') }, headers);
    expect(different.status).toBe(201);
    expect(different.text).toBe(first.text);
    const list = await api(s.apiUrl, key, 'GET', '/v1/artifacts');
    expect(list.json.artifacts).toHaveLength(1);
    expect(await blobFilesFor(s, sha256('other'))).toEqual([]);
    // Another key is another upload.
    const other = await uploadMultipart(s.apiUrl, key, {
      content: 'first',
      headers: { 'idempotency-key': 'upload-002' },
    });
    expect(other.json.artifact_id).not.toBe(first.json.artifact_id);
  });

  it('20 concurrent duplicates with one key make exactly one artifact', async () => {
    const key = await s.createTenant('idem-race', 'pro');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? uploadMultipart(s.apiUrl, key, { content: `race ${i}`, headers: { 'idempotency-key': 'race-key' } })
          : uploadJson(
              s.apiUrl,
              key,
              { filename: 'r.txt', content: b64(`race ${i}`) },
              { 'idempotency-key': 'race-key' },
            ),
      ),
    );
    const ids = new Set(results.map((r) => r.json?.artifact_id));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(ids.size).toBe(1);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    const list = await api(s.apiUrl, key, 'GET', '/v1/artifacts');
    expect(list.json.artifacts).toHaveLength(1);
    const who = await api(s.apiUrl, key, 'GET', '/v1/whoami');
    expect(who.json.usage_storage_bytes).toBe(list.json.artifacts[0].size_bytes);
  });

  it('tenants do not share idempotency keys', async () => {
    const a = await s.createTenant('idem-a', 'pro');
    const b = await s.createTenant('idem-b', 'pro');
    const headers = { 'idempotency-key': 'shared-key' };
    const ra = await uploadJson(s.apiUrl, a, { filename: 'a.txt', content: b64('from a') }, headers);
    const rb = await uploadJson(s.apiUrl, b, { filename: 'b.txt', content: b64('from b') }, headers);
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect(rb.json.artifact_id).not.toBe(ra.json.artifact_id);
    expect(rb.json.filename).toBe('b.txt');
    expectError(await api(s.apiUrl, b, 'GET', `/v1/artifacts/${ra.json.artifact_id}`), 404, 'artifact_not_found');
  });

  it('a key of 256 characters, the most other clients send, replays like any other', async () => {
    const headers = { 'idempotency-key': `k${'x'.repeat(254)}z` };
    expect(headers['idempotency-key']).toHaveLength(256);
    const first = await uploadJson(s.apiUrl, s.apiKey, { filename: 'long-key.txt', content: b64('long') }, headers);
    expect(first.status, first.text).toBe(201);
    const again = await uploadJson(s.apiUrl, s.apiKey, { filename: 'other.txt', content: b64('other') }, headers);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
  });

  it('a malformed Idempotency-Key is invalid_request', async () => {
    for (const k of ['has space', 'x'.repeat(257), '']) {
      expectError(
        await uploadJson(s.apiUrl, s.apiKey, { filename: 'a.txt', content: b64('x') }, { 'idempotency-key': k }),
        400,
        'invalid_request',
      );
    }
  });

  it('a refused upload is not recorded: the same key works once the request is fixed', async () => {
    const key = await s.createTenant('idem-fix', 'pro');
    const headers = { 'idempotency-key': 'fix-me' };
    expectError(
      await uploadJson(s.apiUrl, key, { filename: 'a.txt', content: b64('x'), ttl: 'bad' }, headers),
      400,
      'invalid_request',
    );
    const ok = await uploadJson(s.apiUrl, key, { filename: 'a.txt', content: b64('x'), ttl: '1d' }, headers);
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
  });
});
