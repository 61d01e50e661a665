import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CairnClient } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, hasScript, runCairn } from '../helpers/cli.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';

/**
 * A push replayed by its Idempotency-Key is answered before the server reads the body. The client
 * must stop sending then and end at once, whatever the file's size: a re-push of a 5 MB file used
 * to print "(already pushed)" at once and exit only 73 s later (the server no longer read the rest),
 * its bar claiming the whole file went up at GB/s. Against a real `cairn serve`.
 */

const MB = 1_000_000;
let serve: ServeProcess;
let dataDir: string;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
let key: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-replay-'));
  serve = await spawnServe(dataDir);
  key = serve.apiKey ?? '';
  ws = await cliWorkspace(serve.apiUrl);
});
afterAll(async () => {
  await serve?.stop();
  await ws?.remove();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a replayed push', { timeout: 120_000 }, () => {
  it('the CLI ends as soon as the answer is in, for files of 5 and 20 MB', async () => {
    for (const size of [5 * MB, 20 * MB]) {
      const file = await ws.file(`mid-${size}.bin`, randomBytes(size));
      const first = expectOk(await ws.run(['push', file], { CAIRN_API_KEY: key }));
      expect(first.stdout).not.toContain('already pushed');
      const started = Date.now();
      const again = expectOk(await ws.run(['push', file], { CAIRN_API_KEY: key }));
      const took = Date.now() - started;
      expect(again.stdout).toContain('(already pushed)');
      // A Node start and a hash of the file: a few seconds at most on a busy machine; it was 73 s.
      expect(took).toBeLessThan(10_000);
    }
  });

  it('the SDK stops reading the file once the server has answered', async () => {
    const file = await ws.file('sdk.bin', randomBytes(20 * MB));
    const client = new CairnClient({ apiKey: key, baseUrl: serve.apiUrl });
    const first = await client.uploadFile(file, { idempotencyKey: 'replay-sdk' });
    let sent = 0;
    let replayed = false;
    const again = await client.uploadFile(file, {
      idempotencyKey: 'replay-sdk',
      onProgress: (done) => {
        sent = done;
      },
      onResponse: (r) => {
        replayed = r.replayed;
      },
    });
    expect(again.artifact_id).toBe(first.artifact_id);
    expect(replayed).toBe(true);
    // What socket buffers took before the answer, not the file; and nothing more after it.
    expect(sent).toBeLessThan(10 * MB);
    const atAnswer = sent;
    await new Promise((r) => setTimeout(r, 1000));
    expect(sent).toBe(atAnswer);
  });

  it.skipIf(!hasScript)('the progress line says what was sent, not a rate for the whole file', async () => {
    const file = await ws.file('bar.bin', randomBytes(30 * MB));
    const onTerminal = () =>
      runCairn(['push', file], {
        cwd: ws.work,
        configDir: ws.configDir,
        apiUrl: serve.apiUrl,
        env: { CAIRN_API_KEY: key },
        terminal: {},
      });
    expectOk(await onTerminal());
    const again = expectOk(await onTerminal());
    const last = again.stdout.split('\r').filter((s) => s.includes('push bar.bin'));
    const final = last[last.length - 1] ?? '';
    expect(final).toMatch(/push bar\.bin {2}already on the server; stopped after \S+ \S+ of 30\.0 MB/);
    // (Hashing the file first draws its own bar to 100%: only the push's lines count.)
    expect(last.join('\n')).not.toMatch(/100%\s+30\.0 MB\/30\.0 MB/);
    expect(again.stdout).toContain('(already pushed)');
  });
});
