import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_MS } from '../helpers/e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The main calls driven from a subprocess by Python's standard urllib.request alone (no SDK), as
 * a script written for the hosted service drives them: see test/helpers/foreign_urllib.py.
 */

const SCRIPT = path.resolve(import.meta.dirname, '../helpers/foreign_urllib.py');

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

function runPython(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'python3',
      [SCRIPT],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("Python's urllib.request, from a subprocess", () => {
  it('runs the main calls with a JSON content type on every request and gets the documented answers', async () => {
    const run = await runPython({ CAIRN_API_URL: s.apiUrl, CAIRN_API_KEY: s.apiKey });
    expect(run.code, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout);

    expect(r.whoami).toMatchObject({
      status: 200,
      body: { tenant_name: 'main', plan: 'pro', rate_limit_unit: 'requests_per_second' },
    });
    expect(r.whoami.body.usage_requests_remaining_month).toBe(
      r.whoami.body.plan_requests_limit_month - r.whoami.body.usage_requests_month,
    );
    expect(r.upload.status).toBe(201);
    const art = r.upload.body.artifact_id as string;
    expect(r.upload.body).toMatchObject({
      filename: 'py.txt',
      session_id: 'py-run',
      metadata: { source: 'py', run: 1 },
    });
    expect(r.list.status).toBe(200);
    expect(r.list.body.artifacts.map((a: { artifact_id: string }) => a.artifact_id)).toEqual([art]);
    expect(r.get).toEqual({ status: 200, body: { ...r.upload.body, page: null } });
    expect(r.download_url).toMatchObject({ status: 200, body: { expires_in: 3600, filename: 'py.txt' } });
    expect(r.download).toEqual({ status: 200, text: 'hello from urllib' });
    expect(r.batch.status).toBe(200);
    expect(r.batch.body.download_urls).toEqual([
      expect.objectContaining({ artifact_id: art, filename: 'py.txt', expires_in: 3600 }),
      {
        artifact_id: 'art_0000000000000000',
        error: { code: 'artifact_not_found', message: expect.any(String), status: 404 },
      },
    ]);
    // data=b"": Content-Length 0 with the JSON type; the link takes its 7-day default.
    expect(r.link.status).toBe(201);
    expect(Date.parse(r.link.body.expires_at) - Date.parse(r.link.body.created_at)).toBe(7 * 86_400_000);
    // A lifetime written as a duration, and a filename passed where an id goes (400 naming the shape).
    expect(r.link_ttl.status).toBe(201);
    expect(Date.parse(r.link_ttl.body.expires_at) - Date.parse(r.link_ttl.body.created_at)).toBe(3 * 86_400_000);
    expect(r.filename_as_id).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', status: 400 } } });
    expect(r.filename_as_id.body.error.message).toMatch(/art_ followed by 16 letters or digits/);
    expect(r.upload_url).toMatchObject({ status: 201, body: { status: 'pending', upload_method: 'PUT' } });
    expect(r.put.status).toBe(200);
    expect(r.complete).toMatchObject({ status: 200, body: { filename: 'py-big.bin', size_bytes: 5 } });
    expect(r.sessions.status).toBe(200);
    expect(r.sessions.body.sessions).toEqual(
      expect.arrayContaining([expect.objectContaining({ session_id: 'py-run', artifact_count: 1, is_sealed: false })]),
    );
    expect(r.seal).toEqual({
      status: 200,
      body: { session_id: 'py-run', status: 'sealed', sealed_at: expect.stringMatching(ISO_MS), artifact_count: 1 },
    });
    expect(r.publish).toMatchObject({ status: 200, body: { visibility: 'unlisted', access: 'none' } });
    // DELETE with the JSON type and no body at all.
    expect(r.unpublish).toEqual({ status: 200, body: { page_id: r.publish.body.page_id, unpublished: true } });
    expect(r.delete).toEqual({
      status: 200,
      body: { artifact_id: art, deleted: true, deleted_at: expect.stringMatching(ISO_MS) },
    });
    expect(r.delete_again).toMatchObject({
      status: 410,
      body: { error: { code: 'artifact_already_deleted', status: 410 } },
    });
    expect(r.missing).toMatchObject({ status: 404, body: { error: { code: 'artifact_not_found', status: 404 } } });
  });
});
