import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { blobKey } from '../../src/core/context.js';
import { LIMITS, PLANS } from '../../src/core/plans.js';
import type { ResumableCreateRequest } from '../../src/core/resumable.js';
import { parseChecksum } from '../../src/core/resumable-checks.js';
import type { Caller } from '../../src/core/tenants.js';
import { type CoreHarness, coreHarness, DAY_MS, HOUR_MS, iso, START } from './harness.js';

/**
 * Resumable (tus) uploads in the core (docs/api.md: Resumable uploads): creation and its caps (20
 * unfinished per tenant, their lengths reserved against storage), offsets and pieces, the one-writer
 * lease, checksums, expiry 24 h after creation, and termination. The tus headers, HEAD after a cut
 * PATCH and real tus clients stay with test/e2e.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const body = (text: string) => Readable.from([Buffer.from(text)]);
const sha256 = (text: string) => createHash('sha256').update(text).digest();

async function create(t: Caller, lengthBytes: number, req: Partial<ResumableCreateRequest> = {}, key?: string) {
  return h.core.resumable.create(t, { filename: 'big.bin', lengthBytes, ...req }, key);
}

async function open(t: Caller, lengthBytes: number, req: Partial<ResumableCreateRequest> = {}) {
  return (await create(t, lengthBytes, req)).state.id;
}

async function readStored(t: Caller, id: string): Promise<string> {
  const { content_hash } = await h.core.artifacts.get(t, id);
  const chunks: Buffer[] = [];
  for await (const c of await h.adapters.blobs.read(blobKey(t.tenant.id, content_hash))) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('creation', () => {
  it('answers the upload at offset 0 with its length and an expiry 24 hours on; it is no artifact yet', async () => {
    const t = await h.tenant('acme');
    const { state, replayed } = await create(t, 10);
    expect(replayed).toBe(false);
    expect(state).toEqual({
      id: expect.stringMatching(/^art_[A-Za-z0-9]{16}$/),
      offsetBytes: 0,
      lengthBytes: 10,
      expiresAt: START + 24 * HOUR_MS,
    });
    expect(await h.core.resumable.state(t, state.id)).toEqual(state);
    expect((await h.core.artifacts.list(t, {})).artifacts).toEqual([]);
  });

  it('refuses what an upload refuses before any byte: a sealed session, a TTL over the plan, a bad field', async () => {
    const t = await h.tenant('free', 'free');
    await h.upload(t, 'x', { sessionId: 'run-1' });
    await h.core.sessions.seal(t, 'run-1');
    await expect(create(t, 5, { sessionId: 'run-1' })).rejects.toMatchObject({ code: 'session_sealed' });
    await expect(create(t, 5, { ttl: '91d' })).rejects.toMatchObject({ code: 'ttl_exceeds_plan_limit' });
    await expect(create(t, 5, { filename: '' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(create(t, 5, { metadata: { 'a.b': 1 } })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('takes an Upload-Length up to the plan’s limit (Free the multipart size, Pro 5 GiB): beyond is file_too_large', async () => {
    const free = await h.tenant('free', 'free');
    const pro = await h.tenant('pro', 'pro');
    await expect(create(free, LIMITS.multipartBytes + 1)).rejects.toMatchObject({
      code: 'file_too_large',
      status: 413,
    });
    await expect(create(pro, 5 * 1024 ** 3 + 1)).rejects.toMatchObject({ code: 'file_too_large' });
    await expect(create(free, LIMITS.multipartBytes)).resolves.toMatchObject({ state: { offsetBytes: 0 } });
    await expect(create(pro, 5 * 1024 ** 3)).resolves.toMatchObject({ state: { offsetBytes: 0 } });
    for (const bad of [-1, 1.5, '10', undefined]) {
      await expect(create(pro, bad as number)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('of length 0 is an empty artifact at once', async () => {
    const t = await h.tenant('acme');
    const { state } = await create(t, 0, { filename: 'empty.txt' });
    expect(state).toMatchObject({ offsetBytes: 0, lengthBytes: 0, expiresAt: null });
    expect(await h.core.artifacts.get(t, state.id)).toMatchObject({ size_bytes: 0, filename: 'empty.txt' });
  });

  it('with an Idempotency-Key answers the same upload, at its current offset, for 24 hours', async () => {
    const t = await h.tenant('acme');
    const first = await create(t, 10, {}, 'key-1');
    await h.core.resumable.append(t, first.state.id, 0, body('abc'), null);
    const again = await create(t, 10, {}, 'key-1');
    expect(again).toEqual({ state: { ...first.state, offsetBytes: 3 }, replayed: true });
    // The namespace is tus's own: the same key on a direct upload is another request.
    const direct = await h.upload(t, 'x', { idempotencyKey: 'key-1' });
    expect(direct.artifact_id).not.toBe(first.state.id);
  });

  it('with the key of an upload that is gone is not_found, naming it', async () => {
    const t = await h.tenant('acme');
    const first = await create(t, 10, {}, 'key-1');
    await h.core.resumable.terminate(t, first.state.id);
    await expect(create(t, 10, {}, 'key-1')).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining(first.state.id),
    });
  });
});

describe('the caps on unfinished uploads', () => {
  it('are 20 per tenant: the 21st is quota_exceeded; finishing, terminating or expiry frees a place', async () => {
    const t = await h.tenant('acme');
    const other = await h.tenant('other');
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push(await open(t, 3));
    await expect(create(t, 3)).rejects.toMatchObject({ code: 'quota_exceeded', status: 403 });
    await expect(create(other, 3)).resolves.toMatchObject({ replayed: false });
    await h.core.resumable.append(t, ids[0] as string, 0, body('abc'), null);
    const replacement = await open(t, 3);
    await expect(create(t, 3)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await h.core.resumable.terminate(t, replacement);
    await open(t, 3);
    await expect(create(t, 3)).rejects.toMatchObject({ code: 'quota_exceeded' });
    h.clock.advance(24 * HOUR_MS);
    await expect(create(t, 3)).resolves.toMatchObject({ replayed: false });
  });

  it('reserve their lengths against storage until they finish, expire or are terminated', async () => {
    const t = await h.tenant('free', 'free');
    await h.fill(t, PLANS.free.storageBytes - 100);
    const first = await open(t, 60);
    await expect(create(t, 60)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(create(t, 40)).resolves.toMatchObject({ replayed: false });
    await expect(create(t, 1)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await h.core.resumable.terminate(t, first);
    await expect(create(t, 60)).resolves.toMatchObject({ replayed: false });
  });

  it('a storage that filled while the bytes came refuses the last PATCH with quota_exceeded', async () => {
    const t = await h.tenant('free', 'free');
    const id = await open(t, 10);
    await h.fill(t, PLANS.free.storageBytes - 5);
    await expect(h.core.resumable.append(t, id, 0, body('0123456789'), null)).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    // Still an upload in progress, shown to its owner as such.
    expect(await h.core.artifacts.get(t, id)).toMatchObject({ status: 'pending', held_until: iso(START + DAY_MS) });
  });
});

describe('offsets and pieces', () => {
  it('each PATCH adds its bytes at the server’s offset; the one reaching the length makes the artifact', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 10, { filename: 'abc.txt', sessionId: 'run-1' });
    expect(await h.core.resumable.append(t, id, 0, body('abc'), null)).toMatchObject({ offsetBytes: 3 });
    expect(await h.core.resumable.state(t, id)).toMatchObject({ offsetBytes: 3, lengthBytes: 10 });
    expect(await h.core.artifacts.get(t, id)).toMatchObject({ status: 'pending', size_bytes: 10, content_hash: '' });
    expect(await h.core.resumable.append(t, id, 3, body('defg'), null)).toMatchObject({ offsetBytes: 7 });
    const done = await h.core.resumable.append(t, id, 7, body('hij'), null);
    expect(done).toEqual({ id, offsetBytes: 10, lengthBytes: 10, expiresAt: null });
    expect(await h.core.artifacts.get(t, id)).toMatchObject({
      filename: 'abc.txt',
      session_id: 'run-1',
      size_bytes: 10,
      content_hash: sha256('abcdefghij').toString('hex'),
    });
    expect(await readStored(t, id)).toBe('abcdefghij');
    expect((await h.refresh(t)).tenant.storageBytes).toBe(10);
    // A finished upload answers its full offset (HEAD).
    expect(await h.core.resumable.state(t, id)).toEqual(done);
  });

  it('a PATCH at any other offset is upload_offset_conflict and keeps nothing of it', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    await h.core.resumable.append(t, id, 0, body('abc'), null);
    for (const offset of [0, 2, 4]) {
      await expect(h.core.resumable.append(t, id, offset, body('xyz'), null)).rejects.toMatchObject({
        code: 'upload_offset_conflict',
        status: 409,
      });
    }
    await h.core.resumable.append(t, id, 3, body('def'), null);
    expect(await readStored(t, id)).toBe('abcdef');
  });

  it('a body longer than what the upload misses is file_too_large, by its declared length before any byte', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 5);
    await expect(h.core.resumable.append(t, id, 0, body('abcdef'), null, 6)).rejects.toMatchObject({
      code: 'file_too_large',
    });
    await expect(h.core.resumable.append(t, id, 0, body('abcdef'), null)).rejects.toMatchObject({
      code: 'file_too_large',
    });
    expect(await h.core.resumable.state(t, id)).toMatchObject({ offsetBytes: 0 });
  });

  it('takes at most 1,000 PATCHes with bytes: the next is quota_exceeded, and the upload keeps what it has', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 1002);
    // 999 one-byte pieces recorded straight in the store (999 real PATCHes take seconds), then the 1,000th.
    const { resumables } = h.adapters;
    await resumables.leaseResumable(t.tenant.id, id, 'setup', h.clock.now(), h.clock.now() + 1000);
    for (let offset = 0; offset < 999; offset++) {
      const piece = { landingKey: `uploads/${t.tenant.id}/${id}.${offset}.setup`, sizeBytes: 1 };
      await resumables.appendResumable(id, 'setup', offset, piece, h.clock.now());
    }
    await resumables.releaseResumable(id, 'setup');
    await h.core.resumable.append(t, id, 999, body('x'), null);
    await expect(h.core.resumable.append(t, id, 1000, body('yy'), null)).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    expect(await h.core.resumable.state(t, id)).toMatchObject({ offsetBytes: 1000 });
  });

  it('a PATCH to a finished upload is upload_offset_conflict', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 3);
    await h.core.resumable.append(t, id, 0, body('abc'), null);
    await expect(h.core.resumable.append(t, id, 3, body(''), null)).rejects.toMatchObject({
      code: 'upload_offset_conflict',
    });
  });

  it('another tenant’s upload is not found, to HEAD, PATCH and DELETE alike', async () => {
    const owner = await h.tenant('owner');
    const other = await h.tenant('other');
    const id = await open(owner, 3);
    expect(await h.core.resumable.state(other, id)).toBeNull();
    await expect(h.core.resumable.append(other, id, 0, body('abc'), null)).rejects.toMatchObject({ code: 'not_found' });
    await expect(h.core.resumable.terminate(other, id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await h.core.resumable.state(owner, id)).toMatchObject({ offsetBytes: 0 });
  });
});

describe('the lease (one writer at a time)', () => {
  it('a second PATCH while one is running is upload_offset_conflict; the first one completes', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    const slow = new PassThrough();
    slow.write('abc');
    const first = h.core.resumable.append(t, id, 0, slow, null);
    // The first PATCH holds the upload once it is reading its body.
    await new Promise((resolve) => setImmediate(resolve));
    await expect(h.core.resumable.append(t, id, 0, body('abc'), null)).rejects.toMatchObject({
      code: 'upload_offset_conflict',
    });
    await expect(h.core.resumable.terminate(t, id)).rejects.toMatchObject({ code: 'upload_offset_conflict' });
    slow.end();
    expect(await first).toMatchObject({ offsetBytes: 3 });
    await expect(h.core.resumable.append(t, id, 3, body('def'), null)).resolves.toMatchObject({ expiresAt: null });
  });

  it('of a request that stopped renewing it lapses after 8 s: the next PATCH takes over, the old one records nothing', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    const stuck = new PassThrough();
    stuck.write('zzz');
    const first = h.core.resumable.append(t, id, 0, stuck, null);
    await new Promise((resolve) => setImmediate(resolve));
    h.clock.advance(8_000);
    await expect(h.core.resumable.append(t, id, 0, body('abc'), null)).resolves.toMatchObject({ offsetBytes: 3 });
    stuck.end();
    await expect(first).rejects.toMatchObject({ code: 'upload_offset_conflict' });
    await h.core.resumable.append(t, id, 3, body('def'), null);
    expect(await readStored(t, id)).toBe('abcdef');
  });
});

describe('checksums', () => {
  it('a piece matching its Upload-Checksum (sha256 or sha1) is kept', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    const sha1 = createHash('sha1').update('abc').digest('base64');
    await h.core.resumable.append(t, id, 0, body('abc'), parseChecksum(`sha1 ${sha1}`));
    await h.core.resumable.append(t, id, 3, body('def'), parseChecksum(`sha256 ${sha256('def').toString('base64')}`));
    expect(await readStored(t, id)).toBe('abcdef');
  });

  it('a piece that does not match is checksum_mismatch (460) and nothing of it is kept', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    const wrong = parseChecksum(`sha256 ${sha256('abd').toString('base64')}`);
    await expect(h.core.resumable.append(t, id, 0, body('abc'), wrong)).rejects.toMatchObject({
      code: 'checksum_mismatch',
      status: 460,
    });
    expect(await h.core.resumable.state(t, id)).toMatchObject({ offsetBytes: 0 });
  });

  it('an algorithm other than sha1 or sha256, or a malformed header, is invalid_request', () => {
    expect(() => parseChecksum('md5 1B2M2Y8AsgTpgAmY7PhCfg==')).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
    expect(() => parseChecksum('sha256')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(parseChecksum(undefined)).toBeNull();
  });
});

describe('expiry and termination', () => {
  it('an unfinished upload is gone 24 hours after its creation: HEAD and PATCH find nothing', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    await h.core.resumable.append(t, id, 0, body('abc'), null);
    h.clock.advance(24 * HOUR_MS - 1);
    expect(await h.core.resumable.state(t, id)).toMatchObject({ offsetBytes: 3 });
    h.clock.advance(1);
    expect(await h.core.resumable.state(t, id)).toBeNull();
    await expect(h.core.resumable.append(t, id, 3, body('def'), null)).rejects.toMatchObject({ code: 'not_found' });
  });

  // docs/api.md: an expired upload "then answers 404", to DELETE as to HEAD and PATCH.
  it('an expired upload is not found to DELETE either', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    h.clock.advance(24 * HOUR_MS);
    await expect(h.core.resumable.terminate(t, id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('terminate removes the upload and its pieces at once; again it is not_found', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 6);
    await h.core.resumable.append(t, id, 0, body('abc'), null);
    await h.core.resumable.terminate(t, id);
    expect(await h.core.resumable.state(t, id)).toBeNull();
    await expect(h.core.resumable.append(t, id, 3, body('def'), null)).rejects.toMatchObject({ code: 'not_found' });
    await expect(h.core.resumable.terminate(t, id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(h.core.artifacts.get(t, id)).rejects.toMatchObject({ code: 'artifact_not_found' });
  });

  it('terminate of a finished upload is not_found: the artifact stays (DELETE /v1/artifacts removes it)', async () => {
    const t = await h.tenant('acme');
    const id = await open(t, 3);
    await h.core.resumable.append(t, id, 0, body('abc'), null);
    await expect(h.core.resumable.terminate(t, id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(h.core.artifacts.get(t, id)).resolves.toMatchObject({ size_bytes: 3 });
  });
});
