import { expect } from 'vitest';
import { newArtifactId } from '../../src/core/ids.js';
import { PLANS } from '../../src/core/plans.js';
import type { ArtifactRow } from '../../src/ports/metadata-store.js';
import { type Rec, uploadJson } from './e2e.js';
import { api, type TestServer } from './server.js';

/** Helpers shared by the page suites (test/e2e/page-*.test.ts, test/browser). */

/** Uploads `content` over the API and publishes it; returns the artifact record and the page slug. */
export async function publishContent(
  s: TestServer,
  upload: { filename: string; content: string | Buffer; content_type?: string } & Record<string, unknown>,
  publish: Record<string, unknown> = { visibility: 'unlisted' },
  key = s.apiKey,
): Promise<{ artifact: Rec; slug: string }> {
  const { content, ...rest } = upload;
  const up = await uploadJson(s.apiUrl, key, {
    ...rest,
    content: (typeof content === 'string' ? Buffer.from(content) : content).toString('base64'),
  });
  expect(up.status, up.text).toBe(201);
  const pub = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${up.json.artifact_id}/publish`, publish);
  expect(pub.status, pub.text).toBe(200);
  return { artifact: up.json, slug: pub.json.page_id };
}

/** The content token for a password page, from the public unlock endpoint. */
export async function unlockToken(s: TestServer, slug: string, password: string): Promise<string> {
  const r = await api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/unlock`, { password });
  expect(r.status, r.text).toBe(200);
  return r.json.content_token;
}

/**
 * The viewer's password form as a browser submits it: the POST, and when it redirects (success),
 * the page it redirects to, fetched with the cookie it set. Returns the page a person ends up on.
 */
export async function unlockInViewer(s: TestServer, slug: string, password: string): Promise<Response> {
  const posted = await fetch(`${s.viewerUrl}/a/${slug}/unlock`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password }).toString(),
    redirect: 'manual',
  });
  if (posted.status !== 303) return posted;
  const cookie = (posted.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return fetch(new URL(posted.headers.get('location') ?? '', s.viewerUrl), { headers: { cookie } });
}

/**
 * Stores an artifact under exactly the given type, bypassing the upload's content-type rules
 * (which always give `.md` names `text/markdown`): the shape of rows written before those rules,
 * or by another producer. Returns the artifact id.
 */
export async function storeWithType(
  s: TestServer,
  filename: string,
  contentType: string,
  content: string,
  key = s.apiKey,
): Promise<string> {
  const carrier = (
    await uploadJson(s.apiUrl, key, { filename: 'carrier.bin', content: Buffer.from(content).toString('base64') })
  ).json as Rec;
  const { tenant } = await s.core.tenants.authenticate(key);
  const { artifactStore: store, clock } = s.core.deps;
  expect(
    await store.pinBlob(tenant.id, carrier.content_hash, carrier.size_bytes, clock.now(), {
      owner: 'test',
      until: Number.MAX_SAFE_INTEGER,
    }),
  ).toBe('stored');
  const row: ArtifactRow = {
    id: newArtifactId(),
    tenantId: tenant.id,
    filename,
    contentType,
    sizeBytes: carrier.size_bytes,
    contentHash: carrier.content_hash,
    metadata: {},
    sessionId: null,
    agentId: null,
    createdAt: clock.now(),
    expiresAt: null,
    deletedAt: null,
    status: 'active',
  };
  const result = await store.insertArtifact({ artifact: row, storageLimitBytes: PLANS[tenant.plan].storageBytes });
  expect(result.kind).not.toBe('replay');
  return row.id;
}

/** A browser form post (application/x-www-form-urlencoded). */
export const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});
