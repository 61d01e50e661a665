import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { eventually, put, sha256 } from '../helpers/e2e.js';
import { spawnServe } from '../helpers/process.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let metricsUrl: string;

beforeAll(async () => {
  s = await startTestServer({ env: { CAIRN_METRICS_PORT: '0' } });
  metricsUrl = `http://127.0.0.1:${s.server.config.metricsPort}`;
});
afterAll(async () => {
  await s?.close();
});

/** The Prometheus text exposition, parsed into `name{labels}` → value (comments dropped). */
async function scrape(): Promise<{ text: string; value: (series: string) => number }> {
  const r = await fetch(`${metricsUrl}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { text, value: (series) => values.get(series) ?? 0 };
}

describe('metrics listener', () => {
  it('is off unless CAIRN_METRICS_PORT is set, and on loopback by default', () => {
    expect(loadConfig({}, {}).metricsPort).toBeUndefined();
    const on = loadConfig({}, { CAIRN_METRICS_PORT: '9464' });
    expect(on.metricsPort).toBe(9464);
    expect(on.metricsHost).toBe('127.0.0.1');
    expect(s.server.config.metricsPort).toBeGreaterThan(0);
  });

  it('`cairn serve` prints where it is and answers there', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-metrics-'));
    const p = await spawnServe(dataDir, { CAIRN_METRICS_PORT: '0' });
    try {
      const url = /Metrics\s+(http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(p.banner)?.[1];
      expect(url, p.banner).toBeDefined();
      expect((await fetch(`${url}/ready`)).status).toBe(200);
      expect(await (await fetch(`${url}/metrics`)).text()).toContain('cairn_http_requests_total');
    } finally {
      await p.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
    const without = await mkdtemp(path.join(tmpdir(), 'cairn-metrics-'));
    const q = await spawnServe(without);
    try {
      expect(q.banner).not.toContain('Metrics');
    } finally {
      await q.stop();
      await rm(without, { recursive: true, force: true });
    }
  });

  it('counts requests by route template, method and status, with latency and bytes', async () => {
    const content = Buffer.from('metrics body '.repeat(100));
    const up = await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', {
      filename: 'm.txt',
      content: content.toString('base64'),
    });
    expect(up.status).toBe(201);
    const id = up.json.artifact_id as string;
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}`)).status).toBe(200);
    expect((await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts/art_0000000000000000')).status).toBe(404);
    const url = (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}/download-url`)).json.download_url;
    const got = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(sha256(got)).toBe(sha256(content));

    const m = await scrape();
    const get = 'cairn_http_requests_total{listener="api",route="/v1/artifacts/:id",method="GET"';
    expect(m.value(`${get},status="200"}`)).toBe(1);
    expect(m.value(`${get},status="404"}`)).toBe(1);
    expect(m.value('cairn_http_requests_total{listener="api",route="/v1/artifacts",method="POST",status="201"}')).toBe(
      1,
    );
    expect(
      m.value('cairn_http_request_duration_seconds_count{listener="api",route="/v1/artifacts/:id",method="GET"}'),
    ).toBe(2);
    expect(m.value('cairn_bytes_uploaded_total')).toBe(content.length);
    expect(m.value('cairn_bytes_served_total{listener="content"}')).toBe(content.length);
    // Bounded cardinality: no ids, keys or tenants anywhere in the exposition.
    expect(m.text).not.toContain(id);
    expect(m.text).not.toContain(s.apiKey);
    expect(m.text).not.toContain((await s.core.tenants.byName('main')).id);
    expect(m.text).not.toContain('art_0000000000000000');
    // Process metrics and event-loop lag come with it.
    for (const name of ['process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'cairn_uploads_in_flight'])
      expect(m.text).toContain(`\n${name} `);
  });

  it('counts rate-limit and quota refusals', async () => {
    const key = await s.createTenant('metered', 'free');
    const art = await put(s.apiUrl, key, 'x', { filename: 'x.md' });
    const refused = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${art.artifact_id}/publish`, {
      visibility: 'unlisted',
      access: 'password',
      password: 'pw',
    });
    expect(refused.status).toBe(403);
    let limited = 0;
    while (limited === 0) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => api(s.apiUrl, key, 'GET', '/v1/artifacts')));
      limited = batch.filter((r) => r.status === 429).length;
    }
    const m = await scrape();
    expect(m.value('cairn_refusals_total{reason="quota_exceeded"}')).toBe(1);
    expect(m.value('cairn_refusals_total{reason="rate_limited"}')).toBe(limited);
  });

  it('reports sweeper runs and what they removed', async () => {
    s.core.sweeper.start(20);
    try {
      await eventually(async () => (await scrape()).value('cairn_sweeper_runs_total{outcome="ok"}') >= 2, 10_000);
    } finally {
      await s.core.sweeper.stop();
    }
    const m = await scrape();
    expect(m.text).toContain('cairn_sweeper_removed_total{kind="expired"}');
    expect(m.value('cairn_sweeper_run_duration_seconds_count')).toBeGreaterThanOrEqual(2);
  });
});

describe('readiness', () => {
  it('is 200 while the metadata and blob stores answer, 503 naming the one that does not, then 200 again', async () => {
    const ok = await fetch(`${metricsUrl}/ready`);
    expect(ok.status).toBe(200);
    const checks = { metadata_store: 'ok', blob_store: 'ok', ...(s.backend === 'scaleout' ? { redis: 'ok' } : {}) };
    expect(await ok.json()).toEqual({ status: 'ready', checks });
    // The scale-out services failing is test/faults/'s part (they are private there).
    if (s.backend === 'scaleout') return;

    const blobs = path.join(s.dataDir, 'blobs');
    await rename(blobs, `${blobs}.away`);
    try {
      const down = await fetch(`${metricsUrl}/ready`);
      expect(down.status).toBe(503);
      const body = (await down.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe('not_ready');
      expect(body.checks.metadata_store).toBe('ok');
      expect(body.checks.blob_store).toMatch(/^failed: ENOENT/);
    } finally {
      await rename(`${blobs}.away`, blobs);
    }
    expect((await fetch(`${metricsUrl}/ready`)).status).toBe(200);
    // Liveness stays on the API.
    expect((await fetch(`${s.apiUrl}/health`)).status).toBe(200);
  });
});
