import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { type CairnClient, CairnError } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { caught, clientFor, tempFolder } from './fixtures.js';

/** The TypeScript SDK's archive and session-link calls, against a real server. */
const run = promisify(execFile);
const CHECK = path.resolve(import.meta.dirname, '../helpers/archive_check.py');

let s: TestServer;
let client: CairnClient;
let tmp: Awaited<ReturnType<typeof tempFolder>>;
beforeAll(async () => {
  s = await startTestServer();
  client = clientFor(s);
  tmp = await tempFolder();
});
afterAll(async () => {
  await tmp?.remove();
  await s?.close();
});

describe('archives', () => {
  it('getSessionArchiveUrl reads the 303; downloadSessionArchive streams to a file with progress by bytes', async () => {
    await client.uploadBytes('# one', { filename: 'one.md', sessionId: 'sdk-run' });
    await client.uploadBytes('two'.repeat(1000), { filename: 'two.txt', sessionId: 'sdk-run', agentId: 'bot' });
    const info = await client.getSessionArchiveUrl('sdk-run');
    expect(info).toMatchObject({ format: 'zip', filename: 'sdk-run.zip', artifact_count: 2, size_bytes: 3005 });
    const seen: [number, number | null][] = [];
    const file = path.join(tmp.dir, 'run.zip');
    const got = await client.downloadSessionArchive('sdk-run', file, {
      onProgress: (n, total) => seen.push([n, total]),
    });
    expect(got.sizeBytes).toBe((await stat(file)).size);
    expect(seen.at(-1)).toEqual([got.sizeBytes, got.sizeBytes]); // zip: the total is known
    const report = JSON.parse((await run('python3', [CHECK, file, 'zip', path.join(tmp.dir, 'x')])).stdout);
    expect(report.problems).toEqual([]);
    // A list-filter archive, as tar.gz.
    const byAgent = await client.getArchiveUrl({ agentId: 'bot' }, { format: 'tar.gz' });
    expect(byAgent).toMatchObject({ artifact_count: 1, format: 'tar.gz' });
    const tgz = await client.archiveToFile(byAgent.archive_url, path.join(tmp.dir, 'bot.tar.gz'));
    expect(tgz.sizeBytes).toBeGreaterThan(0);
    const err = (await caught(() => client.getSessionArchiveUrl('no-such-run'))) as CairnError;
    expect(err).toBeInstanceOf(CairnError);
    expect(err.code).toBe('session_not_found');
    // Nothing but the two archives and the check's folder: no temporary file left behind.
    expect((await readdir(tmp.dir)).sort()).toEqual(['bot.tar.gz', 'run.zip', 'x']);
  });

  it('createSessionLink and listSessionLinks; revokeLink ends it', async () => {
    await client.uploadBytes('shared', { filename: 'shared.txt', sessionId: 'sdk-shared' });
    const refused = (await caught(() => client.createSessionLink('sdk-shared'))) as CairnError;
    expect(refused.code).toBe('invalid_request');
    await client.sealSession('sdk-shared');
    const link = await client.createSessionLink('sdk-shared', { ttl: '2d' });
    expect(link.url).toBe(`${s.viewerUrl}/s/${link.link_id}`);
    expect((await client.listSessionLinks('sdk-shared')).links.map((l) => l.link_id)).toEqual([link.link_id]);
    expect((await fetch(link.archive_url)).status).toBe(200);
    await client.revokeLink(link.link_id);
    expect((await fetch(link.archive_url)).status).toBe(404);
  });
});
