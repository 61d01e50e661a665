import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobFiles, eventually, stagingFiles } from '../helpers/e2e.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';
import { createScaleoutBackend, type ScaleoutBackend, scaleoutRequested } from '../helpers/scaleout.js';
import { api } from '../helpers/server.js';

/**
 * A client that hangs up mid-upload is not a fault of ours: the real `cairn serve` (on the
 * e2e-scaleout backend too), logging at info, must leave nothing behind and log no error.
 */

let dataDir: string;
let backend: ScaleoutBackend | null = null;
let p: ServeProcess;
let key: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-abort-'));
  backend = scaleoutRequested() ? await createScaleoutBackend() : null;
  p = await spawnServe(dataDir, { ...backend?.env, CAIRN_LOG_LEVEL: 'info' });
  if (!p.apiKey) throw new Error(`no key printed:\n${p.banner}`);
  key = p.apiKey;
});
afterAll(async () => {
  await p?.stop();
  await backend?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const staged = async () =>
  backend ? (await backend.objectKeys()).filter((k) => k.startsWith('staging/')) : stagingFiles(dataDir);
/** Every stored object but staging (S3 also keeps presigned landings under uploads/). */
const stored = async () =>
  backend ? (await backend.objectKeys()).filter((k) => !k.startsWith('staging/')) : blobFiles(dataDir);

/** JSON log lines the server wrote (stdout and stderr). */
function logLines(): Record<string, unknown>[] {
  return `${p.stdout()}\n${p.stderr()}`
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

/** pino levels are numbers (50 = error); the core's own logger writes names. */
const isErrorLine = (l: Record<string, unknown>) =>
  (typeof l.level === 'number' && l.level >= 50) || l.level === 'error' || l.level === 'fatal';

/** Sends the head of an 8 MB upload and 1 MB of it, then destroys the connection. */
async function hangUpMidUpload(contentType: string, head: string, waitForStaging: boolean): Promise<void> {
  const url = new URL(`${p.apiUrl}/v1/artifacts`);
  const req = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType, 'content-length': String(8 << 20) },
  });
  const outcome = new Promise<void>((resolve) => {
    req.on('error', () => resolve());
    req.on('response', () => resolve());
  });
  req.write(head);
  for (let i = 0; i < 4; i++) req.write(Buffer.alloc(256 * 1024, 0x61));
  // On S3 a staging upload in progress is invisible to listings: give it a moment instead.
  if (waitForStaging && !backend) {
    await eventually(async () => (await staged()).length > 0, 5000, 'a staged file');
  } else await new Promise((r) => setTimeout(r, 300));
  req.destroy();
  await outcome;
}

describe('a client hanging up mid-upload', () => {
  it('multipart and JSON: nothing stored or staged, logged as "client aborted", never as an error', async () => {
    const boundary = 'cairnAbortBoundary';
    await hangUpMidUpload(
      `multipart/form-data; boundary=${boundary}`,
      `--${boundary}\r\nContent-Disposition: form-data; name="session_id"\r\n\r\ncut\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
      true,
    );
    await hangUpMidUpload('application/json', '{"filename":"cut.json","content":"', false);

    await eventually(async () => (await staged()).length === 0, 5000, 'staging to be empty');
    expect((await api(p.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toEqual([]);
    expect((await api(p.apiUrl, key, 'GET', '/v1/sessions')).json.sessions).toEqual([]);
    expect((await api(p.apiUrl, key, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(0);
    expect(await stored()).toEqual([]);

    await eventually(() => logLines().some((l) => l.msg === 'client aborted'), 5000, 'the client aborted line');
    const aborted = logLines().filter((l) => l.msg === 'client aborted');
    for (const l of aborted) expect(l.level).toBe(30);
    expect(logLines().filter(isErrorLine)).toEqual([]);
  });
});
