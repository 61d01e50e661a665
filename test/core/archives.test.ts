import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newArtifactId } from '../../src/core/ids.js';
import { LIMITS } from '../../src/core/plans.js';
import { UrlSigner } from '../../src/core/signing.js';
import type { Caller } from '../../src/core/tenants.js';
import { type CoreHarness, codeOf, coreHarness, DAY_MS, HOUR_MS } from './harness.js';

/**
 * Archive plans in the core: the bounds an archive is refused by before its first byte (10,000
 * artifacts, the plan's storage), what it holds (live artifacts, oldest first, of this tenant),
 * and the sealed token of its signed URL.
 */
let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

/** `n` tiny artifacts of one session recorded straight in the store (all the same 1-byte blob). */
async function many(caller: Caller, n: number, sessionId: string): Promise<void> {
  const hash = createHash('sha256').update('x').digest('hex');
  const { artifactStore } = h.core.deps;
  const now = h.clock.now();
  await artifactStore.pinBlob(caller.tenant.id, hash, 1, now, { owner: 'many', until: now + 60_000 });
  for (let i = 0; i < n; i++) {
    await artifactStore.insertArtifact({
      artifact: {
        id: newArtifactId(),
        tenantId: caller.tenant.id,
        filename: 'x.txt',
        contentType: 'text/plain',
        sizeBytes: 1,
        contentHash: hash,
        metadata: {},
        sessionId,
        agentId: null,
        createdAt: now + i,
        expiresAt: now + 30 * DAY_MS,
        deletedAt: null,
        status: 'active',
      },
      storageLimitBytes: Number.MAX_SAFE_INTEGER,
    });
  }
}

describe('archive bounds', () => {
  it('holds 10,000 artifacts and refuses 10,001 with invalid_request, before any byte', async () => {
    const t = await h.tenant('many');
    await many(t, LIMITS.archiveArtifacts, 'big-run');
    const url = await h.core.archives.sessionArchiveUrl(t, 'big-run', {});
    expect(url.artifact_count).toBe(10_000);
    const plan = await h.core.archives.plan(t.tenant, 'zip', { filters: { session_id: 'big-run' } });
    // Every name distinct: the first x.txt keeps its name, the rest carry their ids.
    expect(new Set(plan.entries.map((e) => e.name)).size).toBe(10_000);
    expect(plan.entries[0]?.name).toBe('x.txt');
    await many(t, 1, 'big-run');
    const refused = h.core.archives.sessionArchiveUrl(t, 'big-run', {});
    await expect(refused).rejects.toMatchObject({ code: 'invalid_request', message: /more than 10,000 artifacts/ });
  }, 120_000);

  it('refuses an archive larger than the plan’s storage with file_too_large (deduplicated bytes count each time)', async () => {
    const t = await h.tenant('big', 'free');
    // The same 600 MB blob twice costs 600 MB of storage but would be 1.2 GB of archive.
    await h.fill(t, 600_000_000, 'same');
    expect(await h.core.archives.listArchiveUrl(t, {})).toMatchObject({ artifact_count: 1, size_bytes: 600_000_000 });
    await h.fill(t, 600_000_000, 'same');
    await expect(h.core.archives.listArchiveUrl(t, {})).rejects.toMatchObject({
      code: 'file_too_large',
      message: /1\.2 GB, more than the free plan's storage \(1\.0 GB\)/,
    });
    // A narrower filter fits again.
    const [first] = (await h.core.artifacts.list(t, {})).artifacts;
    const created = new Date(Date.parse(first?.created_at as string) - 1).toISOString();
    expect(await codeOf(h.core.archives.listArchiveUrl(t, { created_after: created, filename: 'nope' }))).toBe('ok');
  });

  it('holds the live artifacts of the caller’s tenant only, oldest first', async () => {
    const alice = await h.tenant('alice');
    const bob = await h.tenant('bob');
    const first = await h.upload(alice, 'one', { filename: 'a.txt', sessionId: 'run' });
    h.clock.advance(1000);
    const second = await h.upload(alice, 'two', { filename: 'a.txt', sessionId: 'run' });
    h.clock.advance(1000);
    const deleted = await h.upload(alice, 'three', { filename: 'c.txt', sessionId: 'run' });
    await h.core.artifacts.softDelete(alice, deleted.artifact_id);
    await h.upload(alice, 'four', { filename: 'd.txt', sessionId: 'run', ttl: '1h' });
    await h.upload(bob, 'bob', { filename: 'b.txt', sessionId: 'run' });
    h.clock.advance(HOUR_MS);
    const plan = await h.core.archives.plan(alice.tenant, 'tar.gz', { filters: { session_id: 'run' } });
    expect(plan.entries.map((e) => [e.name, e.artifact.id])).toEqual([
      ['a.txt', first.artifact_id],
      [`a.${second.artifact_id}.txt`, second.artifact_id],
    ]);
    expect(await codeOf(h.core.archives.sessionArchiveUrl(bob, 'run', {}))).toBe('ok');
    expect(await codeOf(h.core.archives.sessionArchiveUrl(await h.tenant('carol'), 'run', {}))).toBe(
      'session_not_found',
    );
  });
});

describe('sealed archive tokens', () => {
  const signer = new UrlSigner('a secret of the server');
  const now = Date.UTC(2026, 10, 1);
  const exp = now / 1000 + 3600;

  it('open only with the same secret and purpose, unaltered, before expiry', () => {
    const token = signer.seal('archive', { t: 'tenant-1', q: { session_id: 'run' } }, exp);
    expect(signer.open('archive', token, now)).toEqual({ t: 'tenant-1', q: { session_id: 'run' } });
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('tenant-1');
    expect(signer.open('download', token, now)).toBeNull();
    expect(new UrlSigner('another secret').open('archive', token, now)).toBeNull();
    expect(signer.open('archive', token, exp * 1000)).toBeNull();
    for (let i = 0; i < token.length; i += 7) {
      const altered = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(signer.open('archive', altered, now)).toBeNull();
    }
    expect(signer.open('archive', 'short', now)).toBeNull();
  });
});
