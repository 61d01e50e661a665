import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, spawnCairn } from '../helpers/cli.js';
import { put } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/** `cairn watch`: follows the change feed, one line (or one JSON object) per event, filters and stops. */

let s: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
beforeAll(async () => {
  s = await startTestServer();
  ws = await cliWorkspace(s.apiUrl);
});
afterAll(async () => {
  await ws?.remove();
  await s?.close();
});

describe('cairn watch', () => {
  it('prints the session’s events as they happen, one JSON object per line, and stops after --count', async () => {
    const key = await s.createTenant('watcher');
    const { done } = spawnCairn(['watch', '--session', 'run-42', '--count', '2', '--json'], {
      cwd: ws.work,
      configDir: ws.configDir,
      apiUrl: s.apiUrl,
      env: { CAIRN_API_KEY: key },
    });
    const { tenant } = await s.core.tenants.authenticate(key);
    while (s.core.eventHub.open(tenant.id) === 0) await new Promise((r) => setTimeout(r, 25));
    await put(s.apiUrl, key, 'other session', { session_id: 'run-7' });
    const rec = await put(s.apiUrl, key, 'watched', { session_id: 'run-42' });
    await put(s.apiUrl, key, 'watched too', { session_id: 'run-42' });
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => e.type)).toEqual(['artifact.created', 'artifact.created']);
    expect(lines[0].data).toEqual(rec);
  });

  it('prints a line per event for people, from --after', async () => {
    const key = await s.createTenant('reader');
    const rec = await put(s.apiUrl, key, 'x', { filename: 'report.md' });
    const { done } = spawnCairn(['watch', '--after', 'evt_0000000000000000', '--count', '1'], {
      cwd: ws.work,
      configDir: ws.configDir,
      apiUrl: s.apiUrl,
      env: { CAIRN_API_KEY: key },
    });
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`artifact.created  ${rec.artifact_id} report.md`);
  });

  it('filters by a type prefix and names the session a session link shares', async () => {
    const key = await s.createTenant('session-sharer');
    await put(s.apiUrl, key, 'x', { session_id: 'run-5' });
    await api(s.apiUrl, key, 'POST', '/v1/sessions/run-5/seal');
    const link = await api(s.apiUrl, key, 'POST', '/v1/sessions/run-5/links', {});
    expect(link.status, link.text).toBe(201);
    const { done } = spawnCairn(
      ['watch', '--after', 'evt_0000000000000000', '--types', 'session_link.*', '--count', '1'],
      { cwd: ws.work, configDir: ws.configDir, apiUrl: s.apiUrl, env: { CAIRN_API_KEY: key } },
    );
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`session_link.created  ${link.json.link_id} for session run-5`);
  });

  it('refuses bad options as usage errors', async () => {
    for (const args of [
      ['watch', '--types', 'artifact.made'],
      ['watch', '--after', 'yesterday'],
      ['watch', '--count', '0'],
    ]) {
      const r = await ws.run(args, { CAIRN_API_KEY: s.apiKey });
      expect(r.code, args.join(' ')).toBe(2);
    }
  });
});
