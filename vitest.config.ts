import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * `e2e-scaleout` runs the end-to-end suite once more on PostgreSQL + Redis + S3 (s3rver), see
 * test/helpers/scaleout.ts. Without CAIRN_TEST_DATABASE_URL / CAIRN_TEST_REDIS_URL it is left
 * out, loudly; CI keeps it, so there the missing services fail the run.
 */
const scaleoutServices = Boolean(process.env.CAIRN_TEST_DATABASE_URL && process.env.CAIRN_TEST_REDIS_URL);
if (!scaleoutServices && !process.env.CI) {
  console.warn(
    '\n!!! SKIPPING the e2e-scaleout project: CAIRN_TEST_DATABASE_URL and CAIRN_TEST_REDIS_URL are not both set.' +
      '\n!!! CI runs it; e.g. CAIRN_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test CAIRN_TEST_REDIS_URL=redis://127.0.0.1:6379\n',
  );
}

/**
 * `unit` is the fast lane (`npm run test:unit`): rules tested in the core over real adapters in
 * memory (test/core, see its harness.ts) and pure units (test/unit), no listener and no process.
 * Its files share one module graph per worker (isolate: false), which is most of what a file
 * costs to start; they keep no state between files.
 */
const UNIT = ['test/unit/**/*.test.ts', 'test/core/**/*.test.ts'];

const projects: TestProjectInlineConfiguration[] = [
  { extends: true, test: { name: 'unit', include: UNIT, pool: 'threads', isolate: false } },
  {
    extends: true,
    test: { name: 'default', include: ['test/**/*.test.ts'], exclude: [...UNIT, '**/node_modules/**'] },
  },
];
if (scaleoutServices || process.env.CI) {
  projects.push({
    extends: true,
    test: { name: 'e2e-scaleout', include: ['test/e2e/**/*.test.ts'], env: { CAIRN_TEST_BACKEND: 'scaleout' } },
  });
}

const sdkSource = (file: string) => new URL(`./packages/sdk/src/${file}`, import.meta.url).pathname;

export default defineConfig({
  // Tests run the SDK from its source (processes spawned from bin/ run the built packages/sdk/dist).
  resolve: {
    alias: [
      { find: /^cairn-store-sdk$/, replacement: sdkSource('index.ts') },
      { find: /^cairn-store-sdk\/internal$/, replacement: sdkSource('internal.ts') },
    ],
  },
  test: {
    projects,
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Servers under test bind loopback ports; a few files at once keeps a 2-core machine responsive.
    maxWorkers: 3,
  },
});
