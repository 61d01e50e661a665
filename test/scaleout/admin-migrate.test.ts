import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/adapters/sql/schema.js';
import { runCairn } from '../helpers/cli.js';
import { scaleoutUnavailable } from '../helpers/scaleout.js';

/**
 * `cairn admin migrate` (the built binary) migrates the metadata store and touches nothing else:
 * no blob store, no Redis, no data folder unless the records live there. Every configured service
 * it must not touch points at a closed port, so touching one would fail the command.
 */

const versions = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const UNREACHABLE = {
  CAIRN_S3_BUCKET: 'never-touched',
  CAIRN_S3_ENDPOINT: 'http://127.0.0.1:1',
  CAIRN_S3_FORCE_PATH_STYLE: 'true',
  CAIRN_REDIS_URL: 'redis://127.0.0.1:1',
};

let base: string;
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'cairn-migrate-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function migrate(cwd: string, env: Record<string, string>, json = true) {
  const r = await runCairn(['admin', 'migrate', ...(json ? ['--json'] : [])], {
    cwd,
    configDir: path.join(base, 'config'),
    apiUrl: 'http://127.0.0.1:1',
    env,
  });
  expect(r.code, r.stderr).toBe(0);
  return json ? JSON.parse(r.stdout) : r.stdout;
}

describe('cairn admin migrate on SQLite', () => {
  it('applies every migration to a fresh data folder, then reports none needed', async () => {
    const dataDir = path.join(base, 'sqlite-data');
    const env = { CAIRN_DATA_DIR: dataDir, ...UNREACHABLE };
    const file = path.join(dataDir, 'cairn.sqlite');
    expect(await migrate(base, env)).toEqual({
      database: 'sqlite',
      location: file,
      from_version: 0,
      to_version: MIGRATIONS.length,
      applied: versions(MIGRATIONS.length),
    });
    expect(await migrate(base, env)).toEqual({
      database: 'sqlite',
      location: file,
      from_version: MIGRATIONS.length,
      to_version: MIGRATIONS.length,
      applied: [],
    });
    expect(await migrate(base, env, false)).toBe(
      `SQLite (${file}): schema is up to date at version ${MIGRATIONS.length}; no migrations were needed.\n`,
    );
    // Only the database: no blob folder, nothing staged.
    expect((await readdir(dataDir)).filter((f) => !f.startsWith('cairn.sqlite'))).toEqual([]);
  });
});

const reason = await scaleoutUnavailable();
if (reason && !process.env.CI) console.warn(`\n!!! SKIPPING admin migrate on PostgreSQL: ${reason}.\n`);

describe.skipIf(reason !== null && !process.env.CI)('cairn admin migrate on PostgreSQL', () => {
  const dbUrl = process.env.CAIRN_TEST_DATABASE_URL ?? '';
  const schema = `cairn_migrate_${randomBytes(5).toString('hex')}`;

  beforeAll(() => {
    if (reason) throw new Error(`CI must run the PostgreSQL migrate test, but ${reason}.`);
  });
  afterAll(async () => {
    if (reason) return;
    const admin = new pg.Client({ connectionString: dbUrl });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('applies versions 1…N to a fresh schema, then none; no data folder, S3 or Redis involved', async () => {
    const cwd = await mkdtemp(path.join(base, 'pg-cwd-'));
    const env = { CAIRN_DATABASE_URL: dbUrl, CAIRN_DATABASE_SCHEMA: schema, ...UNREACHABLE };
    const text = await migrate(cwd, env, false);
    expect(text).toBe(
      `PostgreSQL (schema ${schema}): applied migrations ${versions(MIGRATIONS.length).join(', ')}; ` +
        `schema is now at version ${MIGRATIONS.length}.\n`,
    );
    expect(await migrate(cwd, env)).toEqual({
      database: 'postgresql',
      location: schema,
      from_version: MIGRATIONS.length,
      to_version: MIGRATIONS.length,
      applied: [],
    });
    // The default data folder (./data) was not created.
    expect(await readdir(cwd)).toEqual([]);
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(versions(MIGRATIONS.length));
    } finally {
      await db.end();
    }
  });
});
