import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../../src/core/plans.js';
import { storeFiller } from '../helpers/e2e.js';
import { type RawConnection, rawConnect, requestHead } from '../helpers/raw-http.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { tusMetadata } from '../helpers/tus.js';

/**
 * A request refused before its body has all arrived (admission, a declared length over the limit,
 * a sealed session, a tus conflict) is answered at once, and then the server lets the client finish
 * sending (a lingering close) instead of closing with bytes unread, which resets the connection.
 * Tried with the clients that lost the answer before: Node's fetch (EPIPE about half the time),
 * Python's urllib (it writes the whole body before reading: BrokenPipeError every time) and curl,
 * each over a real listener, for every kind of early refusal with a body.
 */

let srv: TestServer;
let dir: string;
let held: RawConnection;
let holderKey: string;

const MB = 1024 * 1024;
const BOUNDARY = 'cairnEarly';

interface Attempt {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}
interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

function multipart(
  fields: Record<string, string>,
  fileBytes: number,
): { headers: Record<string, string>; body: Buffer } {
  const parts = Object.entries(fields).map(
    ([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  return {
    headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: Buffer.concat([
      Buffer.from(
        `${parts.join('')}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      ),
      Buffer.alloc(fileBytes, 0x61),
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]),
  };
}

async function viaFetch(a: Attempt): Promise<Outcome> {
  try {
    const r = await fetch(a.url, { method: a.method, headers: a.headers, body: a.body });
    return { status: r.status, body: await r.text() };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { error: e.cause?.code ?? e.message };
  }
}

let files = 0;
async function bodyFile(body: Buffer): Promise<string> {
  const file = path.join(dir, `body-${++files}`);
  await writeFile(file, body);
  return file;
}

async function viaUrllib(a: Attempt): Promise<Outcome> {
  const spec = JSON.stringify({ method: a.method, url: a.url, headers: a.headers, body_file: await bodyFile(a.body) });
  const script = path.resolve(import.meta.dirname, '../helpers/urllib_send.py');
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('close', () => resolve(JSON.parse(out) as Outcome));
    child.stdin.end(spec);
  });
}

/** curl, with its own `Expect: 100-continue` for large bodies, or with it turned off. */
async function viaCurl(a: Attempt, expectContinue: boolean): Promise<Outcome> {
  const answer = path.join(dir, `answer-${++files}`);
  const args = [
    '-sS',
    '-X',
    a.method,
    '--data-binary',
    `@${await bodyFile(a.body)}`,
    '-o',
    answer,
    '-w',
    '%{http_code}',
  ];
  for (const [k, v] of Object.entries(a.headers)) args.push('-H', `${k}: ${v}`);
  if (!expectContinue) args.push('-H', 'Expect:');
  args.push(a.url);
  return new Promise((resolve) => {
    execFile('curl', args, async (err, stdout, stderr) => {
      if (err) return resolve({ error: stderr.trim() || err.message });
      resolve({ status: Number(stdout), body: await readFile(answer, 'utf8') });
    });
  });
}

let fullKey: string | undefined;
/** A Free tenant whose storage is full (an artifact row of the plan's size, as the quota counts it). */
async function fullTenant(): Promise<string> {
  if (fullKey) return fullKey;
  const key = await srv.createTenant('full', 'free');
  fullKey = key;
  const { tenant } = await srv.core.tenants.authenticate(key);
  await storeFiller(srv, tenant.id, PLANS.free.storageBytes, 'full', Date.now());
  return key;
}

/** A tus upload of `length` bytes, created empty; its URL. */
async function tusUpload(length: number): Promise<string> {
  const r = await fetch(`${srv.apiUrl}/v1/uploads/tus`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${srv.apiKey}`,
      'Tus-Resumable': '1.0.0',
      'Upload-Length': String(length),
      'Upload-Metadata': tusMetadata({ filename: 'tus.bin' }),
    },
  });
  expect(r.status).toBe(201);
  return r.headers.get('location') ?? '';
}

const cases: [name: string, status: number, code: string, attempt: () => Promise<Attempt>][] = [
  [
    '413: a JSON upload over 10 MB',
    413,
    'file_too_large',
    async () => ({
      method: 'POST',
      url: `${srv.apiUrl}/v1/artifacts`,
      headers: { Authorization: `Bearer ${srv.apiKey}`, 'Content-Type': 'application/json' },
      body: Buffer.from(`{"filename":"big.txt","content":"${'QUFB'.repeat(4 * MB)}"}`),
    }),
  ],
  [
    '401: a wrong key',
    401,
    'unauthorized',
    async () => {
      const form = multipart({}, 6 * MB);
      return {
        method: 'POST',
        url: `${srv.apiUrl}/v1/artifacts`,
        headers: { Authorization: 'Bearer ak_live_wrongwrongwrongwrongwrongwrong12', ...form.headers },
        body: form.body,
      };
    },
  ],
  [
    '401: the hosted MCP endpoint without a valid bearer',
    401,
    'unauthorized',
    async () => ({
      method: 'POST',
      url: `${srv.apiUrl}/mcp`,
      headers: {
        Authorization: 'Bearer nope',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: Buffer.from(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"content":"${'QUFB'.repeat(1.5 * MB)}"}}}`,
      ),
    }),
  ],
  [
    '403: a full storage quota',
    403,
    'quota_exceeded',
    async () => {
      const form = multipart({}, 6 * MB);
      return {
        method: 'POST',
        url: `${srv.apiUrl}/v1/artifacts`,
        headers: { Authorization: `Bearer ${await fullTenant()}`, ...form.headers },
        body: form.body,
      };
    },
  ],
  [
    '415: a body of another type',
    415,
    'unsupported_media_type',
    async () => ({
      method: 'POST',
      url: `${srv.apiUrl}/v1/artifacts`,
      headers: { Authorization: `Bearer ${srv.apiKey}`, 'Content-Type': 'text/plain' },
      body: Buffer.alloc(6 * MB, 0x61),
    }),
  ],
  [
    '429: past the large uploads in flight',
    429,
    'rate_limited',
    async () => {
      const form = multipart({}, 6 * MB);
      return {
        method: 'POST',
        url: `${srv.apiUrl}/v1/artifacts`,
        headers: { Authorization: `Bearer ${holderKey}`, ...form.headers },
        body: form.body,
      };
    },
  ],
  [
    '409: an upload to a sealed session',
    409,
    'session_sealed',
    async () => {
      const form = multipart({ session_id: 'sealed-run' }, 6 * MB);
      return {
        method: 'POST',
        url: `${srv.apiUrl}/v1/artifacts`,
        headers: { Authorization: `Bearer ${srv.apiKey}`, ...form.headers },
        body: form.body,
      };
    },
  ],
  [
    'tus 413: a PATCH longer than the upload',
    413,
    'file_too_large',
    async () => ({
      method: 'PATCH',
      url: await tusUpload(10),
      headers: {
        Authorization: `Bearer ${srv.apiKey}`,
        'Tus-Resumable': '1.0.0',
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
      },
      body: Buffer.alloc(6 * MB, 0x61),
    }),
  ],
  [
    'tus 409: a PATCH at the wrong offset',
    409,
    'upload_offset_conflict',
    async () => ({
      method: 'PATCH',
      url: await tusUpload(12 * MB),
      headers: {
        Authorization: `Bearer ${srv.apiKey}`,
        'Tus-Resumable': '1.0.0',
        'Upload-Offset': '5',
        'Content-Type': 'application/offset+octet-stream',
      },
      body: Buffer.alloc(6 * MB, 0x61),
    }),
  ],
];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cairn-early-'));
  srv = await startTestServer({ env: { CAIRN_MAX_UPLOADS_PER_TENANT: '1' } });
  // The one upload slot of this tenant, held by an upload that has started and is still sending.
  holderKey = await srv.createTenant('holder');
  held = await rawConnect(srv.apiUrl);
  held.write(
    requestHead(
      srv.apiUrl,
      'POST',
      '/v1/artifacts',
      { Authorization: `Bearer ${holderKey}`, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      100 * MB,
    ),
  );
  held.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="held.bin"\r\n\r\nabc`);
  const sealed = await api(srv.apiUrl, srv.apiKey, 'POST', '/v1/artifacts', {
    filename: 's.txt',
    content: 'aGk=',
    session_id: 'sealed-run',
  });
  expect(sealed.status).toBe(201);
  expect((await api(srv.apiUrl, srv.apiKey, 'POST', '/v1/sessions/sealed-run/seal')).status).toBe(200);
});

afterAll(async () => {
  held?.destroy();
  await srv?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function expectEnvelope(o: Outcome, status: number, code: string, who: string): void {
  expect(o.error, who).toBeUndefined();
  expect(o.status, who).toBe(status);
  expect(JSON.parse(o.body ?? 'null')?.error?.code, who).toBe(code);
}

describe('an early refusal of a request with a body reaches the client', () => {
  it.each(cases)('%s', async (_name, status, code, attempt) => {
    for (let i = 0; i < 4; i++) expectEnvelope(await viaFetch(await attempt()), status, code, `fetch #${i + 1}`);
    expectEnvelope(await viaUrllib(await attempt()), status, code, 'urllib');
    expectEnvelope(await viaCurl(await attempt(), true), status, code, 'curl');
    expectEnvelope(await viaCurl(await attempt(), false), status, code, 'curl without Expect');
  });

  it('and an idempotent replay answered before the body is read reaches it too', async () => {
    const first = await api(
      srv.apiUrl,
      srv.apiKey,
      'POST',
      '/v1/artifacts',
      { filename: 'r.txt', content: 'aGk=' },
      {
        'Idempotency-Key': 'early-replay',
      },
    );
    expect(first.status).toBe(201);
    const form = multipart({}, 6 * MB);
    const again: Attempt = {
      method: 'POST',
      url: `${srv.apiUrl}/v1/artifacts`,
      headers: { Authorization: `Bearer ${srv.apiKey}`, 'Idempotency-Key': 'early-replay', ...form.headers },
      body: form.body,
    };
    for (const outcome of [await viaFetch(again), await viaUrllib(again), await viaCurl(again, false)]) {
      expect(outcome.error).toBeUndefined();
      expect(outcome.status).toBe(201);
      expect(JSON.parse(outcome.body ?? '{}').artifact_id).toBe(first.json.artifact_id);
    }
  });
});

describe('the lingering is bounded', () => {
  /** A client connection that, like curl or urllib, keeps sending after the server's FIN. */
  async function halfOpen(): Promise<{ socket: net.Socket; answer(): string; closed: Promise<void> }> {
    const { hostname, port } = new URL(srv.apiUrl);
    const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      requestHead(
        srv.apiUrl,
        'POST',
        '/v1/artifacts',
        { Authorization: 'Bearer ak_live_nope', 'Content-Type': 'application/json' },
        1024 * MB,
      ),
    );
    return { socket, answer: () => answer, closed };
  }

  it('a client that goes on sending is cut off after 64 MiB more', async () => {
    const { socket, answer, closed } = await halfOpen();
    let sent = 0;
    const chunk = Buffer.alloc(MB, 0x61);
    while (!socket.destroyed && sent < 512 * MB) {
      sent += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
    }
    await closed;
    expect(answer()).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer()).toMatch(/\r\nconnection: close\r\n/i);
    // Cut off after the limit (plus what the socket buffers held), long before the 1 GiB announced.
    expect(sent).toBeGreaterThan(64 * MB);
    expect(sent).toBeLessThan(128 * MB);
  });

  it('a client that stops sending is closed after 2 s of silence, having had its answer', async () => {
    // The server's close follows its FIN, so this client learns of it only by writing again: a
    // write to a closed connection is answered with a reset.
    const { socket, answer, closed } = await halfOpen();
    let isClosed = false;
    void closed.then(() => {
      isClosed = true;
    });
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    socket.write(Buffer.alloc(1024, 0x61));
    await pause(1_000);
    expect(answer()).toMatch(/^HTTP\/1\.1 401 /);
    // A second of silence: still open, so more of the body is taken.
    socket.write(Buffer.alloc(1024, 0x61));
    await pause(300);
    expect(isClosed).toBe(false);
    // Three seconds of silence: closed meanwhile (the first write is answered with a reset, the
    // next one fails on it).
    await pause(3_000);
    for (let i = 0; i < 20 && !isClosed; i++) {
      socket.write(Buffer.alloc(1024, 0x61));
      await pause(100);
    }
    expect(isClosed).toBe(true);
  });
});
