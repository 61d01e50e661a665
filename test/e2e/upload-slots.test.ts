import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectError, put, uploadMultipart } from '../helpers/e2e.js';
import { parseResponses, type RawConnection, type RawResponse, rawConnect, requestHead } from '../helpers/raw-http.js';
import { scaleoutRequested } from '../helpers/scaleout.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * CAIRN_MAX_UPLOADS_PER_TENANT (2 here): a tenant's large uploads in flight on one instance. The
 * next is refused with 429 before any of its body is read; small uploads, other tenants, and
 * later uploads once one has finished or gone are not.
 */

const MAX = 2;
const MIB = 1024 * 1024;
let s: TestServer;
let mainId: string;
const opened: RawConnection[] = [];

beforeAll(async () => {
  s = await startTestServer({ env: { CAIRN_MAX_UPLOADS_PER_TENANT: String(MAX) } });
  mainId = (await s.core.tenants.byName('main')).id;
});
// A test that failed leaves its uploads held: free their slots, so the next test starts at none.
afterEach(async () => {
  for (const conn of opened.splice(0)) conn.destroy();
  await eventually(() => inUse() === 0, 5000, 'every slot to be free');
});
afterAll(async () => {
  await s?.close();
});

const inUse = () => s.core.uploadSlots.inUse(mainId);
const auth = () => ({ Authorization: `Bearer ${s.apiKey}` });

const BOUNDARY = 'slotBoundary';
const partHead = (filename: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="session_id"\r\n\r\nslots\r\n` +
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
  'Content-Type: application/octet-stream\r\n\r\n';
const partTail = `\r\n--${BOUNDARY}--\r\n`;

/** A multipart upload of `fileBytes` whose head and first 64 KiB are sent; `finish` sends the rest. */
async function heldMultipart(filename: string, fileBytes = 3 * MIB) {
  const conn = await rawConnect(s.apiUrl);
  opened.push(conn);
  const first = partHead(filename);
  const length = Buffer.byteLength(first) + fileBytes + Buffer.byteLength(partTail);
  conn.write(
    requestHead(
      s.apiUrl,
      'POST',
      '/v1/artifacts',
      { ...auth(), 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      length,
    ),
  );
  conn.write(first);
  conn.write(Buffer.alloc(64 * 1024, 0x61));
  return {
    conn,
    finish: () => {
      conn.write(Buffer.alloc(fileBytes - 64 * 1024, 0x61));
      conn.write(partTail);
    },
  };
}

/** The first response on `conn`, once it has all arrived. */
async function responseOf(conn: RawConnection, ms = 10_000): Promise<RawResponse> {
  let parsed: RawResponse | undefined;
  await eventually(
    () => {
      const text = conn.received();
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, end));
      if (end < 0 || !length || text.length < end + 4 + Number(length[1])) return false;
      parsed = parseResponses(text.slice(0, end + 4 + Number(length[1])))[0];
      return true;
    },
    ms,
    'a response',
  );
  return parsed as RawResponse;
}

/** Sends only the head of a request announcing `length` bytes; the answer must come without the body. */
async function headOnly(origin: string, method: string, path: string, headers: Record<string, string>, length: number) {
  const conn = await rawConnect(origin);
  opened.push(conn);
  conn.write(requestHead(origin, method, path, headers, length));
  return responseOf(conn);
}

function expectSlotRefusal(r: RawResponse): void {
  expect(r.status, r.body).toBe(429);
  expect(r.headers['retry-after']).toBe('5');
  const error = JSON.parse(r.body).error;
  expect(error.code).toBe('rate_limited');
  expect(error.message).toMatch(/large uploads in flight/);
}

describe('large uploads in flight per tenant', () => {
  it('past the limit the next is refused before its body is sent; small uploads and other tenants go on', async () => {
    const a = await heldMultipart('a.bin');
    const b = await heldMultipart('b.bin');
    await eventually(() => inUse() === MAX, 5000, 'both uploads to hold a slot');

    const refused = await headOnly(
      s.apiUrl,
      'POST',
      '/v1/artifacts',
      { ...auth(), 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      2 * MIB,
    );
    expectSlotRefusal(refused);
    expect(refused.headers['x-ratelimit-limit']).toBeDefined();
    // Through a client as well, whole body sent: the same refusal, nothing stored.
    const third = await uploadMultipart(s.apiUrl, s.apiKey, {
      content: Buffer.alloc(2 * MIB, 0x63),
      before: { session_id: 'slots' },
    });
    expectError(third, 429, 'rate_limited');
    expect(third.headers.get('retry-after')).toBe('5');

    // A small upload needs no slot; another tenant has slots of its own.
    await put(s.apiUrl, s.apiKey, 'small', { session_id: 'slots' });
    const otherKey = await s.createTenant('slots-other');
    const other = await uploadMultipart(s.apiUrl, otherKey, { content: Buffer.alloc(2 * MIB, 0x64) });
    expect(other.status, other.text).toBe(201);

    // One finishes: its slot is free again, and the next large upload is taken.
    a.finish();
    expect((await responseOf(a.conn)).status).toBe(201);
    await eventually(() => inUse() === 1, 5000, 'the finished upload to give its slot back');
    const next = await uploadMultipart(s.apiUrl, s.apiKey, {
      content: Buffer.alloc(2 * MIB, 0x65),
      before: { session_id: 'slots' },
    });
    expect(next.status, next.text).toBe(201);

    // One whose client goes away gives its slot back too.
    b.conn.destroy();
    await eventually(() => inUse() === 0, 5000, 'the abandoned upload to give its slot back');

    const listed = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?session_id=slots');
    const names = (listed.json.artifacts as { filename: string }[]).map((x) => x.filename).sort();
    expect(names).toEqual(['a.bin', 'file.txt', 'note.txt']);
  });

  it('an upload refused for another reason gives its slot back', async () => {
    const held = await heldMultipart('h.bin');
    await eventually(() => inUse() === 1, 5000, 'the held upload to hold a slot');
    // Malformed JSON of 2 MiB takes the last slot, then is refused by the body parser.
    const r = await api(
      s.apiUrl,
      s.apiKey,
      'POST',
      '/v1/artifacts',
      `{"filename": "x.txt", "content": "${'A'.repeat(2 * MIB)}`,
    );
    expectError(r, 400, 'invalid_request');
    await eventually(() => inUse() === 1, 5000, 'the refused upload to give its slot back');
    const next = await uploadMultipart(s.apiUrl, s.apiKey, { content: Buffer.alloc(2 * MIB, 0x66) });
    expect(next.status, next.text).toBe(201);
    held.conn.destroy();
    await eventually(() => inUse() === 0, 5000, 'the slots to be free');
  });

  it('counts a body of unknown length (chunked) as large', async () => {
    const held = [await heldMultipart('c1.bin'), await heldMultipart('c2.bin')];
    await eventually(() => inUse() === MAX, 5000, 'both uploads to hold a slot');
    const conn = await rawConnect(s.apiUrl);
    opened.push(conn);
    conn.write(
      `POST /v1/artifacts HTTP/1.1\r\nHost: ${new URL(s.apiUrl).host}\r\nAuthorization: Bearer ${s.apiKey}\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    expectSlotRefusal(await responseOf(conn));
    for (const h of held) h.conn.destroy();
  });

  it('counts the hosted MCP endpoint: a large tool call past the limit is refused', async () => {
    const held = [await heldMultipart('m1.bin'), await heldMultipart('m2.bin')];
    await eventually(() => inUse() === MAX, 5000, 'both uploads to hold a slot');
    const refused = await headOnly(
      s.apiUrl,
      'POST',
      '/mcp',
      { ...auth(), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      2 * MIB,
    );
    expectSlotRefusal(refused);
    for (const h of held) h.conn.destroy();
    await eventually(() => inUse() === 0, 5000, 'the slots to be free');
  });

  // On S3 the signed URL is the bucket's: the PUT never reaches Cairn.
  it.skipIf(scaleoutRequested())('counts presigned PUTs, which take their slot once the URL is verified', async () => {
    const size = 3 * MIB;
    const tickets = [];
    for (let i = 0; i < MAX + 1; i++) {
      const t = await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts/upload-url', {
        filename: `p${i}.bin`,
        size_bytes: size,
      });
      expect(t.status, t.text).toBe(201);
      tickets.push({ id: t.json.artifact_id as string, url: new URL(t.json.upload_url as string) });
    }
    const putHead = (url: URL) =>
      requestHead(url.origin, 'PUT', url.pathname + url.search, { 'Content-Type': 'application/octet-stream' }, size);
    const held: RawConnection[] = [];
    for (const t of tickets.slice(0, MAX)) {
      const conn = await rawConnect(t.url.origin);
      opened.push(conn);
      conn.write(putHead(t.url));
      conn.write(Buffer.alloc(64 * 1024, 0x70));
      held.push(conn);
    }
    await eventually(() => inUse() === MAX, 5000, 'both PUTs to hold a slot');
    const last = tickets[MAX]!;
    expectSlotRefusal(
      await headOnly(
        last.url.origin,
        'PUT',
        last.url.pathname + last.url.search,
        { 'Content-Type': 'application/octet-stream' },
        size,
      ),
    );

    held[0]!.write(Buffer.alloc(size - 64 * 1024, 0x70));
    expect((await responseOf(held[0]!)).status).toBe(200);
    await eventually(() => inUse() === 1, 5000, 'the finished PUT to give its slot back');
    // The refused URL still works once a slot is free.
    const retried = await fetch(last.url, { method: 'PUT', body: Buffer.alloc(size, 0x71) });
    expect(retried.status).toBe(200);
    const done = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${last.id}/complete`);
    expect(done.json.size_bytes).toBe(size);

    held[1]!.destroy();
    await eventually(() => inUse() === 0, 5000, 'the abandoned PUT to give its slot back');
  });
});
