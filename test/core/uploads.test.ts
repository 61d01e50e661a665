import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLANS } from '../../src/core/plans.js';
import { type CoreHarness, coreHarness, DAY_MS, iso, START } from './harness.js';

/**
 * The upload rules of the spec and API.md, in the core: dedup, the storage quota, sealed
 * sessions, idempotency, TTL, content types, metadata and transcripts. test/e2e/upload.test.ts
 * keeps the same behaviour on the wire (multipart, JSON, the 413 while streaming).
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

describe('a stored upload', () => {
  it('is a new artifact each time, even for the same bytes, with the record the API answers', async () => {
    const t = await h.tenant('acme');
    const a = await h.upload(t, 'same', { filename: 'a.txt', sessionId: 'run-1', agentId: 'bot' });
    const b = await h.upload(t, 'same', { filename: 'a.txt' });
    expect(a.artifact_id).not.toBe(b.artifact_id);
    expect(a).toMatchObject({
      filename: 'a.txt',
      content_type: 'text/plain',
      size_bytes: 4,
      session_id: 'run-1',
      agent_id: 'bot',
      metadata: {},
      created_at: iso(START),
      expires_at: iso(START + 30 * DAY_MS),
      page: null,
    });
    expect(a.content_hash).toBe(b.content_hash);
  });

  it('counts the bytes of one tenant once per distinct content (dedup), and other tenants apart', async () => {
    const t = await h.tenant('acme');
    const other = await h.tenant('other');
    await h.upload(t, 'x'.repeat(1000));
    await h.upload(t, 'x'.repeat(1000));
    await h.upload(t, 'y'.repeat(10));
    await h.upload(other, 'x'.repeat(1000));
    expect((await h.refresh(t)).tenant.storageBytes).toBe(1010);
    expect((await h.refresh(other)).tenant.storageBytes).toBe(1000);
  });
});

describe('the storage quota', () => {
  it('refuses an upload that would pass the plan, and keeps nothing of it', async () => {
    const t = await h.tenant('small', 'free');
    await h.fill(t, PLANS.free.storageBytes - 5);
    const before = (await h.refresh(t)).tenant.storageBytes;
    await expect(h.upload(t, '123456', { filename: 'over.txt' })).rejects.toMatchObject({
      code: 'quota_exceeded',
      status: 403,
    });
    expect((await h.refresh(t)).tenant.storageBytes).toBe(before);
    const { artifacts } = await h.core.artifacts.list(await h.refresh(t), {});
    expect(artifacts.map((a) => a.filename)).toEqual(['filler.bin']);
  });

  it('takes bytes the tenant stores already (they add nothing) when new bytes would not fit', async () => {
    const t = await h.tenant('small', 'free');
    await h.upload(t, 'kept bytes', { filename: 'first.txt' });
    await h.fill(t, PLANS.free.storageBytes - 15);
    await expect(h.upload(t, 'new bytes!', { filename: 'new.txt' })).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(h.upload(t, 'kept bytes', { filename: 'again.txt' })).resolves.toMatchObject({ size_bytes: 10 });
  });

  it('at the limit refuses before reading the bytes, even bytes stored already (docs/api.md)', async () => {
    const t = await h.tenant('full', 'free');
    await h.upload(t, 'kept bytes');
    await h.fill(t, PLANS.free.storageBytes - 10);
    await expect(h.core.uploads.precheck(t, { filename: 'again.txt' })).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
  });
});

describe('sealed sessions', () => {
  it('refuse uploads naming them; other sessions still take uploads', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'first', { sessionId: 'run-1' });
    await h.core.sessions.seal(t, 'run-1');
    await expect(h.upload(t, 'late', { sessionId: 'run-1' })).rejects.toMatchObject({
      code: 'session_sealed',
      status: 409,
    });
    await expect(h.upload(t, 'other', { sessionId: 'run-2' })).resolves.toMatchObject({ session_id: 'run-2' });
  });

  it('are per tenant: sealing one tenant’s run-1 leaves another tenant’s run-1 open', async () => {
    const a = await h.tenant('a');
    const b = await h.tenant('b');
    await h.upload(a, '1', { sessionId: 'run-1' });
    await h.upload(b, '1', { sessionId: 'run-1' });
    await h.core.sessions.seal(a, 'run-1');
    await expect(h.upload(b, '2', { sessionId: 'run-1' })).resolves.toMatchObject({ session_id: 'run-1' });
  });
});

describe('Idempotency-Key', () => {
  it('replays the first answer within 24 h, with no content comparison and no second artifact', async () => {
    const t = await h.tenant('acme');
    const first = await h.uploadResult(t, 'one', { filename: 'one.txt', idempotencyKey: 'k-1' });
    const again = await h.uploadResult(t, 'something else', { filename: 'two.txt', idempotencyKey: 'k-1' });
    expect(first.replayed).toBe(false);
    expect(again.replayed).toBe(true);
    expect(again.record).toEqual(first.record);
    expect((await h.core.artifacts.list(await h.refresh(t), {})).artifacts).toHaveLength(1);
  });

  it('is per tenant, and forgotten after 24 hours', async () => {
    const a = await h.tenant('a');
    const b = await h.tenant('b');
    const first = await h.upload(a, 'one', { idempotencyKey: 'shared' });
    expect((await h.upload(b, 'one', { idempotencyKey: 'shared' })).artifact_id).not.toBe(first.artifact_id);
    h.clock.advance(24 * 3_600_000 + 1);
    expect((await h.upload(a, 'one', { idempotencyKey: 'shared' })).artifact_id).not.toBe(first.artifact_id);
  });
});

describe('TTL', () => {
  it('defaults to 30 days; takes h and d; never is the longest the plan allows', async () => {
    const free = await h.tenant('f', 'free');
    const pro = await h.tenant('p', 'pro');
    expect((await h.upload(free, 'a', { ttl: '12h' })).expires_at).toBe(iso(START + 12 * 3_600_000));
    expect((await h.upload(free, 'b', { ttl: '7d' })).expires_at).toBe(iso(START + 7 * DAY_MS));
    expect((await h.upload(free, 'c', { ttl: 'never' })).expires_at).toBe(iso(START + 90 * DAY_MS));
    expect((await h.upload(pro, 'c', { ttl: 'never' })).expires_at).toBe(iso(START + 365 * DAY_MS));
  });

  it('over the plan’s maximum is ttl_exceeds_plan_limit; a malformed one is invalid_request', async () => {
    const free = await h.tenant('f', 'free');
    await expect(h.upload(free, 'a', { ttl: '91d' })).rejects.toMatchObject({ code: 'ttl_exceeds_plan_limit' });
    await expect(h.upload(free, 'a', { ttl: '3 days' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(h.upload(free, 'a', { ttl: 7 })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('content type', () => {
  it('is the declared one, else the part’s, else by extension, else octet-stream; the overrides win', async () => {
    const t = await h.tenant('acme');
    const type = async (filename: string, extra: Record<string, string> = {}) =>
      (await h.upload(t, 'x', { filename, ...extra })).content_type;
    expect(await type('a.bin', { contentType: 'application/x-custom' })).toBe('application/x-custom');
    expect(await type('a.bin', { partType: 'image/png' })).toBe('image/png');
    expect(await type('a.json')).toBe('application/json');
    expect(await type('noextension')).toBe('application/octet-stream');
    expect(await type('notes.md', { contentType: 'text/plain' })).toBe('text/markdown');
    expect(await type('pic.webp', { contentType: 'application/octet-stream' })).toBe('image/webp');
    expect(await type('pic.jfif')).toBe('image/jpeg');
    expect(await type('anim.apng')).toBe('image/apng');
  });
});

describe('metadata', () => {
  it('is a JSON object of at most 8 KB with keys like ^[a-zA-Z][a-zA-Z0-9_-]{0,63}$', async () => {
    const t = await h.tenant('acme');
    await expect(h.upload(t, 'x', { metadata: { 'a.b': 1 } })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(h.upload(t, 'x', { metadata: { '1a': 1 } })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(h.upload(t, 'x', { metadata: ['a'] })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(h.upload(t, 'x', { metadata: { big: 'x'.repeat(8 * 1024) } })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    const ok = await h.upload(t, 'x', { metadata: { model: 'gpt-5', n: 2, nested: { ok: true } } });
    expect(ok.metadata).toEqual({ model: 'gpt-5', n: 2, nested: { ok: true } });
  });

  it('transcript=true sets type=transcript (unless the caller set type) and the NDJSON content type', async () => {
    const t = await h.tenant('acme');
    const plain = await h.upload(t, '{}\n', { filename: 'chat.jsonl', transcript: true });
    expect(plain.metadata).toEqual({ type: 'transcript' });
    expect(plain.content_type).toBe('application/x-ndjson');
    const typed = await h.upload(t, '{}\n', { filename: 'chat.jsonl', transcript: 'true', metadata: { type: 'log' } });
    expect(typed.metadata).toEqual({ type: 'log' });
  });
});
