import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantNameFor } from '../../src/core/accounts/users.js';
import { put } from '../helpers/e2e.js';
import { WebUser } from '../helpers/hosted.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The dashboard's "Download all" of a filtered artifact list (a session, or any filters). */
let srv: TestServer;
let user: WebUser;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  user = new WebUser(srv.apiUrl);
  const email = `archive-${Date.now()}@example.com`;
  await user.signUp(email);
  key = await srv.core.tenants.createKey(await srv.core.tenants.byName(tenantNameFor(email)));
  await put(srv.apiUrl, key, '# a', { filename: 'a.md', session_id: 'dash-run' });
  await put(srv.apiUrl, key, 'b', { filename: 'b.txt', session_id: 'dash-run', agent_id: 'bot' });
});
afterAll(async () => {
  await srv?.close();
});

describe('Download all', () => {
  it('a session’s list offers it; it redirects to the session’s signed archive on the content origin', async () => {
    const list = await user.request('GET', '/dashboard/artifacts?session_id=dash-run');
    expect(list.status).toBe(200);
    expect(list.text).toContain('href="/dashboard/archive?session_id=dash-run"');
    expect(list.text).toContain('href="/dashboard/archive?session_id=dash-run&amp;format=tar.gz"');
    const go = await user.request('GET', '/dashboard/archive?session_id=dash-run');
    expect(go.status).toBe(303);
    expect(go.location?.startsWith(`${srv.contentUrl}/z/`)).toBe(true);
    expect(go.location).toMatch(/\/dash-run\.zip$/);
    const res = await fetch(go.location as string);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const tgz = await user.request('GET', '/dashboard/archive?session_id=dash-run&agent_id=bot&format=tar.gz');
    expect(tgz.location).toMatch(/\/artifacts-\d{8}T\d{6}Z\.tar\.gz$/);
  });

  it('needs a signed-in user, and names a bad filter in the page', async () => {
    const anonymous = await new WebUser(srv.apiUrl).request('GET', '/dashboard/archive?session_id=dash-run');
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toMatch(/^\/login/);
    const bad = await user.request('GET', '/dashboard/archive?session_id=no-such-run');
    expect(bad.status).toBe(404);
    expect(bad.text).toContain('not found');
  });
});
