import net from 'node:net';
import { expect, it } from 'vitest';
import { initializeMessage, postMcp } from '../helpers/hosted.js';
import { parseResponses, rawConnect } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/server.js';
import { openSse } from '../helpers/sse.js';

/**
 * Closing the server lets requests finish (crash.test.ts, protocol-errors.test.ts), but must not
 * wait for a connection that has nothing left to answer and that Node does not count as idle.
 */
it('closes promptly although a client connected and never sent a byte', async () => {
  const s = await startTestServer();
  const silent = net.connect(Number(new URL(s.apiUrl).port), '127.0.0.1');
  silent.on('error', () => {});
  await new Promise((resolve) => silent.once('connect', resolve));
  expect((await fetch(`${s.apiUrl}/health`)).status).toBe(200);
  const started = performance.now();
  await s.close();
  expect(performance.now() - started).toBeLessThan(10_000);
  await new Promise((resolve) => (silent.destroyed ? resolve(null) : silent.once('close', resolve)));
});

it('closes promptly after answering an upload replay whose client stopped sending the body', async () => {
  const s = await startTestServer();
  const boundary = 'b0undary';
  const head = (length: number) =>
    'POST /v1/artifacts HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `Authorization: Bearer ${s.apiKey}\r\nIdempotency-Key: replay-on-close\r\n` +
    `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`;
  const body =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="r.txt"\r\n` +
    `Content-Type: text/plain\r\n\r\nreplayed\r\n--${boundary}--\r\n`;
  const first = await fetch(`${s.apiUrl}/v1/artifacts`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${s.apiKey}`,
      'idempotency-key': 'replay-on-close',
      'content-type': `multipart/form-data; boundary=${boundary}`,
    },
    body,
  });
  expect(first.status).toBe(201);
  // The same upload again, announcing 1 MB but sending only the start: the server answers from
  // the idempotency record without reading the body, and the body never comes.
  const conn = await rawConnect(s.apiUrl);
  conn.write(head(1_000_000) + body.slice(0, 40));
  await new Promise((r) => setTimeout(r, 500));
  const started = performance.now();
  await s.close();
  expect(performance.now() - started).toBeLessThan(10_000);
  const [replay, extra] = parseResponses(await conn.closed);
  expect(replay?.status).toBe(201);
  expect(replay?.headers['idempotent-replayed']).toBe('true');
  expect(JSON.parse(replay?.body ?? '{}').filename).toBe('r.txt');
  expect(extra).toBeUndefined();
});

it('ends an open hosted MCP GET stream and closes promptly', async () => {
  const s = await startTestServer();
  const init = await postMcp(s.apiUrl, initializeMessage, { authorization: `Bearer ${s.apiKey}` });
  const sessionId = init.headers.get('mcp-session-id') as string;
  const stream = await openSse(`${s.apiUrl}/mcp`, s.apiKey, { 'mcp-session-id': sessionId });
  expect(stream.status).toBe(200);
  const started = performance.now();
  await s.close();
  await stream.ended;
  expect(performance.now() - started).toBeLessThan(10_000);
});
