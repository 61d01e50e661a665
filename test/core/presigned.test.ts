import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLANS } from '../../src/core/plans.js';
import type { UploadUrlRequest } from '../../src/core/presigned.js';
import type { Caller } from '../../src/core/tenants.js';
import { UPLOAD_SLOT_AFTER_BYTES } from '../../src/core/upload-slots.js';
import type { UploadTicket } from '../../src/wire/index.js';
import { type CoreHarness, coreHarness, DAY_MS, HOUR_MS, iso, START } from './harness.js';

/**
 * Presigned uploads in the core (spec: upload-url, complete; API.md): Pro only, the size bounds,
 * the PUT to Cairn's own signed URL (the local blob folder cannot sign one), complete before and
 * after the bytes, and what the sweeper does with reservations nobody completed. The wire (and
 * S3's own presigned PUT) stays with test/e2e.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const FIVE_GIB = 5 * 1024 ** 3;

function ticketFor(t: Caller, sizeBytes: number, req: Partial<UploadUrlRequest> = {}) {
  return h.core.presigned.requestUrl(t, { filename: 'big.bin', sizeBytes, ...req });
}

/** The PUT of `bytes` to the ticket's URL, as Cairn's own `PUT /v1/uploads/:id` route runs it. */
function put(ticket: UploadTicket, bytes: string | Buffer) {
  const u = new URL(ticket.upload_url);
  const id = u.pathname.split('/').at(-1) as string;
  return h.core.presigned.receive(
    id,
    u.searchParams.get('exp') ?? undefined,
    u.searchParams.get('sig') ?? undefined,
    Readable.from([typeof bytes === 'string' ? Buffer.from(bytes) : bytes]),
  );
}

describe('requesting an upload URL', () => {
  it('answers a pending ticket with a PUT URL valid for one hour', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 5);
    expect(ticket).toEqual({
      artifact_id: expect.stringMatching(/^art_[A-Za-z0-9]{16}$/),
      status: 'pending',
      upload_url: expect.stringContaining(`${h.core.deps.origins.api}/v1/uploads/${ticket.artifact_id}?exp=`),
      upload_expires_at: iso(START + HOUR_MS),
      upload_method: 'PUT',
      upload_headers: {},
    });
  });

  it('is refused on Free with quota_exceeded and upgrade_url', async () => {
    const t = await h.tenant('free', 'free');
    await expect(ticketFor(t, 5)).rejects.toMatchObject({
      code: 'quota_exceeded',
      status: 403,
      extras: { upgradeUrl: expect.any(String) },
    });
  });

  it('takes size_bytes from 1 to 5 GiB; 0, more, fractions and strings are invalid_request', async () => {
    const t = await h.tenant('pro');
    await expect(ticketFor(t, 1)).resolves.toMatchObject({ status: 'pending' });
    await expect(ticketFor(t, FIVE_GIB)).resolves.toMatchObject({ status: 'pending' });
    for (const size of [0, -1, FIVE_GIB + 1, 1.5, '10', undefined]) {
      await expect(ticketFor(t, size as number)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('is refused when the declared size would pass the plan’s storage', async () => {
    const t = await h.tenant('pro');
    await h.fill(t, PLANS.pro.storageBytes - 10);
    await expect(ticketFor(t, 11)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(ticketFor(t, 10)).resolves.toMatchObject({ status: 'pending' });
  });

  it('checks the fields an upload checks before any byte: sealed session, TTL, filename', async () => {
    const t = await h.tenant('pro');
    await h.upload(t, 'x', { sessionId: 'run-1' });
    await h.core.sessions.seal(t, 'run-1');
    await expect(ticketFor(t, 5, { sessionId: 'run-1' })).rejects.toMatchObject({ code: 'session_sealed' });
    await expect(ticketFor(t, 5, { ttl: '366d' })).rejects.toMatchObject({ code: 'ttl_exceeds_plan_limit' });
    await expect(ticketFor(t, 5, { filename: 'a/b' })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('the PUT and complete', () => {
  it('complete after the bytes answers the record; its storage counts only from then', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 5, { filename: 'a.txt', sessionId: 'run-1', metadata: { k: 'v' } });
    expect(await put(ticket, 'hello')).toEqual({ artifact_id: ticket.artifact_id, size_bytes: 5 });
    expect((await h.refresh(t)).tenant.storageBytes).toBe(0);
    h.clock.advance(60_000);
    const rec = await h.core.presigned.complete(t, ticket.artifact_id);
    expect(rec).toMatchObject({
      artifact_id: ticket.artifact_id,
      filename: 'a.txt',
      content_type: 'text/plain',
      size_bytes: 5,
      session_id: 'run-1',
      metadata: { k: 'v' },
      // It enters lists at completion, and keeps its TTL from there.
      created_at: iso(START + 60_000),
      expires_at: iso(START + 60_000 + 30 * DAY_MS),
      page: null,
    });
    expect((await h.refresh(t)).tenant.storageBytes).toBe(5);
    expect(await h.core.artifacts.get(t, ticket.artifact_id)).toEqual(rec);
  });

  it('complete before the bytes is upload_not_found (409); the upload can still finish', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 3);
    await expect(h.core.presigned.complete(t, ticket.artifact_id)).rejects.toMatchObject({
      code: 'upload_not_found',
      status: 409,
    });
    await put(ticket, 'abc');
    await expect(h.core.presigned.complete(t, ticket.artifact_id)).resolves.toMatchObject({ size_bytes: 3 });
  });

  it('complete twice answers the same record, and counts the bytes once', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 3);
    await put(ticket, 'abc');
    const first = await h.core.presigned.complete(t, ticket.artifact_id);
    h.clock.advance(1000);
    expect(await h.core.presigned.complete(t, ticket.artifact_id)).toEqual(first);
    expect((await h.refresh(t)).tenant.storageBytes).toBe(3);
  });

  it('refuses bytes that differ from the declared size: fewer (invalid_request), more (file_too_large)', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 5);
    await expect(put(ticket, 'abc')).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(put(ticket, 'abcdefgh')).rejects.toMatchObject({ code: 'file_too_large' });
    await expect(h.core.presigned.complete(t, ticket.artifact_id)).rejects.toMatchObject({ code: 'upload_not_found' });
    // Nothing of them was kept: the right bytes still go in.
    await put(ticket, 'abcde');
    await expect(h.core.presigned.complete(t, ticket.artifact_id)).resolves.toMatchObject({ size_bytes: 5 });
  });

  it('a PUT with a forged or expired signature, or after complete, is upload_not_found', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 3);
    const forged = { ...ticket, upload_url: ticket.upload_url.replace(/sig=./, 'sig=X') };
    await expect(put(forged, 'abc')).rejects.toMatchObject({ code: 'upload_not_found' });
    const other = await ticketFor(t, 3);
    const swapped = { ...ticket, upload_url: ticket.upload_url.replace(ticket.artifact_id, other.artifact_id) };
    await expect(put(swapped, 'abc')).rejects.toMatchObject({ code: 'upload_not_found' });
    await put(ticket, 'abc');
    await h.core.presigned.complete(t, ticket.artifact_id);
    await expect(put(ticket, 'abc')).rejects.toMatchObject({ code: 'upload_not_found' });
    h.clock.advance(HOUR_MS);
    await expect(put(other, 'abc')).rejects.toMatchObject({ code: 'upload_not_found' });
  });

  it('a PUT for a suspended tenant is upload_not_found', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 3);
    await h.core.tenants.setSuspended(t.tenant, true);
    await expect(put(ticket, 'abc')).rejects.toMatchObject({ code: 'upload_not_found' });
  });

  it('complete of another tenant’s upload is artifact_not_found and leaves it pending', async () => {
    const owner = await h.tenant('owner');
    const other = await h.tenant('other');
    const ticket = await ticketFor(owner, 3);
    await put(ticket, 'abc');
    await expect(h.core.presigned.complete(other, ticket.artifact_id)).rejects.toMatchObject({
      code: 'artifact_not_found',
    });
    await expect(h.core.presigned.complete(owner, ticket.artifact_id)).resolves.toMatchObject({ size_bytes: 3 });
  });

  it('complete is refused when storage filled up while the bytes were on their way', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 10);
    await put(ticket, '0123456789');
    await h.fill(t, PLANS.pro.storageBytes - 5);
    await expect(h.core.presigned.complete(t, ticket.artifact_id)).rejects.toMatchObject({ code: 'quota_exceeded' });
  });

  it('complete is refused with session_sealed when the session was sealed after the ticket', async () => {
    const t = await h.tenant('pro');
    await h.upload(t, 'x', { sessionId: 'run-1' });
    const ticket = await ticketFor(t, 3, { sessionId: 'run-1' });
    await put(ticket, 'abc');
    await h.core.sessions.seal(t, 'run-1');
    await expect(h.core.presigned.complete(t, ticket.artifact_id)).rejects.toMatchObject({ code: 'session_sealed' });
  });

  it('a PUT over 1 MiB takes one of the tenant’s upload slots: with all of them held it is rate_limited', async () => {
    const t = await h.tenant('pro');
    const size = UPLOAD_SLOT_AFTER_BYTES + 1;
    const ticket = await ticketFor(t, size);
    const held = Array.from({ length: h.core.uploadSlots.perTenant }, () => h.core.uploadSlots.take(t.tenant.id));
    await expect(put(ticket, Buffer.alloc(size))).rejects.toMatchObject({
      code: 'rate_limited',
      extras: { retryAfterSeconds: 5 },
    });
    for (const release of held) release();
    await expect(put(ticket, Buffer.alloc(size))).resolves.toMatchObject({ size_bytes: size });
    expect(h.core.uploadSlots.inUse(t.tenant.id)).toBe(0);
  });
});

describe('abandoned reservations', () => {
  it('are purged by the sweeper once 24 hours have passed since the ticket, bytes or not; complete then finds nothing', async () => {
    const t = await h.tenant('pro');
    const never = await ticketFor(t, 3);
    const landed = await ticketFor(t, 3);
    await put(landed, 'abc');
    h.clock.advance(24 * HOUR_MS);
    expect((await h.core.sweeper.runOnce()).pendingPurged).toBe(0);
    h.clock.advance(1);
    expect((await h.core.sweeper.runOnce()).pendingPurged).toBe(2);
    for (const ticket of [never, landed]) {
      await expect(h.core.presigned.complete(t, ticket.artifact_id)).rejects.toMatchObject({
        code: 'artifact_not_found',
      });
    }
    expect((await h.refresh(t)).tenant.storageBytes).toBe(0);
  });
});

describe('a reservation its owner can find (issue 49: verify state after an ambiguous answer)', () => {
  it('GET shows a pending artifact to its owner with status and held_until; nothing else can use it', async () => {
    const t = await h.tenant('pro');
    const other = await h.tenant('other', 'pro');
    const ticket = await ticketFor(t, 5, { filename: 'big.bin', sessionId: 'run-1' });
    const seen = await h.core.artifacts.get(t, ticket.artifact_id);
    expect(seen).toMatchObject({
      artifact_id: ticket.artifact_id,
      filename: 'big.bin',
      size_bytes: 5,
      content_hash: '',
      session_id: 'run-1',
      status: 'pending',
      held_until: iso(START + DAY_MS),
    });
    await expect(h.core.artifacts.get(other, ticket.artifact_id)).rejects.toMatchObject({ code: 'artifact_not_found' });
    await expect(h.core.sharing.downloadUrl(t, ticket.artifact_id)).rejects.toMatchObject({
      code: 'artifact_not_found',
    });
    await expect(h.core.sharing.createLink(t, ticket.artifact_id, {})).rejects.toMatchObject({
      code: 'artifact_not_found',
    });
    // Lists stay what they were: active artifacts only.
    expect((await h.core.artifacts.list(t, {})).artifacts).toEqual([]);
    // Completed, it is the artifact's record as always, without the pending fields.
    await put(ticket, 'hello');
    const done = await h.core.presigned.complete(t, ticket.artifact_id);
    expect(done).not.toHaveProperty('status');
    expect(await h.core.artifacts.get(t, ticket.artifact_id)).not.toHaveProperty('held_until');
  });

  it('a reservation past its 24 hours is not found, as before', async () => {
    const t = await h.tenant('pro');
    const ticket = await ticketFor(t, 5);
    h.clock.advance(DAY_MS);
    await expect(h.core.artifacts.get(t, ticket.artifact_id)).rejects.toMatchObject({ code: 'artifact_not_found' });
  });

  it('an Idempotency-Key answers the same reservation with a fresh URL, and reserves nothing twice', async () => {
    const t = await h.tenant('pro');
    const first = await h.core.presigned.reserve(t, { filename: 'big.bin', sizeBytes: 5 }, 'k-1');
    expect(first.replayed).toBe(false);
    h.clock.advance(2 * HOUR_MS);
    const again = await h.core.presigned.reserve(t, { filename: 'other.bin', sizeBytes: 9 }, 'k-1');
    expect(again.replayed).toBe(true);
    expect(again.ticket.artifact_id).toBe(first.ticket.artifact_id);
    expect(again.ticket.upload_expires_at).toBe(iso(START + 3 * HOUR_MS));
    // The fresh URL works (the first one has expired by now).
    await expect(put(first.ticket, 'hello')).rejects.toMatchObject({ code: 'upload_not_found' });
    expect(await put(again.ticket, 'hello')).toMatchObject({ size_bytes: 5 });
    // Keys are per kind of call: the same key on a direct upload stores an artifact of its own.
    const direct = await h.upload(t, 'x', { idempotencyKey: 'k-1' });
    expect(direct.artifact_id).not.toBe(first.ticket.artifact_id);
    // Once completed, a repeat says so instead of handing out a URL nobody can use.
    await h.core.presigned.complete(t, first.ticket.artifact_id);
    await expect(h.core.presigned.reserve(t, { filename: 'big.bin', sizeBytes: 5 }, 'k-1')).rejects.toMatchObject({
      code: 'upload_not_found',
      message: expect.stringContaining(first.ticket.artifact_id),
    });
    // A new key reserves a new one.
    const fresh = await h.core.presigned.reserve(t, { filename: 'big.bin', sizeBytes: 5 }, 'k-2');
    expect(fresh.ticket.artifact_id).not.toBe(first.ticket.artifact_id);
  });

  it('concurrent reservations with one key make one pending artifact', async () => {
    const t = await h.tenant('pro');
    const all = await Promise.all(
      Array.from({ length: 5 }, () => h.core.presigned.reserve(t, { filename: 'big.bin', sizeBytes: 5 }, 'same')),
    );
    expect(new Set(all.map((r) => r.ticket.artifact_id)).size).toBe(1);
    expect(all.filter((r) => !r.replayed)).toHaveLength(1);
  });
});
