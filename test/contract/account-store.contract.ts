import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore, OAuthTokenRow, UserRow } from '../../src/ports/account-store.js';
import type { MetadataStore, TenantRow } from '../../src/ports/metadata-store.js';

/**
 * The AccountStore contract, through the port only, run by every adapter (SQLite, PostgreSQL).
 * `makeStores` returns both ports over one empty database; the suite migrates it.
 */
export function accountStoreContract(
  name: string,
  makeStores: () => Promise<{ store: MetadataStore; accounts: AccountStore; cleanup: () => Promise<void> }>,
): void {
  const T0 = 1_800_000_000_000;
  const HOUR = 3_600_000;

  describe(`AccountStore contract: ${name}`, () => {
    let store: MetadataStore;
    let accounts: AccountStore;
    let cleanup: () => Promise<void>;
    let seq = 0;

    const tenantRow = (tenantName: string): TenantRow => ({
      id: `ten_${tenantName}`,
      name: tenantName,
      plan: 'free',
      suspended: false,
      createdAt: T0,
      storageBytes: 0,
    });
    const userRow = (email: string, tenantId: string): UserRow => ({
      id: `usr_${String(++seq).padStart(16, '0')}`,
      email,
      passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$fake',
      tenantId,
      createdAt: T0,
    });
    const token = (
      hash: string,
      kind: OAuthTokenRow['kind'],
      grantId: string,
      expiresAt = T0 + HOUR,
    ): OAuthTokenRow => ({
      hash,
      kind,
      grantId,
      resource: 'http://127.0.0.1:8080/mcp',
      createdAt: T0,
      expiresAt,
      usedAt: null,
    });

    /** A signed-up user with a grant for client `cli_a` at `tier`. */
    async function userWithGrant(email: string, tier: 'read' | 'write' | 'destroy' = 'read') {
      const tenant = tenantRow(email.split('@')[0] as string);
      const user = userRow(email, tenant.id);
      expect(await accounts.createUser(user, tenant)).toBe('created');
      const grant = await accounts.upsertGrant(
        { id: `grt_${user.id}`, tenantId: tenant.id, userId: user.id, clientId: 'cli_a', tier },
        T0,
      );
      return { tenant, user, grant };
    }

    beforeEach(async () => {
      ({ store, accounts, cleanup } = await makeStores());
      await store.migrate();
      await store.migrate();
    });
    afterEach(async () => {
      await cleanup();
    });

    it('creates a user with a new tenant in one step, and refuses a taken email or tenant name leaving nothing', async () => {
      const ada = userRow('ada@example.com', 'ten_ada');
      expect(await accounts.createUser(ada, tenantRow('ada'))).toBe('created');
      const found = await accounts.getUserByEmail('ada@example.com');
      expect(found?.user).toEqual(ada);
      expect(found?.tenant.name).toBe('ada');

      expect(await accounts.createUser(userRow('ada@example.com', 'ten_other'), tenantRow('other'))).toBe(
        'email_taken',
      );
      expect(await store.getTenantByName('other')).toBeNull();

      expect(
        await accounts.createUser(userRow('bob@example.com', 'ten_ada2'), { ...tenantRow('ada'), id: 'ten_ada2' }),
      ).toBe('tenant_name_taken');
      expect(await accounts.getUserByEmail('bob@example.com')).toBeNull();

      // A second user may join an existing tenant.
      expect(await accounts.createUser(userRow('bob@example.com', 'ten_ada'), null)).toBe('created');
      expect((await accounts.getUserByEmail('bob@example.com'))?.tenant.id).toBe('ten_ada');
      expect(await accounts.getUserByEmail('nobody@example.com')).toBeNull();
    });

    it('keeps browser sessions by hash until deleted', async () => {
      const { user } = await userWithGrant('sam@example.com');
      await accounts.createBrowserSession({ idHash: 'h1', userId: user.id, createdAt: T0, expiresAt: T0 + HOUR });
      const s = await accounts.getBrowserSession('h1');
      expect(s?.session).toEqual({ idHash: 'h1', userId: user.id, createdAt: T0, expiresAt: T0 + HOUR });
      expect(s?.user.email).toBe('sam@example.com');
      expect(s?.tenant.name).toBe('sam');
      await accounts.deleteBrowserSession('h1');
      expect(await accounts.getBrowserSession('h1')).toBeNull();
    });

    it('stores registered clients with their redirect URIs', async () => {
      const client = {
        id: 'cli_x',
        name: 'Claude',
        redirectUris: ['https://a.example/cb', 'http://127.0.0.1:3000/cb'],
        createdAt: T0,
      };
      await accounts.createClient(client);
      expect(await accounts.getClient('cli_x')).toEqual(client);
      expect(await accounts.getClient('cli_y')).toBeNull();
    });

    it('keeps one active grant per user and client: re-consent replaces the tier, revoke ends it', async () => {
      await accounts.createClient({ id: 'cli_a', name: 'Agent A', redirectUris: [], createdAt: T0 });
      const { tenant, user, grant } = await userWithGrant('kim@example.com', 'read');
      expect(grant).toMatchObject({
        tenantId: tenant.id,
        userId: user.id,
        clientId: 'cli_a',
        tier: 'read',
        revokedAt: null,
      });

      const broader = await accounts.upsertGrant(
        { id: 'grt_ignored', tenantId: tenant.id, userId: user.id, clientId: 'cli_a', tier: 'destroy' },
        T0 + 5,
      );
      expect(broader).toMatchObject({ id: grant.id, tier: 'destroy', createdAt: T0, updatedAt: T0 + 5 });
      const other = await accounts.upsertGrant(
        { id: 'grt_public', tenantId: tenant.id, userId: user.id, clientId: 'cairn-public', tier: 'write' },
        T0 + 10,
      );
      const listed = await accounts.listGrants(user.id);
      expect(listed.map((g) => [g.id, g.clientName, g.tier])).toEqual([
        [other.id, null, 'write'],
        [grant.id, 'Agent A', 'destroy'],
      ]);

      await accounts.createTokens([token('acc1', 'access', grant.id)]);
      expect(await accounts.revokeGrant('usr_someone_else', grant.id, T0 + 20)).toBe(false);
      expect(await accounts.revokeGrant(user.id, grant.id, T0 + 20)).toBe(true);
      expect(await accounts.revokeGrant(user.id, grant.id, T0 + 21)).toBe(false);
      expect(await accounts.getGrant(grant.id)).toMatchObject({ id: grant.id, revokedAt: T0 + 20 });
      expect(await accounts.getGrant('grt_unknown')).toBeNull();
      expect(await accounts.findToken('acc1', 'access')).toBeNull();
      expect((await accounts.listGrants(user.id)).map((g) => g.id)).toEqual([other.id]);

      const again = await accounts.upsertGrant(
        { id: 'grt_new', tenantId: tenant.id, userId: user.id, clientId: 'cli_a', tier: 'read' },
        T0 + 30,
      );
      expect(again.id).toBe('grt_new');
    });

    it('consumes a code once; the second use reports a reuse; concurrent uses have one winner', async () => {
      const { grant } = await userWithGrant('lee@example.com');
      const code = {
        hash: 'code1',
        grantId: grant.id,
        clientId: 'cli_a',
        redirectUri: 'http://127.0.0.1:9/cb',
        codeChallenge: 'challenge',
        resource: 'http://127.0.0.1:8080/mcp',
        createdAt: T0,
        expiresAt: T0 + 60_000,
        usedAt: null,
      };
      await accounts.createCode(code);
      expect(await accounts.consumeCode('code1', T0 + 1)).toEqual({ code: { ...code, usedAt: T0 + 1 }, reused: false });
      expect(await accounts.consumeCode('code1', T0 + 2)).toEqual({ code: { ...code, usedAt: T0 + 1 }, reused: true });
      expect(await accounts.consumeCode('nope', T0)).toBeNull();

      await accounts.createCode({ ...code, hash: 'code2' });
      const results = await Promise.all(Array.from({ length: 6 }, () => accounts.consumeCode('code2', T0 + 3)));
      expect(results.filter((r) => r && !r.reused)).toHaveLength(1);
    });

    it('finds tokens of active grants by kind, rotates refresh tokens once, and revokes a grant through its token', async () => {
      const { user, grant } = await userWithGrant('max@example.com', 'write');
      await accounts.createTokens([
        token('acc', 'access', grant.id),
        token('ref', 'refresh', grant.id, T0 + 30 * 24 * HOUR),
      ]);
      const found = await accounts.findToken('acc', 'access');
      expect(found?.token).toEqual(token('acc', 'access', grant.id));
      expect(found?.grant.tier).toBe('write');
      expect(found?.user.id).toBe(user.id);
      expect(found?.tenant.name).toBe('max');
      expect(await accounts.findToken('acc', 'refresh')).toBeNull();

      const first = await accounts.useRefreshToken('ref', T0 + 5);
      expect(first).toMatchObject({ reused: false, token: { usedAt: T0 + 5 }, grant: { id: grant.id } });
      expect(await accounts.useRefreshToken('ref', T0 + 6)).toMatchObject({ reused: true, token: { usedAt: T0 + 5 } });
      expect(await accounts.useRefreshToken('acc', T0 + 6)).toBeNull();

      await accounts.createTokens([token('ref2', 'refresh', grant.id)]);
      const racers = await Promise.all(Array.from({ length: 6 }, () => accounts.useRefreshToken('ref2', T0 + 7)));
      expect(racers.filter((r) => r && !r.reused)).toHaveLength(1);

      expect(await accounts.revokeGrantOfToken('acc', 'cli_other', T0 + 8)).toBe(false);
      expect(await accounts.findToken('acc', 'access')).not.toBeNull();
      expect(await accounts.revokeGrantOfToken('acc', 'cli_a', T0 + 8)).toBe(true);
      expect(await accounts.findToken('acc', 'access')).toBeNull();
      expect(await accounts.useRefreshToken('ref2', T0 + 9)).toBeNull();
      expect(await accounts.revokeGrantOfToken('acc', 'cli_a', T0 + 9)).toBe(false);
      expect(await accounts.listGrants(user.id)).toEqual([]);
    });

    it('purges expired sessions, codes and tokens only', async () => {
      const { user, grant } = await userWithGrant('ivy@example.com');
      await accounts.createBrowserSession({ idHash: 'old', userId: user.id, createdAt: T0, expiresAt: T0 + 10 });
      await accounts.createBrowserSession({ idHash: 'new', userId: user.id, createdAt: T0, expiresAt: T0 + HOUR });
      await accounts.createTokens([token('t-old', 'access', grant.id, T0 + 10), token('t-new', 'access', grant.id)]);
      expect(await accounts.purgeExpired(T0 + 11, 100)).toBe(2);
      expect(await accounts.getBrowserSession('old')).toBeNull();
      expect(await accounts.getBrowserSession('new')).not.toBeNull();
      expect(await accounts.findToken('t-old', 'access')).toBeNull();
      expect(await accounts.findToken('t-new', 'access')).not.toBeNull();
    });
  });
}
