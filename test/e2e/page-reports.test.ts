import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { DAY_MS, eventually, expectError, type Rec } from '../helpers/e2e.js';
import { publishContent } from '../helpers/pages.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * POST /v1/public/pages/{slug}/report: always 202 (429 only past the per-IP-per-slug cap);
 * forwarded to the operator log and webhook only for live pages, within a per-IP budget, with the
 * webhook delivered in the background.
 */

const clock = new ManualClock(Date.UTC(2026, 10, 23, 8));
let s: TestServer;
let otherKey: string;

/** JSON lines written to the operator log. */
const operatorLines: Rec[] = [];
/** Bodies the webhook received, and what it does with the next ones. */
const delivered: Rec[] = [];
let webhookMode: 'ok' | 'slow' | 'fail' | 'hang-up' = 'ok';
const SLOW_MS = 4000;
let webhook: Server;
const warnings: string[] = [];

beforeAll(async () => {
  webhook = createServer(async (req, res) => {
    if (webhookMode === 'hang-up') return req.socket.destroy();
    if (webhookMode === 'slow') await new Promise((r) => setTimeout(r, SLOW_MS));
    let body = '';
    for await (const chunk of req) body += chunk;
    delivered.push(JSON.parse(body));
    res.statusCode = webhookMode === 'fail' ? 500 : 200;
    res.end();
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const operatorLog = new PassThrough();
  let pending = '';
  operatorLog.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) operatorLines.push(JSON.parse(line));
  });
  const noop = () => {};
  s = await startTestServer({
    clock,
    env: { CAIRN_ABUSE_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/abuse` },
    operatorLog,
    log: { info: noop, error: noop, warn: (obj) => warnings.push(JSON.stringify(obj)) },
  });
  otherKey = await s.createTenant('other-co', 'pro');
});

afterAll(async () => {
  await s?.close();
  await new Promise((r) => webhook?.close(r));
});

// Reports are counted per hour: each test starts in a fresh window, with empty records.
beforeEach(() => {
  clock.advance(2 * 3_600_000);
  webhookMode = 'ok';
  for (const list of [operatorLines, delivered, warnings]) list.length = 0;
});

const report = (slug: string, body: unknown, headers: Record<string, string> = {}) =>
  api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/report`, body, headers);
const livePage = async (key = s.apiKey) =>
  publishContent(s, { filename: 'p.md', content: `# page ${Math.random()}` }, { visibility: 'unlisted' }, key);
/**
 * What the webhook received about `slug`. Deliveries are asynchronous, so one from an earlier
 * test may land during a later one: every webhook assertion names its page.
 */
const deliveredFor = (slug: string) => delivered.filter((d) => d.slug === slug);
/** Lets background deliveries that would have happened happen, before asserting there were none. */
const settle = () => new Promise((r) => setTimeout(r, 200));

async function expectReceived(r: Promise<Awaited<ReturnType<typeof api>>>): Promise<void> {
  const res = await r;
  expect(res.status, res.text).toBe(202);
  expect(res.json).toEqual({ received: true });
}

describe('always 202', () => {
  it('for unknown and malformed slugs, garbage, empty and oversized bodies; none of them is forwarded', async () => {
    const { slug } = await livePage();
    for (const [target, body] of [
      ['pg_AAAAAAAAAAAAAAAA', { reason: 'spam' }],
      ['whatever', { reason: 'phishing', detail: 'x' }],
      ['pg_BBBBBBBBBBBBBBBB', '{not json'],
      ['pg_CCCCCCCCCCCCCCCC', undefined],
      ['x'.repeat(300), { reason: 'spam' }],
      // Longer than the router takes (512) and badly percent-encoded: refused before routing.
      ['x'.repeat(600), { reason: 'spam' }],
      ['%E0%A4%A', { reason: 'spam' }],
      // A live page, but a body over 64 KiB: answered, not forwarded.
      [slug, JSON.stringify({ reason: 'spam', detail: 'x'.repeat(70 * 1024) })],
      [slug, 'y'.repeat(2 * 1024 * 1024)],
    ] as const) {
      await expectReceived(report(target, body));
    }
    await settle();
    expect(operatorLines).toEqual([]);
    expect(deliveredFor(slug)).toEqual([]);
  });

  it('with no content type, a text body or form encoding (read leniently)', async () => {
    const { slug } = await livePage();
    const types: Record<string, string>[] = [
      {},
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
    ];
    for (const headers of types) {
      const res = await fetch(`${s.apiUrl}/v1/public/pages/${slug}/report`, {
        method: 'POST',
        headers,
        body: '{"reason":"spam"}',
      });
      expect(res.status).toBe(202);
    }
    expect(operatorLines.map((l) => l.reason)).toEqual(['spam', 'spam', 'spam']);
  });
});

describe('forwarding', () => {
  it('writes one JSON line per report on the operator log, and POSTs the report to the webhook', async () => {
    const { artifact, slug } = await livePage();
    await expectReceived(report(slug, { reason: 'malware', detail: 'é'.repeat(2500) }));
    await expectReceived(report(slug, { reason: 'nonsense', detail: 7 }));
    await expectReceived(report(slug, { reason: ['spam'] }));
    expect(operatorLines).toHaveLength(3);
    const line = operatorLines[0] as Rec;
    expect(Object.keys(line)).toEqual([
      'kind',
      'slug',
      'reason',
      'detail',
      'tenantName',
      'artifactId',
      'reporterIp',
      'receivedAt',
    ]);
    expect(line).toEqual({
      kind: 'abuse_report',
      slug,
      reason: 'malware',
      detail: 'é'.repeat(2000),
      tenantName: 'main',
      artifactId: artifact.artifact_id,
      reporterIp: '127.0.0.1',
      receivedAt: new Date(clock.now()).toISOString(),
    });
    expect(operatorLines.map((l) => [l.reason, l.detail])).toEqual([
      ['malware', 'é'.repeat(2000)],
      ['other', ''],
      ['other', ''],
    ]);
    await eventually(() => deliveredFor(slug).length === 3, 5000, 'three webhook deliveries');
    const { kind: _kind, ...asDelivered } = line;
    expect(deliveredFor(slug)).toContainEqual(asDelivered);
    // A report takes nothing down.
    expect(await s.core.pages.resolve(slug)).not.toBeNull();
  });

  it('cuts detail at 2,000 characters (code points), never inside a surrogate pair', async () => {
    const { slug } = await livePage();
    await report(slug, { detail: `a${'😀'.repeat(2500)}` });
    await report(slug, { detail: '😀'.repeat(2000) });
    expect(operatorLines.map((l) => l.detail)).toEqual([`a${'😀'.repeat(1999)}`, '😀'.repeat(2000)]);
  });

  it('only for live pages: not for unpublished or taken-down ones', async () => {
    const unpublished = await livePage();
    await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${unpublished.slug}/publish`);
    const takenDown = await livePage();
    await s.core.pages.takeDown(takenDown.slug);
    await expectReceived(report(unpublished.slug, { reason: 'spam' }));
    await expectReceived(report(takenDown.slug, { reason: 'spam' }));
    await settle();
    expect(operatorLines).toEqual([]);
    expect([...deliveredFor(unpublished.slug), ...deliveredFor(takenDown.slug)]).toEqual([]);
  });

  it('cross-tenant: a key sent along changes nothing, and the report names the page’s own tenant', async () => {
    const { artifact, slug } = await livePage(otherKey);
    await expectReceived(report(slug, { reason: 'abuse' }, { authorization: `Bearer ${s.apiKey}` }));
    await expectReceived(report(slug, { reason: 'spam' }, { authorization: 'Bearer ak_live_nonsense' }));
    expect(operatorLines.map((l) => [l.tenantName, l.artifactId])).toEqual([
      ['other-co', artifact.artifact_id],
      ['other-co', artifact.artifact_id],
    ]);
  });

  it('is never stored in the database', async () => {
    const { slug } = await livePage();
    await report(slug, { reason: 'abuse', detail: 'unique-report-marker-123' });
    expect(await s.databaseContains('unique-report-marker-123')).toBe(false);
    expect(operatorLines.some((l) => l.detail === 'unique-report-marker-123')).toBe(true);
  });
});

describe('flooding', () => {
  it('made-up slugs reach no operator: 20 of them, 20 × 202, nothing forwarded', async () => {
    const slugs = Array.from({ length: 20 }, (_, i) => `pg_${String(i).padStart(16, 'F')}`);
    for (const slug of slugs) await expectReceived(report(slug, { reason: 'spam' }));
    await settle();
    expect(operatorLines).toEqual([]);
    expect(delivered.filter((d) => slugs.includes(d.slug))).toEqual([]);
  });

  it('one IP gets at most 20 reports an hour forwarded over all pages; the rest are still 202', async () => {
    const pages = [];
    for (let i = 0; i < 25; i++) pages.push(await livePage());
    for (const { slug } of pages) await expectReceived(report(slug, { reason: 'spam' }));
    expect(operatorLines).toHaveLength(20);
    expect(new Set(operatorLines.map((l) => l.slug)).size).toBe(20);
    clock.advance(3_600_000);
    await expectReceived(report(pages[24]?.slug ?? '', { reason: 'spam' }));
    expect(operatorLines).toHaveLength(21);
  });

  it('limits reports per IP per slug with 429 and Retry-After', async () => {
    const { slug } = await livePage();
    for (let i = 0; i < 5; i++) await expectReceived(report(slug, { reason: 'spam' }));
    const r = await report(slug, { reason: 'spam' });
    expectError(r, 429, 'rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another slug from the same IP is unaffected.
    await expectReceived(report('pg_DDDDDDDDDDDDDDDD', {}));
    clock.advance(DAY_MS);
    await expectReceived(report(slug, {}));
  });
});

describe('webhook delivery in the background', () => {
  it('a slow webhook does not delay the 202, and still receives the JSON', async () => {
    const { slug } = await livePage();
    webhookMode = 'slow';
    const started = performance.now();
    await expectReceived(report(slug, { reason: 'phishing', detail: 'slow one' }));
    // Waiting on the webhook would take SLOW_MS at least.
    expect(performance.now() - started).toBeLessThan(SLOW_MS);
    expect(operatorLines).toHaveLength(1);
    expect(deliveredFor(slug)).toEqual([]);
    await eventually(() => deliveredFor(slug).length === 1, SLOW_MS + 5000, 'the slow delivery');
    expect(deliveredFor(slug)[0]).toMatchObject({ reason: 'phishing', detail: 'slow one', tenantName: 'main' });
    expect(warnings.filter((w) => w.includes(slug))).toEqual([]);
  });

  it('a failing or hanging-up webhook is logged, and the reporter never notices', async () => {
    const { slug } = await livePage();
    const about = () => warnings.filter((w) => w.includes(slug));
    webhookMode = 'fail';
    await expectReceived(report(slug, { reason: 'spam' }));
    await eventually(() => about().length === 1, 5000, 'a warning for the 500');
    expect(about()[0]).toMatch(/answered 500 to the report on pg_/);
    webhookMode = 'hang-up';
    await expectReceived(report(slug, { reason: 'spam' }));
    await eventually(() => about().length === 2, 5000, 'a warning for the hang-up');
    expect(about()[1]).toMatch(/failed for the report on pg_\w+: TypeError: fetch failed/);
    // The operator log has both reports all the same.
    expect(operatorLines).toHaveLength(2);
  });
});
