import pg from 'pg';

/** Why the PostgreSQL at `url` cannot be used for tests, or null when it can. */
export async function postgresUnavailable(url: string | undefined): Promise<string | null> {
  if (!url) return 'CAIRN_TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return `PostgreSQL at ${url} is unreachable: ${(err as Error).message.replace(/\.$/, '')}`;
  } finally {
    await client.end().catch(() => {});
  }
}
