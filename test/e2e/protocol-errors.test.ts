import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResponses, type RawResponse, rawConnect, rawRequest } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Answers written before any route runs (Node's parser) or while a listener drains for shutdown. */

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

function expectEnvelope(r: RawResponse | undefined, status: number, code: string): Record<string, unknown> {
  if (!r) throw new Error('no response');
  expect(r.status, r.body).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  const json = JSON.parse(r.body);
  expect(Object.keys(json)).toEqual(['error']);
  expect(json.error).toMatchObject({ code, status, message: expect.any(String) });
  expect(json.error.message.length).toBeGreaterThan(0);
  return json.error;
}

const request = (head: string) => `${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;

describe('requests Node cannot parse', () => {
  it('headers over 16 KB are 431 in the envelope', async () => {
    const [r, extra] = await rawRequest(s.apiUrl, request(`GET /v1/whoami HTTP/1.1\r\nX-Big: ${'a'.repeat(17_000)}`));
    expect(extra).toBeUndefined();
    const e = expectEnvelope(r, 431, 'invalid_request');
    expect(e.message).toMatch(/16 KB/);
  });

  it('a URL over 16 KB is 431 in the envelope', async () => {
    const [r] = await rawRequest(s.apiUrl, request(`GET /v1/artifacts?filename=${'a'.repeat(17_000)} HTTP/1.1`));
    expectEnvelope(r, 431, 'invalid_request');
  });

  it('a malformed request line or Content-Length is 400 in the envelope', async () => {
    for (const bytes of [
      'GARBAGE\r\n\r\n',
      'GET /health HTTP/9.9\r\n\r\n',
      `POST /v1/artifacts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`,
      'GET /health HTTP/1.1\r\nBad Header Name: x\r\n\r\n',
    ]) {
      const [r] = await rawRequest(s.apiUrl, bytes);
      expectEnvelope(r, 400, 'invalid_request');
    }
  });

  it('the viewer and content listeners answer the same way', async () => {
    for (const url of [s.viewerUrl, s.contentUrl]) {
      const [r] = await rawRequest(url, 'GARBAGE\r\n\r\n');
      expectEnvelope(r, 400, 'invalid_request');
    }
  });
});

describe('during shutdown', () => {
  it('an in-flight request finishes; one arriving after close() began is 503 server_error with Retry-After', async () => {
    const own = await startTestServer();
    try {
      const body = JSON.stringify({ filename: 'drain.txt', content: Buffer.from('drain').toString('base64') });
      const half = Math.floor(body.length / 2);
      const conn = await rawConnect(own.apiUrl);
      conn.write(
        'POST /v1/artifacts HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
          `Authorization: Bearer ${own.apiKey}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\n\r\n${body.slice(0, half)}`,
      );
      // The upload is now in flight (headers read, body incomplete), so close() waits for it.
      await new Promise((r) => setTimeout(r, 200));
      const closing = own.server.close();
      await new Promise((r) => setTimeout(r, 200));
      // The rest of the upload, and a second request pipelined behind it on the same connection.
      conn.write(`${body.slice(half)}GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      const [upload, late, extra] = parseResponses(await conn.closed);
      await closing;
      expect(upload?.status, upload?.body).toBe(201);
      expect(JSON.parse(upload?.body ?? '{}').filename).toBe('drain.txt');
      const e = expectEnvelope(late, 503, 'server_error');
      expect(e.retry_after_seconds).toBe(2);
      expect(e.retry_after).toBe(2);
      expect(late?.headers['retry-after']).toBe('2');
      expect(late?.headers.connection).toBe('close');
      expect(extra).toBeUndefined();
    } finally {
      await own.close();
    }
  });
});
