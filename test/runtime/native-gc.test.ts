import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../helpers/process.js';

/**
 * Native objects finalised outside a JavaScript context. From Node 24.19 a native object whose
 * destructor asks for the current context aborts the process when a collection the heap triggers
 * runs where no context is entered (a microtask checkpoint after a socket read, say):
 * better-sqlite3 12's statements did, on a server's first upload or soon after. `--gc-interval`
 * makes V8 collect after every thousand allocations, wherever they happen, so such a collection
 * comes within the server's start-up instead of by chance (12 aborted there 6 times out of 6 on
 * Node 24.21). The test runs on the Node that runs the suite (CI: 24, then 22).
 */

const GC_ARGS = ['--gc-interval=1000'];
const SLOW = { timeout: 120_000 };

describe('native objects finalised outside a JavaScript context', () => {
  describe('cairn serve collecting garbage every thousand allocations', () => {
    let dataDir: string;
    let srv: ServeProcess;
    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-gc-'));
      srv = await spawnServe(dataDir, {}, 30_000, GC_ARGS);
    }, 60_000);
    afterAll(async () => {
      await srv?.stop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('stays up through uploads, reads, lists and deletes with idle moments between them', SLOW, async () => {
      const auth = { authorization: `Bearer ${srv.apiKey}` };
      for (let i = 0; i < 40; i++) {
        const form = new FormData();
        form.set('file', new Blob([`upload ${i} `.repeat(1 + i * 50)]), `f${i}.txt`);
        form.set('session_id', `gc-${i % 4}`);
        form.set('metadata', JSON.stringify({ round: i }));
        const up = await fetch(`${srv.apiUrl}/v1/artifacts`, { method: 'POST', headers: auth, body: form });
        expect(up.status, await up.clone().text()).toBe(201);
        const { artifact_id: id } = (await up.json()) as { artifact_id: string };
        expect((await fetch(`${srv.apiUrl}/v1/artifacts/${id}`, { headers: auth })).status).toBe(200);
        const list = await fetch(`${srv.apiUrl}/v1/artifacts?session_id=gc-${i % 4}&metadata.round=${i}`, {
          headers: auth,
        });
        expect(((await list.json()) as { artifacts: unknown[] }).artifacts).toHaveLength(1);
        if (i % 3 === 0) {
          const del = await fetch(`${srv.apiUrl}/v1/artifacts/${id}`, { method: 'DELETE', headers: auth });
          expect(del.status).toBe(200);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(srv.child.exitCode, srv.stderr()).toBeNull();
      expect(srv.child.signalCode, srv.stderr()).toBeNull();
    });
  });
});
