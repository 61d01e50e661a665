import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, put } from '../helpers/e2e.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';
import { createScaleoutBackend, type ScaleoutBackend, scaleoutRequested } from '../helpers/scaleout.js';
import { api } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/**
 * No event is lost between a change and its webhook delivery when the process dies (kill -9):
 * the event was committed with the change, and the next process delivers it. Twice: killed
 * before any delivery began, and killed in the middle of one (the receiver never answers), whose
 * lease the next process takes over once it lapses. On SQLite, and on PostgreSQL in e2e-scaleout.
 */

let backend: ScaleoutBackend | null = null;
let rx: Receiver;
const dirs: string[] = [];
const running: ServeProcess[] = [];

beforeAll(async () => {
  rx = await startReceiver();
});
// Each test on a store of its own: the first start of an empty one prints the key.
beforeEach(async () => {
  backend = scaleoutRequested() ? await createScaleoutBackend() : null;
});
afterEach(async () => {
  for (const p of running.splice(0)) p.child.kill('SIGKILL');
  await backend?.close();
});
afterAll(async () => {
  await rx?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function serve(dataDir: string, extra: Record<string, string>): Promise<ServeProcess> {
  const p = await spawnServe(dataDir, {
    ...backend?.env,
    CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1',
    CAIRN_WEBHOOK_TIMEOUT_SECONDS: '1',
    ...extra,
  });
  running.push(p);
  return p;
}

async function kill9(p: ServeProcess): Promise<void> {
  p.child.kill('SIGKILL');
  expect((await p.exited).signal).toBe('SIGKILL');
}

describe('webhooks across kill -9', () => {
  it('delivers after a restart the events committed before the kill', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-whcrash-'));
    dirs.push(dataDir);
    // The first process records events but delivers nothing: it dies between change and delivery.
    const first = await serve(dataDir, { CAIRN_WEBHOOK_DELIVERY: 'off' });
    const key = first.apiKey!;
    const made = await api(first.apiUrl, key, 'POST', '/v1/webhooks', {
      url: `${rx.url}/one`,
      types: ['artifact.created'],
    });
    expect(made.status, made.text).toBe(201);
    const recs = [];
    for (let i = 0; i < 3; i++) recs.push(await put(first.apiUrl, key, `before the kill ${i}`));
    await kill9(first);
    expect(rx.received).toHaveLength(0);

    const second = await serve(dataDir, {});
    await eventually(() => rx.received.length >= 3, 15_000, 'the deliveries after the restart');
    const got = rx.verified(made.json.secret) as { data: { artifact_id: string } }[];
    expect(got.map((e) => e.data.artifact_id)).toEqual(recs.map((r) => r.artifact_id));
    await second.stop();
  });

  it('delivers again, on the next process, an event whose delivery the kill cut off', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-whcrash-'));
    dirs.push(dataDir);
    const before = rx.received.length;
    // The receiver takes the first delivery and never answers; the process is killed meanwhile.
    const first = await serve(dataDir, {});
    const key = first.apiKey!;
    const made = await api(first.apiUrl, key, 'POST', '/v1/webhooks', {
      url: `${rx.url}/two`,
      types: ['artifact.created'],
    });
    rx.hold = (r) => r.url.endsWith('/two') && rx.received.filter((x) => x.url.endsWith('/two')).length === 1;
    const rec = await put(first.apiUrl, key, 'cut off');
    await eventually(() => rx.received.length > before, 10_000, 'the first attempt');
    await kill9(first);
    const second = await serve(dataDir, {});
    // The dead process's lease (2 × timeout + 5 s) lapses, then the next one sends it again.
    await eventually(() => rx.received.length > before + 1, 20_000, 'the delivery after the restart');
    const attempts = rx.received.slice(before);
    expect(attempts.map((r) => JSON.parse(r.body).data.artifact_id)).toEqual([rec.artifact_id, rec.artifact_id]);
    expect(new Set(attempts.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(rx.verified(made.json.secret, (r) => r.url.endsWith('/two'))).toHaveLength(2);
    await second.stop();
  }, 60_000);
});
