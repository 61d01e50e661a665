import { describe, expect, it } from 'vitest';
import { serveBanner } from '../../src/cli/serve-banner.js';
import { loadConfig, withBoundPorts } from '../../src/config.js';

/** What `cairn serve` prints once it listens: where it listens, which stores it uses, in 80 columns. */
describe('the serve banner', () => {
  it('embedded: the three URLs, SQLite and the folder in the data folder, the key and a curl that fits', () => {
    const config = withBoundPorts(
      loadConfig({ dataDir: '/srv/cairn' }, {}),
      { api: 8080, viewer: 8081, content: 8082 },
      {},
    );
    const key = `ak_live_${'A'.repeat(32)}`;
    const text = serveBanner(config, key, {});
    expect(text).toContain('  API        http://127.0.0.1:8080\n');
    expect(text).toContain('  Viewer     http://localhost:8081\n');
    expect(text).toContain('  Records    SQLite, /srv/cairn/cairn.sqlite\n');
    expect(text).toContain('  Bytes      folder /srv/cairn/blobs\n');
    expect(text).toContain('  Limits     rate limits in this process\n');
    expect(text).toContain(
      `curl -H "Authorization: Bearer ${key}" \\\n       -F file=@README.md http://127.0.0.1:8080/v1/artifacts`,
    );
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('on PostgreSQL, S3 and Redis behind public origins: bound address, public URL, the stores, no password', () => {
    const env = {
      CAIRN_DATABASE_URL: 'postgres://cairn:s3cret-pass@db.internal:5432/cairn',
      CAIRN_DATABASE_SCHEMA: 'prod',
      CAIRN_S3_BUCKET: 'cairn-artifacts',
      CAIRN_S3_ENDPOINT: 'https://s3.eu-central-1.example.com',
      CAIRN_S3_PREFIX: 'blobs',
      CAIRN_REDIS_URL: 'redis://:redis-pass@cache.internal:6379',
      CAIRN_API_ORIGIN: 'https://cairn.example.com',
      CAIRN_VIEWER_ORIGIN: 'https://pages.example-viewer.com',
      CAIRN_CONTENT_ORIGIN: 'https://content.example-usercontent.com',
    };
    const config = withBoundPorts(
      loadConfig({ dataDir: '/srv/cairn', host: '0.0.0.0' }, env),
      { api: 18080, viewer: 18081, content: 18082 },
      env,
    );
    const text = serveBanner(config, null, env);
    expect(text).toContain('  API        http://0.0.0.0:18080, public URL https://cairn.example.com\n');
    expect(text).toMatch(
      / {2}Viewer {5}http:\/\/0\.0\.0\.0:18081, public URL\s+https:\/\/pages\.example-viewer\.com\n/,
    );
    expect(text).toContain('  Records    PostgreSQL db.internal:5432/cairn (schema prod)\n');
    expect(text).toContain('  Bytes      S3 bucket cairn-artifacts/blobs at s3.eu-central-1.example.com\n');
    expect(text).toContain('  Limits     rate limits in Redis cache.internal:6379\n');
    expect(text).not.toContain('/srv/cairn');
    expect(text).not.toMatch(/s3cret|redis-pass/);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});
