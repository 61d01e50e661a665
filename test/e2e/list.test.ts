import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, HOUR_MS, put, type Rec, walk } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 2, 1, 12, 0, 0));
let key: string;
/** Uploaded records, oldest first. */
const uploaded: Rec[] = [];
const t0 = clock.now();

const ids = (list: Rec[]) => list.map((a) => a.artifact_id as string);

/** The expected list order: created_at DESC, artifact_id DESC. */
function ordered(records: Rec[]) {
  return [...records].sort((a, b) =>
    a.created_at === b.created_at
      ? b.artifact_id < a.artifact_id
        ? -1
        : 1
      : Date.parse(b.created_at) - Date.parse(a.created_at),
  );
}

beforeAll(async () => {
  s = await startTestServer({ clock });
  key = await s.createTenant('lister', 'pro');
  const add = async (text: string, extra: Record<string, unknown> = {}) => {
    uploaded.push(await put(s.apiUrl, key, text, extra));
  };
  // Minute 0: three uploads at the very same instant (ordering falls back to artifact_id).
  await add('a', {
    filename: 'report.md',
    session_id: 'sess-1',
    agent_id: 'agent-x',
    metadata: { stage: 'draft', n: 1 },
  });
  await add('b', {
    filename: 'report.md',
    session_id: 'sess-1',
    agent_id: 'agent-y',
    metadata: { stage: 'final', n: 2 },
  });
  await add('c', { filename: 'data.csv', session_id: 'sess-2', agent_id: 'agent-x', metadata: { flag: true, n: 42 } });
  clock.advance(60_000);
  await add('d', { filename: 'log.ndjson', session_id: 'sess-2', transcript: true, metadata: { model: 'm-1' } });
  await add('e', { filename: 'img.png', content_type: 'image/png', metadata: { flag: false, n: 42.5 } });
  clock.advance(60_000);
  await add('f', { filename: 'notes.txt', agent_id: 'agent-y', metadata: { stage: 'draft', note: 'true' } });
  await add('g', { filename: 'notes.txt', metadata: { type: 'transcript' } });
  clock.advance(60_000);
  // Five more at one instant, so that a page boundary falls inside a tie.
  for (let i = 0; i < 5; i++) await add(`tie-${i}`, { filename: `tie-${i}.txt`, session_id: 'sess-3' });
});
afterAll(async () => {
  await s?.close();
});

async function list(query: string) {
  const r = await api(s.apiUrl, key, 'GET', `/v1/artifacts${query ? `?${query}` : ''}`);
  expect(r.status, r.text).toBe(200);
  return r.json as { artifacts: Rec[]; next_cursor: string | null; has_more: boolean };
}

describe('GET /v1/artifacts', () => {
  it('orders by created_at DESC, artifact_id DESC, with page: null on every row', async () => {
    const r = await list('');
    expect(Object.keys(r).sort()).toEqual(['artifacts', 'has_more', 'next_cursor']);
    expect(ids(r.artifacts)).toEqual(ids(ordered(uploaded)));
    expect(r.next_cursor).toBeNull();
    expect(r.has_more).toBe(false);
    for (const a of r.artifacts) expect(a.page).toBeNull();
    // Rows equal the upload responses.
    const byId = new Map(uploaded.map((u) => [u.artifact_id, u]));
    for (const a of r.artifacts) expect(a).toEqual(byId.get(a.artifact_id));
  });

  it('walks more than two pages with a cursor, without gaps or duplicates, also through ties', async () => {
    for (const limit of [1, 2, 3, 4]) {
      const { items, pages } = await walk(s.apiUrl, key, `limit=${limit}`);
      expect(ids(items)).toEqual(ids(ordered(uploaded)));
      expect(pages).toBe(Math.ceil(uploaded.length / limit));
    }
    const first = await list('limit=3');
    expect(first.artifacts).toHaveLength(3);
    expect(first.has_more).toBe(true);
    expect(typeof first.next_cursor).toBe('string');
  });

  it('a cursor keeps working when newer artifacts arrive meanwhile', async () => {
    const k2 = await s.createTenant('lister-live', 'pro');
    const made: Rec[] = [];
    for (let i = 0; i < 6; i++) {
      made.push(await put(s.apiUrl, k2, `live-${i}`));
      clock.advance(1000);
    }
    const page1 = await api(s.apiUrl, k2, 'GET', '/v1/artifacts?limit=2');
    const newer = await put(s.apiUrl, k2, 'newer');
    const all = [...page1.json.artifacts];
    let cursor: string | null = page1.json.next_cursor;
    while (cursor) {
      const r = await api(s.apiUrl, k2, 'GET', `/v1/artifacts?limit=2&cursor=${encodeURIComponent(cursor)}`);
      all.push(...r.json.artifacts);
      cursor = r.json.next_cursor;
    }
    expect(ids(all)).toEqual(ids(ordered(made)));
    expect(ids(all)).not.toContain(newer.artifact_id);
  });

  it('filters by session_id, agent_id, filename and content_type', async () => {
    const check = async (query: string, pred: (u: Rec) => boolean) => {
      const expected = ids(ordered(uploaded.filter(pred)));
      expect(expected.length, query).toBeGreaterThan(0);
      expect(ids((await list(query)).artifacts), query).toEqual(expected);
    };
    await check('session_id=sess-1', (u) => u.session_id === 'sess-1');
    await check('session_id=sess-2', (u) => u.session_id === 'sess-2');
    await check('agent_id=agent-x', (u) => u.agent_id === 'agent-x');
    await check('filename=report.md', (u) => u.filename === 'report.md');
    await check('content_type=image%2Fpng', (u) => u.content_type === 'image/png');
    await check('content_type=text%2Fmarkdown', (u) => u.content_type === 'text/markdown');
    await check('session_id=sess-2&agent_id=agent-x', (u) => u.session_id === 'sess-2' && u.agent_id === 'agent-x');
    expect((await list('session_id=nope')).artifacts).toEqual([]);
    expect((await list('filename=REPORT.md')).artifacts).toEqual([]);
  });

  it('filters by created_after and created_before (exclusive bounds)', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const at = (ms: number) => (u: Rec) => Date.parse(u.created_at) === ms;
    const m1 = t0 + 60_000;
    const m2 = t0 + 120_000;
    const after = await list(`created_after=${encodeURIComponent(iso(m1))}`);
    expect(ids(after.artifacts)).toEqual(ids(ordered(uploaded.filter((u) => Date.parse(u.created_at) > m1))));
    const before = await list(`created_before=${encodeURIComponent(iso(m1))}`);
    expect(ids(before.artifacts)).toEqual(ids(ordered(uploaded.filter(at(t0)))));
    const between = await list(
      `created_after=${encodeURIComponent(iso(t0))}&created_before=${encodeURIComponent(iso(m2))}`,
    );
    expect(ids(between.artifacts)).toEqual(ids(ordered(uploaded.filter(at(m1)))));
    // Offsets are understood.
    const offset = await list(`created_after=${encodeURIComponent('2026-03-01T13:01:30+01:00')}`);
    expect(ids(offset.artifacts)).toEqual(ids(ordered(uploaded.filter((u) => Date.parse(u.created_at) > t0 + 90_000))));
  });

  it('transcript=true lists artifacts whose metadata.type is transcript', async () => {
    const r = await list('transcript=true');
    expect(ids(r.artifacts)).toEqual(ids(ordered(uploaded.filter((u) => u.metadata.type === 'transcript'))));
    expect(r.artifacts).toHaveLength(2);
    expect(ids((await list('transcript=false')).artifacts)).toEqual(ids(ordered(uploaded)));
    const combined = await list('transcript=true&session_id=sess-2');
    expect(combined.artifacts).toHaveLength(1);
    expect(combined.artifacts[0]?.filename).toBe('log.ndjson');
  });

  it('metadata.k=v matches strings, numbers and booleans by their JSON text', async () => {
    const check = async (query: string, pred: (m: Record<string, unknown>) => boolean) => {
      const expected = ids(ordered(uploaded.filter((u) => pred(u.metadata))));
      expect(ids((await list(query)).artifacts), query).toEqual(expected);
      return expected.length;
    };
    expect(await check('metadata.stage=draft', (m) => m.stage === 'draft')).toBe(2);
    expect(await check('metadata.n=42', (m) => m.n === 42)).toBe(1);
    expect(await check('metadata.n=42.5', (m) => m.n === 42.5)).toBe(1);
    expect(await check('metadata.flag=true', (m) => m.flag === true)).toBe(1);
    expect(await check('metadata.flag=false', (m) => m.flag === false)).toBe(1);
    // The string "true" matches metadata.note=true too (a stored string equal to v).
    expect(await check('metadata.note=true', (m) => m.note === 'true')).toBe(1);
    expect(await check('metadata.model=m-1', (m) => m.model === 'm-1')).toBe(1);
    expect((await list('metadata.n=042')).artifacts).toEqual([]);
    expect((await list('metadata.stage=DRAFT')).artifacts).toEqual([]);
    expect((await list('metadata.missing=x')).artifacts).toEqual([]);
    // Combined with other filters and with a cursor.
    const combined = await list('metadata.stage=draft&agent_id=agent-y');
    expect(combined.artifacts.map((a) => a.filename)).toEqual(['notes.txt']);
    const { items } = await walk(s.apiUrl, key, 'metadata.stage=draft&limit=1');
    expect(items).toHaveLength(2);
    // With transcript=true, both must match.
    expect((await list('transcript=true&metadata.model=m-1')).artifacts).toHaveLength(1);
    expect((await list('transcript=true&metadata.stage=draft')).artifacts).toHaveLength(0);
  });

  it('takes up to 8 metadata filters, AND-ed, in any order, with a cursor', async () => {
    const check = async (query: string, pred: (m: Record<string, unknown>) => boolean) => {
      const expected = ids(ordered(uploaded.filter((u) => pred(u.metadata))));
      expect(ids((await list(query)).artifacts), query).toEqual(expected);
      return expected.length;
    };
    expect(await check('metadata.stage=draft&metadata.n=1', (m) => m.stage === 'draft' && m.n === 1)).toBe(1);
    expect(await check('metadata.n=1&metadata.stage=draft', (m) => m.stage === 'draft' && m.n === 1)).toBe(1);
    expect(await check('metadata.stage=draft&metadata.n=42', (m) => m.stage === 'draft' && m.n === 42)).toBe(0);
    expect(await check('metadata.stage=draft&metadata.stage2=x', () => false)).toBe(0);
    // Eight pairs on a tenant of its own: two artifacts carry all of them, one only seven.
    const k8 = await s.createTenant('lister-eight', 'pro');
    const pairs = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, `v${i}`]));
    const all = [
      await put(s.apiUrl, k8, '8a', { metadata: { ...pairs, n: 1 } }),
      await put(s.apiUrl, k8, '8b', { metadata: pairs, transcript: true }),
    ];
    await put(s.apiUrl, k8, '7', { metadata: { ...pairs, k7: 'other' } });
    const eight = Object.entries(pairs)
      .map(([k, v]) => `metadata.${k}=${v}`)
      .join('&');
    const page = async (q: string) => (await api(s.apiUrl, k8, 'GET', `/v1/artifacts?${q}`)).json;
    expect(ids((await page(eight)).artifacts)).toEqual(ids(ordered(all)));
    // The transcript filter adds metadata.type=transcript on top of the eight.
    expect(ids((await page(`${eight}&transcript=true`)).artifacts)).toEqual([all[1]?.artifact_id]);
    const { items } = await walk(s.apiUrl, k8, `${eight}&limit=1`);
    expect(ids(items)).toEqual(ids(ordered(all)));
    const nine = await api(s.apiUrl, k8, 'GET', `/v1/artifacts?${eight}&metadata.n=1`);
    expectError(nine, 400, 'invalid_request');
    expect(nine.json.error.message).toMatch(/At most 8 metadata/);
  });

  it('refuses a repeated metadata filter, unknown params, bad cursors and bad limits with invalid_request', async () => {
    const bad = [
      'metadata.a.b=1',
      'metadata.stage=draft&metadata.stage=final',
      'metadata.1x=1',
      'colour=red',
      'sort=asc',
      'cursor=!!!',
      'cursor=abc',
      `cursor=${Buffer.from('[1,"nope"]').toString('base64url')}`,
      `cursor=${Buffer.from('{"a":1}').toString('base64url')}`,
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=-1',
      'limit=1.5',
      'limit=',
      'limit=1&limit=2',
      'session_id=-bad',
      'created_after=yesterday',
      'created_before=2026-13-45',
      'transcript=maybe',
      'content_type=not%20a%20type',
    ];
    for (const q of bad) {
      expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts?${q}`), 400, 'invalid_request');
    }
    expect((await list('limit=200')).artifacts).toHaveLength(uploaded.length);
    expect((await list('limit=1')).artifacts).toHaveLength(1);
  });

  it('hides deleted and expired artifacts at once', async () => {
    const k3 = await s.createTenant('lister-gone', 'pro');
    const keep = await put(s.apiUrl, k3, 'keep', { ttl: '7d' });
    const del = await put(s.apiUrl, k3, 'del', { ttl: '7d' });
    const exp = await put(s.apiUrl, k3, 'exp', { ttl: '1h', metadata: { stage: 'x' } });
    expect((await api(s.apiUrl, k3, 'GET', '/v1/artifacts')).json.artifacts).toHaveLength(3);
    await api(s.apiUrl, k3, 'DELETE', `/v1/artifacts/${del.artifact_id}`);
    clock.advance(HOUR_MS);
    const r = await api(s.apiUrl, k3, 'GET', '/v1/artifacts');
    expect(ids(r.json.artifacts)).toEqual([keep.artifact_id]);
    expect((await api(s.apiUrl, k3, 'GET', '/v1/artifacts?metadata.stage=x')).json.artifacts).toEqual([]);
    expect(exp.artifact_id).toMatch(/^art_/);
  });
});
