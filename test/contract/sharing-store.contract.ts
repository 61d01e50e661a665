import { beforeEach, describe, expect, it } from 'vitest';
import type { LinkRow, MetadataStore, SessionLinkRow, TenantRow } from '../../src/ports/metadata-store.js';
import { DAY, HOUR, type MakeMetadataStore, metadataFixture, T0 } from './metadata-fixture.js';

/**
 * The SharingStore contract: capped download links, and pages with their takedowns.
 * Exercised through the port only, on each adapter (SQLite, PostgreSQL), from the shared fixture
 * (metadata-fixture.ts): an empty database, migrated as every start does, with tenants A and B.
 */
export function sharingStoreContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`SharingStore contract: ${name}`, () => {
    const { state, row, put, link, page } = metadataFixture(makeStore);
    let store: MetadataStore;
    let A: TenantRow;
    let B: TenantRow;
    beforeEach(() => {
      ({ store, A, B } = state);
    });

    describe('links', () => {
      it('caps unexpired links per tenant and resolves them with artifact and tenant', async () => {
        const a = await put(row(A.id));
        const first = link(a, { expiresAt: T0 + HOUR });
        expect(await store.createLink(first, 2, T0)).toBe(true);
        expect(await store.createLink(link(a), 2, T0)).toBe(true);
        expect(await store.createLink(link(a), 2, T0)).toBe(false);
        expect(await store.countActiveLinks(A.id, T0)).toBe(2);
        // At its expiry the first link no longer counts, freeing a slot.
        expect(await store.countActiveLinks(A.id, T0 + HOUR)).toBe(1);
        expect(await store.createLink(link(a), 2, T0 + HOUR)).toBe(true);
        expect(await store.getLink(first.id)).toEqual({
          link: first,
          artifact: a,
          tenant: await store.getTenant(A.id),
        });
        expect(await store.getLink('lnk_unknown')).toBeNull();
        const b = await put(row(B.id));
        expect(await store.createLink(link(b), 1, T0)).toBe(true);
      });

      it("lists an artifact's unexpired links newest first, page by page, and revokes one within its tenant only", async () => {
        const a = await put(row(A.id));
        const other = await put(row(A.id));
        const made: LinkRow[] = [];
        // Two share a creation time, so the id breaks the tie; one is expired at T0.
        for (const [createdAt, expiresAt] of [
          [T0 - 3000, T0 + DAY],
          [T0 - 2000, T0 + DAY],
          [T0 - 2000, T0 + DAY],
          [T0 - 1000, T0],
          [T0 - 500, T0 + HOUR],
        ] as const) {
          const l = link(a, { createdAt, expiresAt });
          expect(await store.createLink(l, 100, createdAt)).toBe(true);
          made.push(l);
        }
        await store.createLink(link(other), 100, T0);
        const live = made
          .filter((l) => l.expiresAt > T0)
          .sort((x, y) => y.createdAt - x.createdAt || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0));
        expect(await store.listLinks(A.id, a.id, { now: T0, limit: 10 })).toEqual(live);
        const first = await store.listLinks(A.id, a.id, { now: T0, limit: 2 });
        expect(first).toEqual(live.slice(0, 2));
        const last = first.at(-1)!;
        expect(await store.listLinks(A.id, a.id, { now: T0, limit: 2, after: [last.createdAt, last.id] })).toEqual(
          live.slice(2, 4),
        );
        // Another tenant sees none of them and cannot revoke them.
        expect(await store.listLinks(B.id, a.id, { now: T0, limit: 10 })).toEqual([]);
        const target = live[0]!;
        expect(await store.revokeLink(B.id, target.id, T0)).toBe(false);
        expect((await store.getLink(target.id))?.link).toEqual(target);
        expect(await store.revokeLink(A.id, target.id, T0)).toBe(true);
        // Kept, marked and expired at its revoke: out of the list and the count at once.
        expect((await store.getLink(target.id))?.link).toEqual({ ...target, revokedAt: T0, expiresAt: T0 });
        expect(await store.listLinks(A.id, a.id, { now: T0, limit: 10 })).toEqual(live.slice(1));
        // The other artifact's link counts too.
        expect(await store.countActiveLinks(A.id, T0)).toBe(live.length - 1 + 1);
        // Again, later: still its owner's, the first revoke's time kept; still not another tenant's.
        expect(await store.revokeLink(A.id, target.id, T0 + HOUR)).toBe(true);
        expect((await store.getLink(target.id))?.link).toMatchObject({ revokedAt: T0, expiresAt: T0 });
        expect(await store.revokeLink(B.id, target.id, T0 + HOUR)).toBe(false);
        expect(await store.revokeLink(A.id, 'lnk_unknown', T0)).toBe(false);
        // A link that expired by itself is still its owner's to revoke (its expiry stays).
        const expired = made[3]!;
        expect(await store.revokeLink(A.id, expired.id, T0 + HOUR)).toBe(true);
        expect((await store.getLink(expired.id))?.link).toEqual({ ...expired, revokedAt: T0 + HOUR });
      });
    });

    describe('session links', () => {
      let n = 0;
      const sessionLink = (tenantId: string, over: Partial<SessionLinkRow> = {}): SessionLinkRow => ({
        id: `lnk_session${String(++n).padStart(13, '0')}`,
        tenantId,
        sessionId: 'run-42',
        createdAt: T0,
        expiresAt: T0 + DAY,
        revokedAt: null,
        ...over,
      });

      it('share one cap with artifact links, resolve with their tenant, list per session and revoke within the tenant', async () => {
        const a = await put(row(A.id));
        expect(await store.createLink(link(a), 3, T0)).toBe(true);
        const first = sessionLink(A.id, { createdAt: T0 - 1000 });
        const second = sessionLink(A.id);
        expect(await store.createSessionLink(first, 3, T0)).toBe(true);
        expect(await store.createSessionLink(second, 3, T0)).toBe(true);
        // The cap counts both kinds: a fourth of either is refused.
        expect(await store.countActiveLinks(A.id, T0)).toBe(3);
        expect(await store.createSessionLink(sessionLink(A.id), 3, T0)).toBe(false);
        expect(await store.createLink(link(a), 3, T0)).toBe(false);
        expect(await store.getSessionLink(first.id)).toEqual({ link: first, tenant: await store.getTenant(A.id) });
        expect(await store.getSessionLink('lnk_unknown')).toBeNull();
        expect(await store.listSessionLinks(A.id, 'run-42', { now: T0, limit: 10 })).toEqual([second, first]);
        expect(
          await store.listSessionLinks(A.id, 'run-42', { now: T0, limit: 1, after: [second.createdAt, second.id] }),
        ).toEqual([first]);
        expect(await store.listSessionLinks(A.id, 'other', { now: T0, limit: 10 })).toEqual([]);
        expect(await store.listSessionLinks(B.id, 'run-42', { now: T0, limit: 10 })).toEqual([]);
        // Revoke: not another tenant's; its owner's, kept and marked, out of the list and the count.
        expect(await store.revokeLink(B.id, second.id, T0)).toBe(false);
        expect(await store.revokeLink(A.id, second.id, T0)).toBe(true);
        expect((await store.getSessionLink(second.id))?.link).toEqual({ ...second, revokedAt: T0, expiresAt: T0 });
        expect(await store.listSessionLinks(A.id, 'run-42', { now: T0, limit: 10 })).toEqual([first]);
        expect(await store.countActiveLinks(A.id, T0)).toBe(2);
        // Expired ones leave the list and the count; the sweeper purges them.
        expect(await store.countActiveLinks(A.id, T0 + DAY)).toBe(0);
        expect(await store.purgeDeadLinks(T0 + DAY, T0 + 1, 100)).toBeGreaterThanOrEqual(2);
        expect(await store.getSessionLink(first.id)).toBeNull();
        expect(await store.getSessionLink(second.id)).toBeNull();
      });
    });

    describe('pages', () => {
      it('keeps one page per artifact and its slug across re-publish and unpublish', async () => {
        const a = await put(row(A.id));
        const created = await store.upsertPage(page(a, { slug: 'pg_first0000000000', title: 'One' }), T0);
        expect(created).toEqual({
          ...page(a, { slug: 'pg_first0000000000', title: 'One' }),
          live: true,
          takenDownAt: null,
          createdAt: T0,
          updatedAt: T0,
        });
        const again = await store.upsertPage(
          page(a, {
            slug: 'pg_second000000000',
            title: 'Two',
            visibility: 'public',
            access: 'password',
            passwordHash: 'h',
          }),
          T0 + 1,
        );
        expect(again).toMatchObject({
          slug: 'pg_first0000000000',
          title: 'Two',
          visibility: 'public',
          access: 'password',
          passwordHash: 'h',
          live: true,
          createdAt: T0,
          updatedAt: T0 + 1,
        });
        expect(await store.getPageBySlug('pg_second000000000')).toBeNull();

        expect(await store.unpublishPage(A.id, 'pg_first0000000000', T0 + 2)).toMatchObject({
          live: false,
          updatedAt: T0 + 2,
        });
        // Unpublishing again is a no-op that still answers with the page.
        expect(await store.unpublishPage(A.id, a.id, T0 + 3)).toMatchObject({
          slug: 'pg_first0000000000',
          live: false,
          updatedAt: T0 + 2,
        });
        const back = await store.upsertPage(page(a, { slug: 'pg_third0000000000' }), T0 + 4);
        expect(back).toMatchObject({ slug: 'pg_first0000000000', live: true, title: null });

        expect(await store.unpublishPage(A.id, a.id, T0 + 5)).toMatchObject({
          slug: 'pg_first0000000000',
          live: false,
        });
        const found = await store.getPageBySlug('pg_first0000000000');
        expect(found?.page).toMatchObject({ live: false, artifactId: a.id });
        expect(found?.artifact).toEqual(a);
        expect(found?.tenant.id).toBe(A.id);
        expect(await store.getPageForArtifact(A.id, a.id)).toEqual(found?.page);
      });

      it('answers null for unknown pages', async () => {
        const a = await put(row(A.id));
        expect(await store.getPageForArtifact(A.id, a.id)).toBeNull();
        expect(await store.unpublishPage(A.id, a.id, T0)).toBeNull();
        expect(await store.unpublishPage(A.id, 'pg_nope', T0)).toBeNull();
        expect(await store.getPageBySlug('pg_nope')).toBeNull();
        expect(await store.takeDownPage('pg_nope', T0)).toBeNull();
        expect(await store.restorePage('pg_nope', T0)).toBeNull();
      });

      it('a takedown sticks: publish leaves the page untouched until it is restored', async () => {
        const a = await put(row(B.id));
        const other = await put(row(B.id));
        const live = await store.upsertPage(page(a, { title: 'Before' }), T0);
        const bystander = await store.upsertPage(page(other), T0);
        // Any tenant's page, by slug alone.
        const down = await store.takeDownPage(live.slug, T0 + 1);
        expect(down).toEqual({ ...live, live: false, takenDownAt: T0 + 1, updatedAt: T0 + 1 });
        // Again: still down, the first takedown time is kept.
        expect(await store.takeDownPage(live.slug, T0 + 2)).toMatchObject({ live: false, takenDownAt: T0 + 1 });

        const refused = await store.upsertPage(
          page(a, { slug: 'pg_ignored00000000', title: 'After', access: 'password', passwordHash: 'h' }),
          T0 + 3,
        );
        expect(refused).toMatchObject({ slug: live.slug, title: 'Before', access: 'none', passwordHash: null });
        expect(refused).toMatchObject({ live: false, takenDownAt: T0 + 1 });
        expect((await store.getPageBySlug(live.slug))?.page).toEqual(refused);
        // The owner may still unpublish (a no-op) and other pages are unaffected.
        expect(await store.unpublishPage(B.id, a.id, T0 + 4)).toMatchObject({ live: false, takenDownAt: T0 + 1 });
        expect((await store.getPageBySlug(bystander.slug))?.page).toEqual(bystander);

        // Restore lifts the mark but does not publish; the owner's next publish does.
        const restored = await store.restorePage(live.slug, T0 + 5);
        expect(restored).toMatchObject({ live: false, takenDownAt: null, updatedAt: T0 + 5 });
        expect(await store.restorePage(live.slug, T0 + 6)).toMatchObject({ takenDownAt: null, updatedAt: T0 + 5 });
        const back = await store.upsertPage(page(a, { title: 'After' }), T0 + 7);
        expect(back).toMatchObject({ slug: live.slug, title: 'After', live: true, takenDownAt: null });
      });
    });
  });
}
