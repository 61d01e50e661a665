import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyIdleTimeout, cutStalledBodies } from '../../src/http/body-idle-timeout.js';
import type { BlobStore } from '../../src/ports/blob-store.js';
import { eventually } from '../helpers/e2e.js';
import { type Faults, withFaults } from '../helpers/faults.js';
import { type RawConnection, rawConnect, requestHead } from '../helpers/raw-http.js';
import { scaleoutRequested } from '../helpers/scaleout.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A request whose body stops arriving is cut off after CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS (1 s
 * here): its connection is closed, and nothing an upload sent is kept. A slow upload that keeps
 * sending is not, and neither is the connection once the body has all arrived.
 */

const IDLE_S = 1;
let s: TestServer;
let blobs: Faults<BlobStore>;

beforeAll(async () => {
  s = await startTestServer({
    env: { CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS: String(IDLE_S) },
    wrapAdapters: (real) => {
      blobs = withFaults(real.blobs);
      return { ...real, blobs: blobs.target };
    },
  });
});
const opened: RawConnection[] = [];
afterAll(async () => {
  // A test that failed may leave its connection open, which would hold the server's close.
  for (const conn of opened) conn.destroy();
  await s?.close();
});

interface Conn extends RawConnection {
  openedAt: number;
}

async function connect(url: string): Promise<Conn> {
  const conn = await rawConnect(url);
  opened.push(conn);
  return { ...conn, openedAt: Date.now() };
}

/** The head of a request announcing `length` body bytes (to the API unless `origin` says otherwise). */
const head = (method: string, path: string, headers: Record<string, string>, length: number, origin = s.apiUrl) =>
  requestHead(origin, method, path, headers, length);

const BOUNDARY = 'idleBoundary';
const multipartHead =
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="session_id"\r\n\r\nidle\r\n` +
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="idle.bin"\r\n` +
  'Content-Type: application/octet-stream\r\n\r\n';
const multipartTail = `\r\n--${BOUNDARY}--\r\n`;
const auth = () => ({ Authorization: `Bearer ${s.apiKey}` });

/** Milliseconds from opening until the server closed the connection; fails after `ms`. */
async function closedWithin(conn: Conn, ms: number): Promise<number> {
  const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms));
  await Promise.race([conn.closed, timer]);
  return Date.now() - conn.openedAt;
}

async function nothingKept(): Promise<void> {
  await eventually(async () => (await s.stagingFiles()).length === 0, 5000, 'staging to be empty');
  expect((await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?session_id=idle')).json.artifacts).toEqual([]);
}

describe('an upload whose body stalls', () => {
  it('a tus PATCH: the connection is closed after the idle time, and what arrived is kept to resume from', async () => {
    const created = await fetch(`${s.apiUrl}/v1/uploads/tus`, {
      method: 'POST',
      headers: {
        ...auth(),
        'Tus-Resumable': '1.0.0',
        'Upload-Length': String(8 << 20),
        'Upload-Metadata': `filename ${Buffer.from('stall.bin').toString('base64')}`,
      },
    });
    expect(created.status).toBe(201);
    const path = new URL(created.headers.get('location') ?? '').pathname;
    const conn = await connect(s.apiUrl);
    conn.write(
      head(
        'PATCH',
        path,
        {
          ...auth(),
          'Tus-Resumable': '1.0.0',
          'Content-Type': 'application/offset+octet-stream',
          'Upload-Offset': '0',
        },
        8 << 20,
      ),
    );
    conn.write(Buffer.alloc(2 << 20, 0x62));
    const after = await closedWithin(conn, 8000);
    expect(after).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    await eventually(
      async () => {
        const res = await fetch(`${s.apiUrl}${path}`, {
          method: 'HEAD',
          headers: { ...auth(), 'Tus-Resumable': '1.0.0' },
        });
        return res.headers.get('upload-offset') === String(2 << 20);
      },
      5000,
      'the stalled PATCH recorded',
    );
  });

  it('multipart: the connection is closed after the idle time and nothing is staged or stored', async () => {
    const conn = await connect(s.apiUrl);
    const body = 8 << 20;
    conn.write(
      head('POST', '/v1/artifacts', { ...auth(), 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, body),
    );
    conn.write(multipartHead);
    conn.write(Buffer.alloc(2 << 20, 0x61));
    // Past 64 KiB a local upload has a staging file: it must go with the connection.
    if (s.backend === 'local') await eventually(async () => (await s.stagingFiles()).length > 0, 5000, 'a staged file');
    const after = await closedWithin(conn, 8000);
    expect(after).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    await nothingKept();
    expect((await api(s.apiUrl, s.apiKey, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(0);
  });

  it('JSON: the same while Fastify reads the body', async () => {
    const conn = await connect(s.apiUrl);
    conn.write(head('POST', '/v1/artifacts', { ...auth(), 'Content-Type': 'application/json' }, 100_000));
    conn.write('{"filename":"idle.json","session_id":"idle","content":"AAAA');
    const after = await closedWithin(conn, 8000);
    expect(after).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    await nothingKept();
  });

  it('hosted MCP: a JSON-RPC post (an upload tool call) whose body stalls is closed too', async () => {
    const conn = await connect(s.apiUrl);
    conn.write(
      head(
        'POST',
        '/mcp',
        { ...auth(), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        100_000,
      ),
    );
    conn.write(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_artifact","arguments":{"content":"AAAA',
    );
    const after = await closedWithin(conn, 8000);
    expect(after).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    expect(conn.received()).toBe('');
  });

  // On S3 the signed URL is the bucket's: the PUT never reaches Cairn, and the bucket's own timeouts apply.
  it.skipIf(scaleoutRequested())(
    'presigned PUT: cut off, complete finds nothing, and the same URL then takes the whole file',
    async () => {
      const bytes = Buffer.alloc(3 << 20, 0x62);
      const ticket = await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts/upload-url', {
        filename: 'idle-put.bin',
        size_bytes: bytes.length,
      });
      expect(ticket.status).toBe(201);
      const url = new URL(ticket.json.upload_url as string);
      const conn = await connect(url.origin);
      conn.write(head('PUT', url.pathname + url.search, { 'Content-Type': 'application/octet-stream' }, bytes.length));
      conn.write(bytes.subarray(0, 1 << 20));
      const after = await closedWithin(conn, 8000);
      expect(after).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
      await eventually(async () => (await s.stagingFiles()).length === 0, 5000, 'staging to be empty');
      const id = ticket.json.artifact_id as string;
      const early = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${id}/complete`);
      expect(early.status).toBe(409);
      expect(early.json.error.code).toBe('upload_not_found');

      const put = await fetch(url, {
        method: 'PUT',
        body: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(put.status).toBe(200);
      const done = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${id}/complete`);
      expect(done.status).toBe(200);
      expect(done.json.size_bytes).toBe(bytes.length);
    },
  );
});

describe('any other request whose body stalls', () => {
  it.each([
    ['the dashboard’s login form (no key needed)', 'api', '/login', 'form', 'email=a%40example.com&pass'],
    ['an unknown path on the API (answered 404 only after its body)', 'api', '/no/such/route', 'json', '{"a'],
    ['an unknown path on the viewer', 'viewer', '/no/such/page', 'form', 'a=b'],
    ['an unknown path on the content origin', 'content', '/no/such/link', 'json', '{"a'],
    ['OAuth’s token endpoint', 'api', '/oauth/token', 'form', 'grant_type=authorization_code&co'],
    ['a JSON call with a key (a new link)', 'api', '/v1/artifacts/art_x/links', 'json', '{"expires_in'],
    ['the viewer’s page password form', 'viewer', '/a/pg_abcdefghijklmnop/unlock', 'form', 'password=hun'],
    ['the viewer’s report form', 'viewer', '/a/pg_abcdefghijklmnop/report', 'form', 'reason=sp'],
  ] as const)('%s: the connection is closed after the idle time, unanswered', async (_, where, path, body, part) => {
    const origin = { api: s.apiUrl, viewer: s.viewerUrl, content: s.contentUrl }[where];
    const headers =
      body === 'json'
        ? { ...auth(), 'Content-Type': 'application/json' }
        : { 'Content-Type': 'application/x-www-form-urlencoded' };
    const conn = await connect(origin);
    conn.write(head('POST', path, headers, 1000, origin));
    conn.write(part);
    const after = await closedWithin(conn, 8000);
    expect(after).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    expect(conn.received()).toBe('');
  });
});

describe('which routes get the limit', () => {
  it('every route that takes a body, none that does not; a route’s own preParsing hooks stay first', () => {
    const cut = cutStalledBodies(bodyIdleTimeout(IDLE_S));
    const own = () => {};
    const routes = [
      { method: 'GET' },
      { method: 'HEAD' },
      { method: ['GET', 'HEAD'] },
      { method: 'OPTIONS' },
      { method: 'POST' },
      { method: 'put' },
      { method: ['GET', 'POST'] },
      { method: 'DELETE' },
      { method: 'PATCH', preParsing: own },
    ] as unknown as RouteOptions[];
    for (const route of routes) cut(route);
    const hooked = routes.map((r) => r.preParsing !== undefined);
    expect(hooked).toEqual([false, false, false, false, true, true, true, true, true]);
    const patch = routes[8]?.preParsing as unknown[];
    expect(patch).toHaveLength(2);
    expect(patch[0]).toBe(own);
    // Switched off: no route gets it.
    const none = { method: 'POST' } as unknown as RouteOptions;
    cutStalledBodies(bodyIdleTimeout(0))(none);
    expect(none.preParsing).toBeUndefined();
  });
});

describe('an upload that keeps sending, and the connection after it', () => {
  it('a slow upload with pauses shorter than the idle time is stored, however long it takes', async () => {
    const conn = await connect(s.apiUrl);
    const piece = Buffer.alloc(256 * 1024, 0x63);
    const pieces = 8;
    conn.write(
      head(
        'POST',
        '/v1/artifacts',
        { ...auth(), 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
        multipartHead.length + pieces * piece.length + multipartTail.length,
      ),
    );
    conn.write(multipartHead.replace('name="session_id"\r\n\r\nidle', 'name="session_id"\r\n\r\nslow'));
    for (let i = 0; i < pieces; i++) {
      conn.write(piece);
      await new Promise((r) => setTimeout(r, (IDLE_S * 1000) / 2));
    }
    conn.write(multipartTail);
    // Eight pauses of half the idle time: four times the idle time in all.
    await eventually(async () => conn.received().includes('\r\n\r\n{'), 10_000, 'the answer');
    expect(conn.received()).toMatch(/^HTTP\/1\.1 201 /);
    expect(Date.now() - conn.openedAt).toBeGreaterThan(IDLE_S * 1000 * 3);
    conn.destroy();
    const listed = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?session_id=slow');
    expect(listed.json.artifacts).toHaveLength(1);
    expect(listed.json.artifacts[0].size_bytes).toBe(pieces * piece.length);
  });

  it('a server silent for longer than the idle time after the body has arrived still answers, on a connection kept alive', async () => {
    const conn = await connect(s.apiUrl);
    const bytes = Buffer.alloc(2 << 20, 0x64);
    const request = Buffer.concat([
      Buffer.from(
        head(
          'POST',
          '/v1/artifacts',
          { ...auth(), 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
          multipartHead.length + bytes.length + multipartTail.length,
        ),
      ),
      Buffer.from(multipartHead.replace('name="session_id"\r\n\r\nidle', 'name="session_id"\r\n\r\nbusy')),
      bytes,
      Buffer.from(multipartTail),
    ]);
    // Storing the blob takes three idle times once every byte is in: the client is not the one waiting.
    blobs.delayNext('commit', IDLE_S * 1000 * 3);
    conn.write(request);
    await eventually(async () => /\r\n\r\n\{[\s\S]*\}$/.test(conn.received()), 10_000, 'the answer');
    expect(conn.received()).toMatch(/^HTTP\/1\.1 201 /);
    expect(Date.now() - conn.openedAt).toBeGreaterThan(IDLE_S * 1000 * 3);
    // And the connection is still usable: another idle time of silence, then a second request on it.
    await new Promise((r) => setTimeout(r, IDLE_S * 1000 * 1.5));
    conn.write(head('GET', '/health', {}, 0));
    await eventually(async () => (conn.received().match(/HTTP\/1\.1 /g) ?? []).length === 2, 5000, 'the second answer');
    expect(conn.received()).toMatch(/HTTP\/1\.1 200 OK[\s\S]*"ok"/);
    conn.destroy();
  });
});
