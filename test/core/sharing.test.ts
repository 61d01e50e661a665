import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/core/tenants.js';
import { type CoreHarness, codeOf, coreHarness, DAY_MS, HOUR_MS, iso, START } from './harness.js';

/**
 * Handing bytes to someone without a key, in the core (API.md and docs/api.md: download-url, the
 * V1.1 batch, links): signed private URLs (one hour, checked by resolveSigned as the content
 * origin does), batch URLs with per-id errors, and share links (lifetime, the plan's cap, revoke,
 * resolveLink). test/e2e keeps the bytes, headers and 404s the content origin serves.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const MISSING_LINK = 'lnk_00000000000000000000';

/** The signed URL's parts, as the content origin's `/d/:id` route reads them. */
function signedParts(url: string): { id: string; exp: string; sig: string } {
  const u = new URL(url);
  return {
    id: u.pathname.split('/').at(-1) as string,
    exp: u.searchParams.get('exp') as string,
    sig: u.searchParams.get('sig') as string,
  };
}

async function resolveUrl(url: string) {
  const { id, exp, sig } = signedParts(url);
  return h.core.sharing.resolveSigned(id, exp, sig);
}

describe('download URLs', () => {
  it('answer {download_url, expires_in: 3600, filename, content_type, size_bytes}, on the content origin', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'hello', { filename: 'a.json' });
    const url = await h.core.sharing.downloadUrl(t, rec.artifact_id);
    expect(url).toEqual({
      download_url: expect.stringMatching(new RegExp(`^${h.core.deps.origins.content}/d/${rec.artifact_id}\\?exp=`)),
      expires_in: 3600,
      filename: 'a.json',
      content_type: 'application/json',
      size_bytes: 5,
    });
    expect(Number(signedParts(url.download_url).exp)).toBe(START / 1000 + 3600);
  });

  it('resolve to the artifact for one hour, and not once it is over', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'hello');
    const { download_url } = await h.core.sharing.downloadUrl(t, rec.artifact_id);
    expect((await resolveUrl(download_url))?.artifact.id).toBe(rec.artifact_id);
    h.clock.advance(HOUR_MS - 1);
    expect(await resolveUrl(download_url)).not.toBeNull();
    h.clock.advance(1);
    expect(await resolveUrl(download_url)).toBeNull();
  });

  it('do not resolve when forged: another signature, another id, a later exp, or parts missing', async () => {
    const t = await h.tenant('acme');
    const a = await h.upload(t, 'a');
    const b = await h.upload(t, 'b');
    const { id, exp, sig } = signedParts((await h.core.sharing.downloadUrl(t, a.artifact_id)).download_url);
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    expect(await h.core.sharing.resolveSigned(id, exp, flipped)).toBeNull();
    expect(await h.core.sharing.resolveSigned(b.artifact_id, exp, sig)).toBeNull();
    expect(await h.core.sharing.resolveSigned(id, String(Number(exp) + 3600), sig)).toBeNull();
    expect(await h.core.sharing.resolveSigned(id, undefined, sig)).toBeNull();
    expect(await h.core.sharing.resolveSigned(id, exp, undefined)).toBeNull();
    expect(await h.core.sharing.resolveSigned(id, `${exp}.0`, sig)).toBeNull();
    expect(await h.core.sharing.resolveSigned(id, exp, sig)).not.toBeNull();
  });

  it('stop resolving the moment the artifact is deleted or expires, or its tenant is suspended', async () => {
    const t = await h.tenant('acme');
    const deleted = await h.upload(t, 'd');
    const expiring = await h.upload(t, 'e', { ttl: '30m' });
    const kept = await h.upload(t, 'k');
    const urls = await Promise.all(
      [deleted, expiring, kept].map(async (r) => (await h.core.sharing.downloadUrl(t, r.artifact_id)).download_url),
    );
    await h.core.artifacts.softDelete(t, deleted.artifact_id);
    expect(await resolveUrl(urls[0] as string)).toBeNull();
    h.clock.advance(30 * 60_000 - 1);
    expect(await resolveUrl(urls[1] as string)).not.toBeNull();
    h.clock.advance(1);
    // The URL has half an hour left; the artifact has none.
    expect(await resolveUrl(urls[1] as string)).toBeNull();
    expect(await resolveUrl(urls[2] as string)).not.toBeNull();
    await h.core.tenants.setSuspended(t.tenant, true);
    expect(await resolveUrl(urls[2] as string)).toBeNull();
  });

  it('are refused for what cannot be read: 404 unknown or another tenant’s, 410 deleted or expired', async () => {
    const t = await h.tenant('acme');
    for (const { why, id, code } of await h.unreadable(t)) {
      expect(await codeOf(h.core.sharing.downloadUrl(t, id)), why).toBe(code);
    }
  });
});

describe('batch download URLs (V1.1)', () => {
  it('answer one item per id in request order, each error the one its own call would have given', async () => {
    const t = await h.tenant('acme');
    const ok = await h.upload(t, 'ok', { filename: 'ok.txt', ttl: '2h' });
    const gone = await h.unreadable(t);
    const url = { id: ok.artifact_id, code: 'url' };
    // An expired one first, a repeated id, and every kind of refusal between.
    const order = [gone[3]!, url, ...gone.slice(0, 3), url];
    const { download_urls } = await h.core.sharing.downloadUrls(
      t,
      order.map((o) => o.id),
    );
    expect(download_urls.map((d) => d.artifact_id)).toEqual(order.map((o) => o.id));
    expect(download_urls.map((d) => ('error' in d ? d.error.code : 'url'))).toEqual(order.map((o) => o.code));
    expect(download_urls[0]).toMatchObject({ error: { status: 410 } });
    expect(download_urls[1]).toMatchObject({ expires_in: 3600, filename: 'ok.txt', size_bytes: 2 });
    const single = await h.core.sharing.downloadUrl(t, ok.artifact_id);
    expect(download_urls[1]).toEqual({ artifact_id: ok.artifact_id, ...single });
  });

  it('take 1 to 20 artifact ids; none, 21, a malformed id or a non-array is invalid_request', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'x');
    const twenty = Array.from({ length: 20 }, () => rec.artifact_id);
    expect((await h.core.sharing.downloadUrls(t, twenty)).download_urls).toHaveLength(20);
    for (const bad of [[], [...twenty, rec.artifact_id], [rec.artifact_id, 'report.md'], rec.artifact_id, null, [7]]) {
      await expect(h.core.sharing.downloadUrls(t, bad)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });
});

describe('links', () => {
  it('live 7 days by default, with the record {link_id, url, artifact_id, expires_at, created_at}', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'x');
    const link = await h.core.sharing.createLink(t, rec.artifact_id);
    expect(link).toEqual({
      link_id: expect.stringMatching(/^lnk_[A-Za-z0-9]{20}$/),
      url: `${h.core.deps.origins.download}/${link.link_id}`,
      artifact_id: rec.artifact_id,
      expires_at: iso(START + 7 * DAY_MS),
      created_at: iso(START),
    });
  });

  it('take expires_in seconds from 1 to 30 days, or ttl as a duration up to 30d, but not both', async () => {
    const t = await h.tenant('acme');
    const id = (await h.upload(t, 'x')).artifact_id;
    const expiresAt = async (lifetime: { expiresIn?: unknown; ttl?: unknown }) =>
      (await h.core.sharing.createLink(t, id, lifetime)).expires_at;
    expect(await expiresAt({ expiresIn: 1 })).toBe(iso(START + 1000));
    expect(await expiresAt({ expiresIn: 2_592_000 })).toBe(iso(START + 30 * DAY_MS));
    expect(await expiresAt({ ttl: '3d' })).toBe(iso(START + 3 * DAY_MS));
    expect(await expiresAt({ ttl: '30d' })).toBe(iso(START + 30 * DAY_MS));
    expect(await expiresAt({ expiresIn: null })).toBe(iso(START + 7 * DAY_MS));
    const refused = [
      { expiresIn: 0 },
      { expiresIn: 2_592_001 },
      { expiresIn: 1.5 },
      { expiresIn: '3600' },
      { ttl: '31d' },
      { ttl: '721h' },
      { ttl: 'never' },
      { ttl: 3600 },
      { expiresIn: 60, ttl: '1h' },
    ];
    for (const lifetime of refused) {
      await expect(h.core.sharing.createLink(t, id, lifetime)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('resolve until they expire, and not at expires_at', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'x');
    const link = await h.core.sharing.createLink(t, rec.artifact_id, { expiresIn: 60 });
    expect((await h.core.sharing.resolveLink(link.link_id))?.artifact.id).toBe(rec.artifact_id);
    h.clock.advance(59_999);
    expect(await h.core.sharing.resolveLink(link.link_id)).not.toBeNull();
    h.clock.advance(1);
    expect(await h.core.sharing.resolveLink(link.link_id)).toBeNull();
  });

  it('die with their artifact: deleted or expired, before any sweeper runs; and with a suspended tenant', async () => {
    const t = await h.tenant('acme');
    const deleted = await h.upload(t, 'd');
    const expiring = await h.upload(t, 'e', { ttl: '1h' });
    const kept = await h.upload(t, 'k');
    const [d, e, k] = await Promise.all(
      [deleted, expiring, kept].map((r) => h.core.sharing.createLink(t, r.artifact_id)),
    );
    await h.core.artifacts.softDelete(t, deleted.artifact_id);
    expect(await h.core.sharing.resolveLink(d!.link_id)).toBeNull();
    h.clock.advance(HOUR_MS);
    expect(await h.core.sharing.resolveLink(e!.link_id)).toBeNull();
    expect(await h.core.sharing.resolveLink(k!.link_id)).not.toBeNull();
    await h.core.tenants.setSuspended(t.tenant, true);
    expect(await h.core.sharing.resolveLink(k!.link_id)).toBeNull();
  });

  it('of an artifact that cannot be read are refused like its get: 404, 410 deleted, 410 expired', async () => {
    const t = await h.tenant('acme');
    for (const { why, id, code } of await h.unreadable(t)) {
      expect(await codeOf(h.core.sharing.createLink(t, id)), why).toBe(code);
    }
    expect(await codeOf(h.core.sharing.createLink(t, 'report.md'))).toBe('invalid_request');
  });

  it('resolveLink of a malformed or unknown id is null', async () => {
    expect(await h.core.sharing.resolveLink('lnk_short')).toBeNull();
    expect(await h.core.sharing.resolveLink(MISSING_LINK)).toBeNull();
    expect(await h.core.sharing.resolveLink('art_0000000000000000')).toBeNull();
  });
});

describe('the active link cap', () => {
  /** `n` links on one artifact. */
  async function links(t: Caller, id: string, n: number) {
    const made = [];
    for (let i = 0; i < n; i++) made.push(await h.core.sharing.createLink(t, id));
    return made;
  }

  it('is 100 on Free: the 101st is quota_exceeded with upgrade_url, and nothing is created', async () => {
    const t = await h.tenant('free', 'free');
    const id = (await h.upload(t, 'x')).artifact_id;
    await links(t, id, 100);
    await expect(h.core.sharing.createLink(t, id)).rejects.toMatchObject({
      code: 'quota_exceeded',
      status: 403,
      extras: { upgradeUrl: expect.any(String) },
    });
    expect((await h.core.tenants.whoami(t)).active_links).toBe(100);
  });

  it('is 1,000 on Pro', async () => {
    const t = await h.tenant('pro', 'pro');
    const id = (await h.upload(t, 'x')).artifact_id;
    await links(t, id, 1_000);
    await expect(h.core.sharing.createLink(t, id)).rejects.toMatchObject({ code: 'quota_exceeded' });
  });

  it('counts live links only: a revoked link, an expired link and the links of a deleted or expired artifact free their place', async () => {
    const t = await h.tenant('free', 'free');
    const id = (await h.upload(t, 'x')).artifact_id;
    const deleted = (await h.upload(t, 'd')).artifact_id;
    const expiring = (await h.upload(t, 'e', { ttl: '2h' })).artifact_id;
    const made = await links(t, id, 96);
    await h.core.sharing.createLink(t, id, { expiresIn: 60 });
    await h.core.sharing.createLink(t, deleted);
    await h.core.sharing.createLink(t, expiring);
    await h.core.sharing.createLink(t, id);
    await expect(h.core.sharing.createLink(t, id)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await h.core.sharing.revokeLink(t, made[0]!.link_id);
    await h.core.sharing.createLink(t, id);
    h.clock.advance(60_000);
    await h.core.sharing.createLink(t, id);
    await h.core.artifacts.softDelete(t, deleted);
    await h.core.sharing.createLink(t, id);
    h.clock.advance(2 * HOUR_MS);
    await h.core.sharing.createLink(t, id);
    await expect(h.core.sharing.createLink(t, id)).rejects.toMatchObject({ code: 'quota_exceeded' });
  });

  it('is per tenant', async () => {
    const a = await h.tenant('a', 'free');
    const b = await h.tenant('b', 'free');
    await links(a, (await h.upload(a, 'x')).artifact_id, 100);
    await expect(h.core.sharing.createLink(b, (await h.upload(b, 'x')).artifact_id)).resolves.toMatchObject({
      link_id: expect.any(String),
    });
  });
});

describe('revoking a link', () => {
  it('answers {link_id, revoked: true}, stops the link at once, and again answers the same', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'x');
    const link = await h.core.sharing.createLink(t, rec.artifact_id);
    expect(await h.core.sharing.revokeLink(t, link.link_id)).toEqual({ link_id: link.link_id, revoked: true });
    expect(await h.core.sharing.resolveLink(link.link_id)).toBeNull();
    h.clock.advance(HOUR_MS);
    expect(await h.core.sharing.revokeLink(t, link.link_id)).toEqual({ link_id: link.link_id, revoked: true });
    expect(await h.core.sharing.resolveLink(link.link_id)).toBeNull();
  });

  it('of another tenant’s link is artifact_not_found and leaves the link working', async () => {
    const owner = await h.tenant('owner');
    const other = await h.tenant('other');
    const link = await h.core.sharing.createLink(owner, (await h.upload(owner, 'x')).artifact_id);
    await expect(h.core.sharing.revokeLink(other, link.link_id)).rejects.toMatchObject({
      code: 'artifact_not_found',
      status: 404,
    });
    expect(await h.core.sharing.resolveLink(link.link_id)).not.toBeNull();
  });

  it('of an unknown id is artifact_not_found; of a malformed one invalid_request', async () => {
    const t = await h.tenant('acme');
    await expect(h.core.sharing.revokeLink(t, MISSING_LINK)).rejects.toMatchObject({ code: 'artifact_not_found' });
    await expect(h.core.sharing.revokeLink(t, 'lnk_nope')).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('of a link that went with its deleted artifact is artifact_not_found', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'x');
    const link = await h.core.sharing.createLink(t, rec.artifact_id);
    await h.core.artifacts.softDelete(t, rec.artifact_id);
    await expect(h.core.sharing.revokeLink(t, link.link_id)).rejects.toMatchObject({ code: 'artifact_not_found' });
  });
});

describe('listing an artifact’s links', () => {
  it('shows its live links newest first, a page at a time; revoked and expired ones are left out', async () => {
    const t = await h.tenant('acme');
    const id = (await h.upload(t, 'x')).artifact_id;
    const other = (await h.upload(t, 'y')).artifact_id;
    const made = [];
    for (let i = 0; i < 4; i++) {
      made.push(await h.core.sharing.createLink(t, id));
      h.clock.advance(1);
    }
    const short = await h.core.sharing.createLink(t, id, { expiresIn: 1 });
    await h.core.sharing.createLink(t, other);
    await h.core.sharing.revokeLink(t, made[1]!.link_id);
    h.clock.advance(1000);
    const first = await h.core.sharing.listLinks(t, id, { limit: '2' });
    const second = await h.core.sharing.listLinks(t, id, { limit: '2', cursor: first.next_cursor as string });
    const shown = [...first.links, ...second.links].map((l) => l.link_id);
    expect(shown).toEqual([made[3]!.link_id, made[2]!.link_id, made[0]!.link_id]);
    expect(shown).not.toContain(short.link_id);
    expect(second).toMatchObject({ next_cursor: null, has_more: false });
    expect(first.links[0]).toEqual({
      link_id: made[3]!.link_id,
      url: made[3]!.url,
      expires_at: made[3]!.expires_at,
      created_at: made[3]!.created_at,
    });
  });

  it('of an artifact that cannot be read is refused like its get: 404, 410 deleted, 410 expired', async () => {
    const t = await h.tenant('acme');
    for (const { why, id, code } of await h.unreadable(t)) {
      expect(await codeOf(h.core.sharing.listLinks(t, id, {})), why).toBe(code);
    }
  });
});
