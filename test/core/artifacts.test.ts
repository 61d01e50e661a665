import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArtifactRecord } from '../../src/wire/index.js';
import { type CoreHarness, coreHarness, DAY_MS, iso, START } from './harness.js';

/**
 * Reading and deleting artifacts in the core (spec: Artifact states; API.md: artifact record,
 * lists): get, soft delete, the two 410s, expiry at its TTL, the list's filters, order and keyset
 * pagination, and tenant isolation. test/e2e keeps the query string and the status codes on the wire.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const ids = (list: { artifacts: ArtifactRecord[] }) => list.artifacts.map((a) => a.artifact_id);
const MISSING = 'art_0000000000000000';

describe('get', () => {
  it('answers the record the upload answered, with page null when it has no page', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'hello', { filename: 'a.txt', metadata: { model: 'm1' } });
    expect(await h.core.artifacts.get(t, rec.artifact_id)).toEqual(rec);
  });

  it('of an unknown id is artifact_not_found (404); of a malformed id invalid_request naming the shape', async () => {
    const t = await h.tenant('acme');
    await expect(h.core.artifacts.get(t, MISSING)).rejects.toMatchObject({ code: 'artifact_not_found', status: 404 });
    await expect(h.core.artifacts.get(t, 'report.md')).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('art_'),
    });
  });

  it('of another tenant’s artifact is artifact_not_found, live, deleted or expired alike', async () => {
    const owner = await h.tenant('owner');
    const other = await h.tenant('other');
    const live = await h.upload(owner, 'live');
    const deleted = await h.upload(owner, 'deleted');
    const expiring = await h.upload(owner, 'expiring', { ttl: '1h' });
    await h.core.artifacts.softDelete(owner, deleted.artifact_id);
    h.clock.advance(3_600_000);
    for (const rec of [live, deleted, expiring]) {
      await expect(h.core.artifacts.get(other, rec.artifact_id)).rejects.toMatchObject({ code: 'artifact_not_found' });
      await expect(h.core.artifacts.softDelete(other, rec.artifact_id)).rejects.toMatchObject({
        code: 'artifact_not_found',
      });
    }
    // …and the owner's artifact is untouched by the other tenant's delete.
    await expect(h.core.artifacts.get(owner, live.artifact_id)).resolves.toMatchObject({ size_bytes: 4 });
  });
});

describe('soft delete', () => {
  it('answers {artifact_id, deleted: true, deleted_at}; again is 410 artifact_already_deleted', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'bye');
    h.clock.advance(5000);
    expect(await h.core.artifacts.softDelete(t, rec.artifact_id)).toEqual({
      artifact_id: rec.artifact_id,
      deleted: true,
      deleted_at: iso(START + 5000),
    });
    await expect(h.core.artifacts.softDelete(t, rec.artifact_id)).rejects.toMatchObject({
      code: 'artifact_already_deleted',
      status: 410,
    });
  });

  it('makes reads 410 artifact_already_deleted at once and drops the artifact from lists', async () => {
    const t = await h.tenant('acme');
    const keep = await h.upload(t, 'keep');
    const gone = await h.upload(t, 'gone');
    await h.core.artifacts.softDelete(t, gone.artifact_id);
    await expect(h.core.artifacts.get(t, gone.artifact_id)).rejects.toMatchObject({
      code: 'artifact_already_deleted',
    });
    expect(ids(await h.core.artifacts.list(t, {}))).toEqual([keep.artifact_id]);
  });

  it('frees the storage of bytes no other artifact of the tenant holds, and only those', async () => {
    const t = await h.tenant('acme');
    const a = await h.upload(t, 'x'.repeat(100));
    const b = await h.upload(t, 'x'.repeat(100));
    await h.upload(t, 'y'.repeat(10));
    await h.core.artifacts.softDelete(t, a.artifact_id);
    expect((await h.refresh(t)).tenant.storageBytes).toBe(110);
    await h.core.artifacts.softDelete(t, b.artifact_id);
    expect((await h.refresh(t)).tenant.storageBytes).toBe(10);
  });

  it('of an expired artifact is 410 artifact_expired (it is already gone)', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'short', { ttl: '1h' });
    h.clock.advance(3_600_000);
    await expect(h.core.artifacts.softDelete(t, rec.artifact_id)).rejects.toMatchObject({
      code: 'artifact_expired',
      status: 410,
    });
  });
});

describe('expiry', () => {
  it('happens at expires_at exactly: readable the millisecond before, 410 artifact_expired from then on', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'short', { ttl: '2h' });
    h.clock.advance(2 * 3_600_000 - 1);
    await expect(h.core.artifacts.get(t, rec.artifact_id)).resolves.toMatchObject({ artifact_id: rec.artifact_id });
    expect(ids(await h.core.artifacts.list(t, {}))).toEqual([rec.artifact_id]);
    h.clock.advance(1);
    await expect(h.core.artifacts.get(t, rec.artifact_id)).rejects.toMatchObject({
      code: 'artifact_expired',
      status: 410,
    });
  });

  it('drops the artifact from lists and frees its storage before any sweeper has run', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'x'.repeat(50), { ttl: '1d' });
    const stays = await h.upload(t, 'y'.repeat(7));
    h.clock.advance(DAY_MS);
    expect(ids(await h.core.artifacts.list(t, {}))).toEqual([stays.artifact_id]);
    expect((await h.core.tenants.whoami(t)).usage_storage_bytes).toBe(7);
  });

  it('tells a deleted artifact (artifact_already_deleted) from an expired one even after both dates pass', async () => {
    const t = await h.tenant('acme');
    const deleted = await h.upload(t, 'd', { ttl: '1h' });
    await h.core.artifacts.softDelete(t, deleted.artifact_id);
    h.clock.advance(2 * 3_600_000);
    await expect(h.core.artifacts.get(t, deleted.artifact_id)).rejects.toMatchObject({
      code: 'artifact_already_deleted',
    });
  });
});

describe('list filters', () => {
  it('session_id, agent_id, filename and content_type are exact matches, AND-ed', async () => {
    const t = await h.tenant('acme');
    const a = await h.upload(t, 'a', { filename: 'a.txt', sessionId: 'run-1', agentId: 'bot' });
    const b = await h.upload(t, 'b', { filename: 'b.json', sessionId: 'run-1', agentId: 'other' });
    const c = await h.upload(t, 'c', { filename: 'a.txt', sessionId: 'run-2', agentId: 'bot' });
    const list = async (q: Record<string, string>) => ids(await h.core.artifacts.list(t, q)).sort();
    expect(await list({ session_id: 'run-1' })).toEqual([a.artifact_id, b.artifact_id].sort());
    expect(await list({ agent_id: 'bot' })).toEqual([a.artifact_id, c.artifact_id].sort());
    expect(await list({ filename: 'a.txt' })).toEqual([a.artifact_id, c.artifact_id].sort());
    expect(await list({ content_type: 'application/json' })).toEqual([b.artifact_id]);
    expect(await list({ session_id: 'run-1', agent_id: 'bot' })).toEqual([a.artifact_id]);
    expect(await list({ session_id: 'run-1', filename: 'A.TXT' })).toEqual([]);
    expect(await list({ session_id: 'run-3' })).toEqual([]);
  });

  it('created_after and created_before are exclusive bounds on created_at', async () => {
    const t = await h.tenant('acme');
    const first = await h.upload(t, '1');
    h.clock.advance(1000);
    const second = await h.upload(t, '2');
    h.clock.advance(1000);
    const third = await h.upload(t, '3');
    const list = async (q: Record<string, string>) => ids(await h.core.artifacts.list(t, q));
    expect(await list({ created_after: iso(START) })).toEqual([third.artifact_id, second.artifact_id]);
    expect(await list({ created_before: iso(START + 2000) })).toEqual([second.artifact_id, first.artifact_id]);
    expect(await list({ created_after: iso(START), created_before: iso(START + 2000) })).toEqual([second.artifact_id]);
    expect(await list({ created_after: '2026-11-01T00:00:00.999Z' })).toEqual([third.artifact_id, second.artifact_id]);
    await expect(h.core.artifacts.list(t, { created_after: 'yesterday' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('metadata.<key>=<value> matches a stored string, or a number or boolean by its JSON text', async () => {
    const t = await h.tenant('acme');
    const a = await h.upload(t, 'a', { metadata: { kind: 'report', attempt: 3, final: true } });
    const b = await h.upload(t, 'b', { metadata: { kind: 'log', attempt: '3' } });
    await h.upload(t, 'c', { metadata: { kind: 'report', attempt: 4, final: false } });
    const list = async (q: Record<string, string>) => ids(await h.core.artifacts.list(t, q)).sort();
    expect(await list({ 'metadata.attempt': '3' })).toEqual([a.artifact_id, b.artifact_id].sort());
    expect(await list({ 'metadata.final': 'true' })).toEqual([a.artifact_id]);
    expect(await list({ 'metadata.kind': 'log' })).toEqual([b.artifact_id]);
    expect(await list({ 'metadata.kind': 'Report' })).toEqual([]);
    expect(await list({ 'metadata.missing': 'x' })).toEqual([]);
  });

  it('takes up to 8 metadata pairs, all of which must match; a ninth is invalid_request', async () => {
    const t = await h.tenant('acme');
    const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, `v${i}`]));
    const all = await h.upload(t, 'all', { metadata: eight });
    await h.upload(t, 'seven', { metadata: { ...eight, k7: 'other' } });
    const query = Object.fromEntries(Object.entries(eight).map(([k, v]) => [`metadata.${k}`, v]));
    expect(ids(await h.core.artifacts.list(t, query))).toEqual([all.artifact_id]);
    await expect(h.core.artifacts.list(t, { ...query, 'metadata.k8': 'v8' })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('8'),
    });
  });

  it('refuses a metadata filter whose key breaks the key pattern, and one given twice', async () => {
    const t = await h.tenant('acme');
    await expect(h.core.artifacts.list(t, { 'metadata.a.b': 'x' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(h.core.artifacts.list(t, { 'metadata.kind': ['a', 'b'] })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('transcript=true lists only artifacts with metadata type=transcript', async () => {
    const t = await h.tenant('acme');
    const tr = await h.upload(t, '{}\n', { filename: 'chat.jsonl', transcript: true });
    const typed = await h.upload(t, 'x', { metadata: { type: 'transcript' } });
    await h.upload(t, 'plain');
    await h.upload(t, 'log', { filename: 'log.jsonl', transcript: true, metadata: { type: 'log' } });
    expect(ids(await h.core.artifacts.list(t, { transcript: 'true' })).sort()).toEqual(
      [tr.artifact_id, typed.artifact_id].sort(),
    );
    expect(await h.core.artifacts.list(t, { transcript: 'false' })).toMatchObject({ artifacts: { length: 4 } });
    await expect(h.core.artifacts.list(t, { transcript: 'yes' })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('refuses an unknown parameter and a parameter given twice, naming it', async () => {
    const t = await h.tenant('acme');
    await expect(h.core.artifacts.list(t, { colour: 'red' })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('colour'),
    });
    await expect(h.core.artifacts.list(t, { limit: ['5', '10'] })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('limit'),
    });
  });

  it('never shows another tenant’s artifacts, whatever the filter', async () => {
    const a = await h.tenant('a');
    const b = await h.tenant('b');
    await h.upload(a, 'mine', { sessionId: 'run-1', metadata: { kind: 'x' } });
    expect((await h.core.artifacts.list(b, {})).artifacts).toEqual([]);
    expect((await h.core.artifacts.list(b, { session_id: 'run-1' })).artifacts).toEqual([]);
    expect((await h.core.artifacts.list(b, { 'metadata.kind': 'x' })).artifacts).toEqual([]);
  });
});

describe('list order and pagination', () => {
  it('is created_at DESC, then artifact_id DESC among artifacts of the same instant', async () => {
    const t = await h.tenant('acme');
    const sameInstant = [];
    for (let i = 0; i < 5; i++) sameInstant.push((await h.upload(t, `s${i}`)).artifact_id);
    h.clock.advance(1);
    const newest = await h.upload(t, 'newest');
    h.clock.set(START - 1);
    const oldest = await h.upload(t, 'oldest');
    const expected = [newest.artifact_id, ...sameInstant.sort().reverse(), oldest.artifact_id];
    expect(ids(await h.core.artifacts.list(t, {}))).toEqual(expected);
  });

  it('walks every artifact once through next_cursor; the last page has next_cursor null and has_more false', async () => {
    const t = await h.tenant('acme');
    const all: string[] = [];
    for (let i = 0; i < 7; i++) {
      all.push((await h.upload(t, `n${i}`)).artifact_id);
      if (i % 2 === 0) h.clock.advance(1);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    const pages: number[] = [];
    do {
      const page = await h.core.artifacts.list(t, { limit: '3', ...(cursor ? { cursor } : {}) });
      seen.push(...ids(page));
      pages.push(page.artifacts.length);
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(pages).toEqual([3, 3, 1]);
    expect(seen).toEqual(ids(await h.core.artifacts.list(t, {})));
    expect(new Set(seen)).toEqual(new Set(all));
  });

  it('a full last page has next_cursor null (no empty page after it)', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 4; i++) await h.upload(t, `n${i}`);
    const first = await h.core.artifacts.list(t, { limit: '2' });
    const second = await h.core.artifacts.list(t, { limit: '2', cursor: first.next_cursor as string });
    expect(second.artifacts).toHaveLength(2);
    expect(second).toMatchObject({ next_cursor: null, has_more: false });
  });

  it('is keyset: artifacts uploaded between pages neither repeat nor shift the rest', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 4; i++) {
      await h.upload(t, `old${i}`);
      h.clock.advance(1);
    }
    const first = await h.core.artifacts.list(t, { limit: '2' });
    await h.upload(t, 'newer');
    const second = await h.core.artifacts.list(t, { limit: '2', cursor: first.next_cursor as string });
    const everything = ids(await h.core.artifacts.list(t, {}));
    expect([...ids(first), ...ids(second)]).toEqual(everything.slice(1));
  });

  it('limit defaults to 50 and takes 1 to 200; 0, 201 and non-numbers are invalid_request', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 51; i++) await h.upload(t, `n${i}`);
    expect((await h.core.artifacts.list(t, {})).artifacts).toHaveLength(50);
    expect((await h.core.artifacts.list(t, { limit: '1' })).artifacts).toHaveLength(1);
    expect((await h.core.artifacts.list(t, { limit: '200' })).artifacts).toHaveLength(51);
    for (const limit of ['0', '201', '-1', '1.5', 'ten', '']) {
      await expect(h.core.artifacts.list(t, { limit })).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('a malformed cursor is invalid_request, also one that decodes to the wrong shape', async () => {
    const t = await h.tenant('acme');
    const bad = [
      'not a cursor',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from(JSON.stringify([1, 'file.txt'])).toString('base64url'),
      Buffer.from(JSON.stringify(['x', 'art_0000000000000000'])).toString('base64url'),
    ];
    for (const cursor of bad) {
      await expect(h.core.artifacts.list(t, { cursor })).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('cursor'),
      });
    }
  });

  it('carries page: null in lists even for a published artifact (the single get shows it)', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, '# hi', { filename: 'a.md' });
    const page = await h.core.pages.publish(t, rec.artifact_id, { visibility: 'public' });
    expect((await h.core.artifacts.list(t, {})).artifacts[0]?.page).toBeNull();
    expect((await h.core.artifacts.get(t, rec.artifact_id)).page).toEqual({
      public_url: page.public_url,
      visibility: 'public',
    });
  });
});
