import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { listenerApplicationName } from '../../src/adapters/postgres/credentials-watch.js';
import { POSTGRES } from '../../src/adapters/postgres/dialect.js';
import { migratePostgres, PostgresMetadataStore } from '../../src/adapters/postgres/index.js';
import * as lists from '../../src/adapters/sql/list-queries.js';
import { numberedPlaceholders, type SqlDriver } from '../../src/adapters/sql/runner.js';
import { MIGRATIONS } from '../../src/adapters/sql/schema.js';
import type {
  ArtifactQuery,
  ArtifactRow,
  InsertArtifactResult,
  SessionQuery,
  TenantRow,
} from '../../src/ports/metadata-store.js';
import { accountStoreContract } from '../contract/account-store.contract.js';
import { PIN_WRITER } from '../contract/metadata-fixture.js';
import { metadataStoreContracts } from '../contract/metadata-store.contracts.js';
import { resumableUploadStoreContract } from '../contract/resumable-upload-store.contract.js';
import { postgresUnavailable } from '../helpers/postgres.js';

const url = process.env.CAIRN_TEST_DATABASE_URL;
/** The list statements as PostgreSQL gets them. */
const asPostgres = ({ sql, params }: { sql: string; params: unknown[] }) => ({
  text: numberedPlaceholders(sql),
  values: params,
});
const buildArtifactListQuery = (tenantId: string, q: ArtifactQuery) =>
  asPostgres(lists.buildArtifactListQuery(POSTGRES, tenantId, q));
const buildSessionListQuery = (tenantId: string, q: SessionQuery) =>
  asPostgres(lists.buildSessionListQuery(POSTGRES, tenantId, q));

const reason = await postgresUnavailable(url);
if (reason && !process.env.CI) {
  console.warn(
    `\n!!! SKIPPING the PostgreSQL adapter tests: ${reason}.\n!!! CI runs them; start PostgreSQL to run them here.\n`,
  );
}

/** A random schema per test: many tests (and files) share one database without seeing each other. */
const schemaName = () => `cairn_test_${randomBytes(6).toString('hex')}`;

async function dropSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await admin.end();
  }
}

if (reason && process.env.CI) {
  describe('PostgresMetadataStore', () => {
    beforeAll(() => {
      throw new Error(`CI must run the PostgreSQL adapter tests, but ${reason}.`);
    });
    it('needs PostgreSQL', () => {});
  });
} else {
  describe.skipIf(reason !== null)('PostgresMetadataStore', () => {
    metadataStoreContracts('postgres', async () => {
      const schema = schemaName();
      const store = new PostgresMetadataStore({ connectionString: url!, schema });
      return {
        store,
        openPeer: () => new PostgresMetadataStore({ connectionString: url!, schema }),
        cleanup: async () => {
          await store.close();
          await dropSchema(schema);
        },
      };
    });

    accountStoreContract('postgres', async () => {
      const schema = schemaName();
      const store = new PostgresMetadataStore({ connectionString: url!, schema });
      return {
        store,
        accounts: store.accounts,
        cleanup: async () => {
          await store.close();
          await dropSchema(schema);
        },
      };
    });

    resumableUploadStoreContract('postgres', async () => {
      const schema = schemaName();
      const store = new PostgresMetadataStore({ connectionString: url!, schema });
      return {
        store,
        resumables: store.resumables,
        openPeer: async () => {
          const peer = new PostgresMetadataStore({ connectionString: url!, schema });
          return { resumables: peer.resumables, close: () => peer.close() };
        },
        cleanup: async () => {
          await store.close();
          await dropSchema(schema);
        },
      };
    });

    describe('across instances', () => {
      let schema: string;
      let stores: PostgresMetadataStore[];
      const open = () => {
        const s = new PostgresMetadataStore({ connectionString: url!, schema });
        stores.push(s);
        return s;
      };

      beforeEach(() => {
        schema = schemaName();
        stores = [];
      });
      afterEach(async () => {
        await Promise.all(stores.map((s) => s.close()));
        await dropSchema(schema);
      });

      it('caches no key lookup while its change listener is down, and moves its epoch when it is back', async () => {
        const a = open();
        await a.migrate();
        const epochOf = async (want: (e: number | null) => boolean) => {
          for (let i = 0; i < 200; i++) {
            const e = a.credentialsEpoch();
            if (want(e)) return e;
            await new Promise((r) => setTimeout(r, 25));
          }
          throw new Error('credentialsEpoch never got there');
        };
        const before = await epochOf((e) => e !== null);
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          const { rows } = await admin.query(
            'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
            [listenerApplicationName(schema)],
          );
          expect(rows).toEqual([{ ok: true }]);
        } finally {
          await admin.end();
        }
        // Down: a change now would go unheard, so nothing may be cached...
        await epochOf((e) => e === null);
        // ...and once it listens again, whatever was cached before no longer answers.
        const after = await epochOf((e) => e !== null);
        expect(after).not.toBe(before);
      });

      it('migrates once when several instances start together', async () => {
        const [a, b, c] = [open(), open(), open()];
        await Promise.all([a.migrate(), b.migrate(), c.migrate(), migratePostgres({ connectionString: url!, schema })]);
        expect(await migratePostgres({ connectionString: url!, schema })).toEqual({
          from: MIGRATIONS.length,
          to: MIGRATIONS.length,
        });
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          const { rows } = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
          expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
        } finally {
          await admin.end();
        }
        expect(await a.getOrSetSetting('secret', 'from-a')).toBe('from-a');
        expect(await b.getOrSetSetting('secret', 'from-b')).toBe('from-a');
      });

      it('a starter waits out another instance’s long migration, beyond its own statement bound', async () => {
        const bounded = new PostgresMetadataStore({ connectionString: url!, schema, statementTimeoutMs: 100 });
        stores.push(bounded);
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          // Another instance migrating: it holds the schema's migration lock for 2.6 s, past both
          // the server's bound (100 ms) and pg's client-side one (the bound + 2 s).
          await admin.query('BEGIN');
          await admin.query("SELECT pg_advisory_xact_lock(hashtext('cairn.migrate:' || $1::text))", [schema]);
          const migrating = bounded.migrate();
          await new Promise((r) => setTimeout(r, 2_600));
          await admin.query('COMMIT');
          expect(await migrating).toEqual({ from: 0, to: MIGRATIONS.length });
          // Requests keep their bound.
          const sql = (bounded as unknown as { sql: SqlDriver }).sql;
          await expect(sql.one('SELECT pg_sleep(0.5) AS slept')).rejects.toThrow(/statement timeout/);
        } finally {
          await admin.end();
        }
      });

      describe('with two instances on one schema', () => {
        let a: PostgresMetadataStore;
        let b: PostgresMetadataStore;
        let tenant: TenantRow;
        const T0 = 1_800_000_000_000;
        let seq = 0;
        const sha = (s: string) => createHash('sha256').update(s).digest('hex');
        const row = (over: Partial<ArtifactRow> = {}): ArtifactRow => ({
          id: `art_${String(++seq).padStart(16, '0')}`,
          tenantId: tenant.id,
          filename: 'f.txt',
          contentType: 'text/plain',
          sizeBytes: 10,
          contentHash: sha('bytes'),
          metadata: {},
          sessionId: null,
          agentId: null,
          createdAt: T0,
          expiresAt: null,
          deletedAt: null,
          status: 'active',
          ...over,
        });

        beforeEach(async () => {
          a = open();
          b = open();
          await Promise.all([a.migrate(), b.migrate()]);
          tenant = await a.createTenant({
            id: 'ten_x',
            name: 'x',
            plan: 'free',
            suspended: false,
            createdAt: T0,
            storageBytes: 0,
          });
        });

        it('statements an instance has prepared survive a newer instance adding columns (rolling upgrade)', async () => {
          const art = row({ sessionId: 's', metadata: { k: 'v' } });
          await a.pinBlob(tenant.id, art.contentHash, art.sizeBytes, T0, PIN_WRITER);
          await a.insertArtifact({ artifact: art, storageLimitBytes: 1_000 });
          const reads = async () => {
            // Several rounds, so that every pooled connection has prepared them.
            for (let i = 0; i < 12; i++) {
              await Promise.all([
                a.getArtifactWithPage(tenant.id, art.id),
                a.getArtifactWithPage(tenant.id, art.id), // with the one before: the batched statement
                a.listArtifacts(tenant.id, { now: T0, limit: 10 }),
                a.listArtifacts(tenant.id, { now: T0, limit: 10, metadata: [{ key: 'k', value: 'v' }] }),
                a.listSessions(tenant.id, { limit: 10 }),
                a.getSession(tenant.id, 's'),
                a.getTenant(tenant.id),
              ]);
            }
          };
          await reads();
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          try {
            for (const table of ['artifacts', 'sessions', 'tenants', 'pages']) {
              await admin.query(`ALTER TABLE ${schema}.${table} ADD COLUMN later_feature integer`);
            }
          } finally {
            await admin.end();
          }
          await reads();
          expect((await a.getArtifactWithPage(tenant.id, art.id))?.artifact).toEqual(art);
        });

        it('answers the artifact reads of one turn with one query', async () => {
          const arts = [row(), row({ metadata: { k: 'v' } }), row()];
          await a.pinBlob(tenant.id, sha('bytes'), 10, T0, PIN_WRITER);
          for (const art of arts) await a.insertArtifact({ artifact: art, storageLimitBytes: 1_000 });
          // Watching the real pool (not replacing it): how many statements reach PostgreSQL.
          const pool = (a as unknown as { db: { pool: pg.Pool } }).db.pool;
          const query = vi.spyOn(pool, 'query');
          try {
            const ids = [arts[2]!.id, 'art_missing', arts[0]!.id, arts[1]!.id, arts[0]!.id];
            const found = await Promise.all(ids.map((id) => a.getArtifactWithPage(tenant.id, id)));
            expect(found.map((f) => f?.artifact)).toEqual([arts[2], undefined, arts[0], arts[1], arts[0]]);
            expect(query).toHaveBeenCalledTimes(1);
            // A read alone in its turn keeps the one-key statement.
            expect((await a.getArtifactWithPage(tenant.id, arts[1]!.id))?.artifact).toEqual(arts[1]);
            expect(query).toHaveBeenCalledTimes(2);
            const statements = query.mock.calls.map(([config]) => (config as unknown as pg.QueryConfig).text);
            // The turn's keys travel as array parameters; the lone read binds its one key.
            expect(statements[0]).toMatch(/= ANY\(/);
            expect(statements[1]).not.toMatch(/= ANY\(/);
          } finally {
            query.mockRestore();
          }
        });

        it('one idempotency key raced from two pools yields one artifact', async () => {
          for (let round = 0; round < 5; round++) {
            const key = `race-${round}`;
            const candidates = Array.from({ length: 8 }, () => row());
            await a.pinBlob(tenant.id, sha('bytes'), 10, T0, PIN_WRITER);
            const results: InsertArtifactResult[] = await Promise.all(
              candidates.map((artifact, i) =>
                (i % 2 === 0 ? a : b).insertArtifact({
                  artifact,
                  storageLimitBytes: 1_000,
                  idempotency: { key, notBefore: T0 - 1, response: { status: 201, body: artifact.id } },
                }),
              ),
            );
            const created = results.filter((r) => r.kind === 'created');
            expect(created).toHaveLength(1);
            const winner = (created[0] as { artifact: ArtifactRow }).artifact.id;
            for (const r of results) if (r.kind === 'replay') expect(r.response.body).toBe(winner);
          }
          expect(await b.listArtifacts(tenant.id, { now: T0, limit: 100 })).toHaveLength(5);
          // Five artifacts share one blob: its bytes count once.
          expect((await b.getTenant(tenant.id))!.storageBytes).toBe(10);
        });

        it('never passes the storage limit when distinct blobs race from two pools', async () => {
          const rows = Array.from({ length: 10 }, (_, i) => row({ contentHash: sha(`blob-${i}`), sizeBytes: 100 }));
          for (const r of rows) await a.pinBlob(tenant.id, r.contentHash, r.sizeBytes, T0, PIN_WRITER);
          const results = await Promise.allSettled(
            rows.map((artifact, i) => (i % 2 ? a : b).insertArtifact({ artifact, storageLimitBytes: 450 })),
          );
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
          for (const r of results) {
            if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'quota_exceeded' });
          }
          expect((await a.getTenant(tenant.id))!.storageBytes).toBe(400);
        });

        it('caps links, keys and tenant names under races from two pools', async () => {
          const art = row();
          await a.pinBlob(tenant.id, art.contentHash, art.sizeBytes, T0, PIN_WRITER);
          await a.insertArtifact({ artifact: art, storageLimitBytes: 1_000 });
          const links = await Promise.all(
            Array.from({ length: 12 }, (_, i) =>
              (i % 2 ? a : b).createLink(
                {
                  id: `lnk_${i}`,
                  tenantId: tenant.id,
                  artifactId: art.id,
                  createdAt: T0,
                  expiresAt: T0 + 1_000,
                  revokedAt: null,
                },
                5,
                T0,
              ),
            ),
          );
          expect(links.filter(Boolean)).toHaveLength(5);
          expect(await a.countActiveLinks(tenant.id, T0)).toBe(5);

          const keys = await Promise.all(
            Array.from({ length: 12 }, (_, i) =>
              (i % 2 ? a : b).createApiKey(
                {
                  id: `key_${i}`,
                  tenantId: tenant.id,
                  hash: sha(`k${i}`),
                  last4: 'abcd',
                  createdAt: T0,
                  revokedAt: null,
                },
                3,
              ),
            ),
          );
          expect(keys.filter(Boolean)).toHaveLength(3);

          const named = await Promise.allSettled(
            Array.from({ length: 6 }, (_, i) =>
              (i % 2 ? a : b).createTenant({
                id: `ten_dup_${i}`,
                name: 'dup',
                plan: 'free',
                suspended: false,
                createdAt: T0,
                storageBytes: 0,
              }),
            ),
          );
          expect(named.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          for (const r of named)
            if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'invalid_request' });
        });

        it('settles account races from two pools: one sign-up per email, one grant, one rotation, one code use', async () => {
          const newTenant = (n: string): TenantRow => ({ ...tenant, id: `ten_${n}`, name: n });
          const user = (id: string, tenantId: string) => ({
            id,
            email: 'ada@example.com',
            passwordHash: 'x',
            tenantId,
            createdAt: T0,
          });
          const signUps = await Promise.all([
            a.accounts.createUser(user('usr_a', 'ten_a'), newTenant('a')),
            b.accounts.createUser(user('usr_b', 'ten_b'), newTenant('b')),
          ]);
          expect(signUps.sort()).toEqual(['created', 'email_taken']);
          // The refused sign-up leaves no tenant behind.
          expect(Number(!!(await a.getTenant('ten_a'))) + Number(!!(await a.getTenant('ten_b')))).toBe(1);
          const { user: ada } = (await a.accounts.getUserByEmail('ada@example.com'))!;

          const consent = (s: PostgresMetadataStore, id: string) =>
            s.accounts.upsertGrant({ id, tenantId: ada.tenantId, userId: ada.id, clientId: 'cli', tier: 'read' }, T0);
          const grants = await Promise.all([consent(a, 'grt_a'), consent(b, 'grt_b')]);
          expect(grants[0].id).toBe(grants[1].id);
          const grantId = grants[0].id;

          const refresh = { kind: 'refresh' as const, grantId, resource: 'r', createdAt: T0, expiresAt: T0 + 1_000 };
          await a.accounts.createTokens([{ ...refresh, hash: 'rt1', usedAt: null }]);
          const uses = await Promise.all([
            a.accounts.useRefreshToken('rt1', T0),
            b.accounts.useRefreshToken('rt1', T0),
          ]);
          expect(uses.map((u) => u!.reused).sort()).toEqual([false, true]);

          await a.accounts.createCode({
            hash: 'code1',
            grantId,
            clientId: 'cli',
            redirectUri: 'u',
            codeChallenge: 'c',
            resource: 'r',
            createdAt: T0,
            expiresAt: T0 + 1_000,
            usedAt: null,
          });
          const codes = await Promise.all([a.accounts.consumeCode('code1', T0), b.accounts.consumeCode('code1', T0)]);
          expect(codes.map((c) => c!.reused).sort()).toEqual([false, true]);

          // A rotation racing the revocation of its grant: rotated first, or refused; never left usable.
          await a.accounts.createTokens([{ ...refresh, hash: 'rt2', usedAt: null }]);
          const [rotated, revoked] = await Promise.all([
            a.accounts.useRefreshToken('rt2', T0),
            b.accounts.revokeGrantOfToken('rt2', 'cli', T0),
          ]);
          expect(revoked).toBe(true);
          expect(rotated?.reused ?? false).toBe(false);
          expect(await a.accounts.findToken('rt2', 'refresh')).toBeNull();
        });

        it('a seal racing uploads from the other pool leaves a consistent count', async () => {
          const first = row({ sessionId: 's1' });
          await a.pinBlob(tenant.id, first.contentHash, first.sizeBytes, T0, PIN_WRITER);
          await a.insertArtifact({ artifact: first, storageLimitBytes: 1_000 });
          const uploads = Array.from({ length: 10 }, () => row({ sessionId: 's1' }));
          const settled = await Promise.allSettled([
            ...uploads.map((artifact) => b.insertArtifact({ artifact, storageLimitBytes: 1_000 })),
            a.sealSession(tenant.id, 's1', T0 + 5),
          ]);
          for (const r of settled)
            if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'session_sealed' });
          const session = await a.getSession(tenant.id, 's1');
          const listed = await a.listArtifacts(tenant.id, { now: T0, limit: 100, sessionId: 's1' });
          expect(session!.sealedAt).toBe(T0 + 5);
          expect(session!.artifactCount).toBe(listed.length);
        });

        it('sweepers on two pools split expiry work and keep the accounting exact', async () => {
          // 300 artifacts over 30 shared blobs and 10 sessions: batches from both instances touch
          // the same blob, session and tenant rows in different orders.
          const rows = Array.from({ length: 300 }, (_, i) =>
            row({ contentHash: sha(`b${i % 30}`), sessionId: `s${i % 10}`, expiresAt: T0 + 1 + (i % 7) }),
          );
          for (const r of rows) {
            await a.pinBlob(tenant.id, r.contentHash, r.sizeBytes, T0, PIN_WRITER);
            await a.insertArtifact({ artifact: r, storageLimitBytes: 1_000_000 });
          }
          expect((await a.getTenant(tenant.id))!.storageBytes).toBe(300);
          const drain = async (s: PostgresMetadataStore) => {
            let total = 0;
            for (let n = await s.expireArtifacts(T0 + 10, 25); n > 0; n = await s.expireArtifacts(T0 + 10, 25)) {
              total += n;
            }
            return total;
          };
          const counts = await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
          expect(counts.reduce((x, y) => x + y, 0)).toBe(300);
          expect((await a.getTenant(tenant.id))!.storageBytes).toBe(0);
          const sessions = await a.listSessions(tenant.id, { limit: 20 });
          expect(sessions.map((s) => s.artifactCount)).toEqual(Array(10).fill(0));
          expect(await a.blobIsLive(tenant.id, sha('b0'))).toBe(false);
        });

        it('refuses metadata PostgreSQL cannot store as invalid_request', async () => {
          const bad = row({ metadata: { note: 'nul \u0000 inside' } });
          await a.pinBlob(tenant.id, bad.contentHash, bad.sizeBytes, T0, PIN_WRITER);
          await expect(a.insertArtifact({ artifact: bad, storageLimitBytes: 1_000 })).rejects.toMatchObject({
            code: 'invalid_request',
          });
        });

        it('matches long metadata values exactly', async () => {
          const long = 'x'.repeat(3000);
          const art = row({ metadata: { blob: long, other: `${long}y` } });
          await a.pinBlob(tenant.id, art.contentHash, art.sizeBytes, T0, PIN_WRITER);
          await a.insertArtifact({ artifact: art, storageLimitBytes: 1_000 });
          const find = (value: string) =>
            a.listArtifacts(tenant.id, { now: T0, limit: 10, metadata: [{ key: 'blob', value }] });
          expect((await find(long)).map((r) => r.id)).toEqual([art.id]);
          expect(await find(`${long}y`)).toEqual([]);
          expect((await a.getArtifact(tenant.id, art.id))!.metadata).toEqual(art.metadata);
        });
      });
    });

    describe('query plans on a seeded table', () => {
      const schema = schemaName();
      let admin: pg.Client;
      const TENANT = 'ten_big';
      const ROWS = 100_000;

      beforeAll(async () => {
        const store = new PostgresMetadataStore({ connectionString: url!, schema });
        await store.migrate();
        await store.close();
        admin = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
        await admin.connect();
        // One big tenant plus a few small ones; 1,000 sessions, 10% transcripts, every row a run id,
        // and the bench's batch (1 in 100) and kind (1 in 7): b42 and k3 meet once in 700 rows.
        await admin.query(`
          INSERT INTO tenants (id, name, plan, created_at) SELECT 'ten_' || i, 'n' || i, 'pro', 0
            FROM generate_series(1, 5) AS i;
          INSERT INTO tenants (id, name, plan, created_at) VALUES ('${TENANT}', 'big', 'pro', 0);
          INSERT INTO artifacts (id, tenant_id, filename, content_type, size_bytes, content_hash, metadata,
              session_id, agent_id, created_at, expires_at, status)
            SELECT 'art_' || lpad(i::text, 16, '0'),
                   CASE WHEN i % 50 = 0 THEN 'ten_' || (i % 5 + 1) ELSE '${TENANT}' END,
                   'f' || (i % 100) || '.txt', 'text/plain', 10, md5(i::text),
                   jsonb_build_object('run', i::text, 'type', CASE WHEN i % 10 = 0 THEN 'transcript' ELSE 'note' END,
                     'batch', 'b' || (i % 100), 'kind', 'k' || (i % 7)),
                   's' || (i % 1000), 'agent' || (i % 7), 1700000000000 + i * 1000,
                   CASE WHEN i % 3 = 0 THEN 1800000000000 + i ELSE NULL END, 'active'
            FROM generate_series(1, ${ROWS}) AS i;
          INSERT INTO artifact_meta (artifact_id, key, tenant_id, value, created_at)
            SELECT a.id, e.key, a.tenant_id, e.value, a.created_at
            FROM artifacts AS a, jsonb_each_text(a.metadata) AS e;
          INSERT INTO sessions (tenant_id, session_id, artifact_count, first_artifact_at, last_artifact_at)
            SELECT tenant_id, session_id, count(*), min(created_at), max(created_at)
            FROM artifacts GROUP BY tenant_id, session_id;
          ANALYZE;
        `);
      });
      afterAll(async () => {
        await admin?.end();
        await dropSchema(schema);
      });

      const explain = async (text: string, values: unknown[]) => {
        const { rows } = await admin.query(`EXPLAIN ${text}`, values);
        return rows.map((r) => r['QUERY PLAN'] as string).join('\n');
      };
      /** The plan of the store's list statement prepared and run as `mode` plans it (plan_cache_mode). */
      const preparedPlan = async (query: ArtifactQuery, mode: 'force_generic_plan' | 'force_custom_plan') => {
        const { text, values } = buildArtifactListQuery(TENANT, query);
        const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`);
        await admin.query(`SET plan_cache_mode = ${mode}`);
        try {
          await admin.query(`PREPARE list_page AS ${text}`);
          const { rows } = await admin.query(`EXPLAIN EXECUTE list_page(${values.map(literal).join(', ')})`);
          return rows.map((r) => r['QUERY PLAN'] as string).join('\n');
        } finally {
          await admin.query('DEALLOCATE ALL');
          await admin.query('RESET plan_cache_mode');
        }
      };
      const base: ArtifactQuery = { now: 1_700_000_000_000, limit: 51 };
      const deep = {
        createdAt: 1_700_000_000_000 + (ROWS / 2) * 1000,
        id: `art_${String(ROWS / 2).padStart(16, '0')}`,
      };
      const transcript = [{ key: 'type', value: 'transcript' }];

      const cases: [string, ArtifactQuery, RegExp][] = [
        ['first page', base, /Index Scan using artifacts_list on artifacts/],
        [
          'deep cursor page',
          { ...base, after: deep },
          /Index Scan using artifacts_list[^\n]*\n\s+Index Cond: .*ROW\(created_at, id\) < ROW/,
        ],
        ['session page', { ...base, sessionId: 's7' }, /Index Scan using artifacts_by_session/],
        ['session deep page', { ...base, sessionId: 's7', after: deep }, /Index Scan using artifacts_by_session/],
        ['agent page', { ...base, agentId: 'agent3' }, /Index Scan using artifacts_by_agent/],
        ['metadata page', { ...base, metadata: transcript }, /Index Only Scan using artifact_meta_lookup/],
        [
          'metadata deep page',
          { ...base, metadata: transcript, after: deep },
          /Index Only Scan using artifact_meta_lookup[^\n]*\n\s+Index Cond: .*ROW\(created_at, artifact_id\) < ROW/,
        ],
        [
          'two metadata filters',
          { ...base, metadata: [{ key: 'run', value: '77' }, ...transcript] },
          /Index Only Scan using artifact_meta_lookup/,
        ],
        [
          // The sparser pair drives (as the store orders them) and the other is a primary-key probe
          // filtering that walk, row by row: never a join that fetches every walked artifact first
          // or that a parallel worker runs.
          'two metadata pairs, the sparser driving',
          {
            ...base,
            metadata: [
              { key: 'batch', value: 'b42' },
              { key: 'kind', value: 'k3' },
            ],
          },
          /Index Only Scan using artifact_meta_lookup on artifact_meta m .*\n\s+Index Cond: .*\n\s+Filter: (?:EXISTS)?\(SubPlan 1\)\n\s+SubPlan 1\n\s+-> {2}Index Scan using artifact_meta_pkey on artifact_meta m2 /,
        ],
      ];

      for (const [label, query, expected] of cases) {
        it(`walks an index in list order with no sort: ${label}`, async () => {
          const { text, values } = buildArtifactListQuery(TENANT, query);
          const plan = await explain(text, values);
          expect(plan).toMatch(/^Limit/);
          expect(plan).toMatch(expected);
          expect(plan).not.toMatch(/Seq Scan|Sort|Gather/);
        });
      }

      // The store runs these as prepared statements. Once PostgreSQL settles on one plan for all
      // calls (the generic plan, made without the values), it must be the same index walk.
      for (const [label, query, expected] of cases) {
        it(`keeps that walk as a prepared statement's generic plan: ${label}`, async () => {
          const plan = await preparedPlan(query, 'force_generic_plan');
          // Planned for the page size, not for "any number of rows" (which on a big table
          // turns into a parallel scan of the whole index).
          const limitRows = Number(/^Limit .*? rows=(\d+) /.exec(plan)?.[1]);
          expect(limitRows).toBeGreaterThan(0);
          expect(limitRows).toBeLessThanOrEqual(51);
          expect(plan).toMatch(expected);
          expect(plan).not.toMatch(/Seq Scan|Sort|Gather/);
        });
      }

      it('costs a metadata-only page the same planned with its values and without', async () => {
        // 90 % of the rows are type=note. Were the value visible, the plan made with it would
        // expect a shorter walk than the plan made without it; PostgreSQL, comparing the two,
        // could then keep planning every call anew. The store hides a metadata-only page's values.
        const cost = async (query: ArtifactQuery, mode: 'force_generic_plan' | 'force_custom_plan') =>
          /^Limit +\(cost=([\d.]+\.\.[\d.]+) rows=/.exec(await preparedPlan(query, mode))?.[1];
        const note = [{ key: 'type', value: 'note' }];
        for (const query of [
          { ...base, metadata: note },
          { ...base, metadata: note, after: deep },
        ]) {
          const custom = await cost(query, 'force_custom_plan');
          expect(custom).toBeDefined();
          expect(await cost(query, 'force_generic_plan')).toBe(custom);
        }
        // With another filter the values choose the index, so they stay visible to the planner.
        const { text } = buildArtifactListQuery(TENANT, { ...base, metadata: note, sessionId: 's7' });
        expect(text).not.toContain('(SELECT $');
      });

      it('returns the same page the plans promise', async () => {
        const { text, values } = buildArtifactListQuery(TENANT, { ...base, metadata: transcript, after: deep });
        const { rows } = await admin.query(text, values);
        expect(rows).toHaveLength(51);
        expect(rows.every((r) => r.metadata.type === 'transcript' && r.created_at < deep.createdAt)).toBe(true);
      });

      it('returns the newest artifacts matching both of two pairs', async () => {
        const metadata = [
          { key: 'batch', value: 'b42' },
          { key: 'kind', value: 'k3' },
        ];
        for (const after of [undefined, deep]) {
          const { text, values } = buildArtifactListQuery(TENANT, { ...base, metadata, ...(after ? { after } : {}) });
          const { rows } = await admin.query(text, values);
          const { rows: truth } = await admin.query(
            `SELECT id FROM artifacts WHERE tenant_id = $1 AND status = 'active' AND (expires_at IS NULL OR expires_at > $2)
               AND metadata->>'batch' = 'b42' AND metadata->>'kind' = 'k3' AND (created_at, id) < ($3, $4)
             ORDER BY created_at DESC, id DESC LIMIT 51`,
            [TENANT, base.now, after?.createdAt ?? Number.MAX_SAFE_INTEGER, after?.id ?? ''],
          );
          expect(rows).toHaveLength(51);
          expect(rows.map((r) => r.id)).toEqual(truth.map((r) => r.id));
        }
      });

      it('lists sessions by index with no sort', async () => {
        const { text, values } = buildSessionListQuery(TENANT, {
          limit: 51,
          after: { lastArtifactAt: 5, sessionId: 's' },
        });
        const plan = await explain(text, values);
        expect(plan).toMatch(/Index Scan using sessions_list/);
        expect(plan).not.toMatch(/Seq Scan|Sort/);
      });

      describe('sessions filtered by creation time, on a tenant with 300,000 sessions', () => {
        const MANY = 'ten_sessions';
        const N = 300_000;
        const T = 1_700_000_000_000;
        // Session i started at T + i s and was last active up to ~4 days later.
        beforeAll(async () => {
          await admin.query(`
            INSERT INTO tenants (id, name, plan, created_at) VALUES ('${MANY}', 'many', 'pro', 0);
            INSERT INTO sessions (tenant_id, session_id, artifact_count, first_artifact_at, last_artifact_at)
              SELECT '${MANY}', 's' || i, 1, ${T} + i * 1000, ${T} + i * 1000 + (i::bigint * 7919 % 345600) * 1000
              FROM generate_series(1, ${N}) AS i;
            ANALYZE sessions;
          `);
        });

        const windows: [string, { createdAfter?: number; createdBefore?: number }, RegExp][] = [
          ['the oldest few (created_before)', { createdBefore: T + 200_000 }, /using sessions_by_first/],
          [
            'a narrow window in the middle',
            { createdAfter: T + 150_000_000, createdBefore: T + 150_200_000 },
            /using sessions_by_first/,
          ],
          ['the newest few (created_after)', { createdAfter: T + (N - 200) * 1000 }, /using sessions_(by_first|list)/],
          ['nearly everything (created_before)', { createdBefore: T + N * 1000 }, /Index Scan using sessions_list/],
        ];
        for (const [label, window, expected] of windows) {
          it(`plans by index, never a scan of every session: ${label}`, async () => {
            const { text, values } = buildSessionListQuery(MANY, { limit: 51, ...window });
            const plan = await explain(text, values);
            expect(plan).toMatch(/^Limit/);
            expect(plan).toMatch(expected);
            expect(plan).not.toMatch(/Seq Scan/);
            // The planner's answer is the filter's answer, with the implied bound on last_artifact_at too.
            const { rows } = await admin.query(text, values);
            const { rows: truth } = await admin.query(
              `SELECT session_id FROM sessions WHERE tenant_id = $1 AND first_artifact_at > $2 AND first_artifact_at < $3
               ORDER BY last_artifact_at DESC, session_id DESC LIMIT 51`,
              [MANY, window.createdAfter ?? 0, window.createdBefore ?? Number.MAX_SAFE_INTEGER],
            );
            expect(rows.map((r) => r.session_id)).toEqual(truth.map((r) => r.session_id));
          });
        }
      });
    });
  });
}
