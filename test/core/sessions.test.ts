import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../src/wire/index.js';
import { type CoreHarness, coreHarness, iso, START } from './harness.js';

/**
 * Sessions in the core (spec: Session; API.md: GET /v1/sessions, seal): a session exists once an
 * artifact names it; its counts and times; list order and pagination; sealing (irreversible, the
 * first sealed_at kept); and what deletion and expiry do to the counts.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const names = (list: { sessions: SessionRecord[] }) => list.sessions.map((s) => s.session_id);

describe('the session record', () => {
  it('counts the session’s artifacts and spans its first and last artifact', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, '1', { sessionId: 'run-1' });
    h.clock.advance(60_000);
    await h.upload(t, '2', { sessionId: 'run-1' });
    await h.upload(t, 'other', { sessionId: 'run-2' });
    h.clock.advance(60_000);
    await h.upload(t, '3', { sessionId: 'run-1' });
    await h.upload(t, 'no session');
    const { sessions } = await h.core.sessions.list(t, {});
    expect(sessions.find((s) => s.session_id === 'run-1')).toEqual({
      session_id: 'run-1',
      artifact_count: 3,
      is_sealed: false,
      sealed_at: null,
      first_artifact_at: iso(START),
      last_artifact_at: iso(START + 120_000),
    });
    expect(sessions).toHaveLength(2);
  });

  it('counts live artifacts only: a soft delete and an expiry take one off at once', async () => {
    const t = await h.tenant('acme');
    const a = await h.upload(t, 'a', { sessionId: 'run-1' });
    await h.upload(t, 'b', { sessionId: 'run-1', ttl: '1h' });
    await h.upload(t, 'c', { sessionId: 'run-1' });
    await h.core.artifacts.softDelete(t, a.artifact_id);
    expect((await h.core.sessions.list(t, {})).sessions[0]?.artifact_count).toBe(2);
    h.clock.advance(3_600_000);
    // No sweeper has run: the list settles the tenant's expiry itself (docs/api.md, whoami).
    expect((await h.core.sessions.list(t, {})).sessions[0]?.artifact_count).toBe(1);
    expect((await h.core.sessions.get(t, 'run-1')).artifact_count).toBe(1);
    expect((await h.core.sessions.seal(t, 'run-1')).artifact_count).toBe(1);
  });

  it('one session read alone settles expiry as the list does', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'a', { sessionId: 'run-1', ttl: '1h' });
    await h.upload(t, 'b', { sessionId: 'run-1' });
    h.clock.advance(3_600_000);
    expect((await h.core.sessions.get(t, 'run-1')).artifact_count).toBe(1);
  });

  it('is per tenant: another tenant’s run-1 is its own session', async () => {
    const a = await h.tenant('a');
    const b = await h.tenant('b');
    await h.upload(a, '1', { sessionId: 'run-1' });
    await h.upload(a, '2', { sessionId: 'run-1' });
    await h.upload(b, '1', { sessionId: 'run-1' });
    expect((await h.core.sessions.list(b, {})).sessions).toMatchObject([{ session_id: 'run-1', artifact_count: 1 }]);
  });
});

describe('the session list', () => {
  it('is ordered last_artifact_at DESC, then session_id DESC', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, '1', { sessionId: 'alpha' });
    await h.upload(t, '1', { sessionId: 'beta' });
    h.clock.advance(1000);
    await h.upload(t, '1', { sessionId: 'gamma' });
    h.clock.advance(1000);
    // alpha becomes the most recently active.
    await h.upload(t, '2', { sessionId: 'alpha' });
    expect(names(await h.core.sessions.list(t, {}))).toEqual(['alpha', 'gamma', 'beta']);
  });

  it('pages through every session once with next_cursor (and its alias after)', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 5; i++) {
      await h.upload(t, 'x', { sessionId: `run-${i}` });
      if (i % 2) h.clock.advance(1);
    }
    const first = await h.core.sessions.list(t, { limit: '2' });
    expect(first.has_more).toBe(true);
    const second = await h.core.sessions.list(t, { limit: '2', cursor: first.next_cursor as string });
    const third = await h.core.sessions.list(t, { limit: '2', after: second.next_cursor as string });
    expect(third).toMatchObject({ next_cursor: null, has_more: false });
    expect([...names(first), ...names(second), ...names(third)]).toEqual(names(await h.core.sessions.list(t, {})));
    expect(names(third)).toHaveLength(1);
  });

  it('created_after and created_before are exclusive bounds on the session’s first artifact', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'x', { sessionId: 'early' });
    h.clock.advance(1000);
    await h.upload(t, 'x', { sessionId: 'middle' });
    h.clock.advance(1000);
    await h.upload(t, 'x', { sessionId: 'late' });
    // A later artifact of `early` moves its last_artifact_at, not its first.
    await h.upload(t, 'y', { sessionId: 'early' });
    const list = async (q: Record<string, string>) => names(await h.core.sessions.list(t, q)).sort();
    expect(await list({ created_after: iso(START) })).toEqual(['late', 'middle']);
    expect(await list({ created_before: iso(START + 2000) })).toEqual(['early', 'middle']);
    expect(await list({ created_after: iso(START), created_before: iso(START + 2000) })).toEqual(['middle']);
  });

  it('refuses a malformed cursor, a bad limit and unknown parameters with invalid_request', async () => {
    const t = await h.tenant('acme');
    for (const q of [{ cursor: '%%%' }, { limit: '0' }, { limit: '201' }, { session_id: 'run-1' }]) {
      await expect(h.core.sessions.list(t, q)).rejects.toMatchObject({ code: 'invalid_request' });
    }
    const artifactCursor = Buffer.from(JSON.stringify([START, 'has space'])).toString('base64url');
    await expect(h.core.sessions.list(t, { cursor: artifactCursor })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});

describe('sealing', () => {
  it('answers {session_id, status: sealed, sealed_at, artifact_count} and shows in the list', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, '1', { sessionId: 'run-1' });
    await h.upload(t, '2', { sessionId: 'run-1' });
    h.clock.advance(10_000);
    expect(await h.core.sessions.seal(t, 'run-1')).toEqual({
      session_id: 'run-1',
      status: 'sealed',
      sealed_at: iso(START + 10_000),
      artifact_count: 2,
    });
    expect((await h.core.sessions.list(t, {})).sessions[0]).toMatchObject({
      is_sealed: true,
      sealed_at: iso(START + 10_000),
    });
  });

  it('again answers the original sealed_at, later too', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, '1', { sessionId: 'run-1' });
    const first = await h.core.sessions.seal(t, 'run-1');
    h.clock.advance(3_600_000);
    expect(await h.core.sessions.seal(t, 'run-1')).toEqual(first);
  });

  it('an unknown session is session_not_found (404), also another tenant’s and a malformed id', async () => {
    const a = await h.tenant('a');
    const b = await h.tenant('b');
    await h.upload(a, '1', { sessionId: 'run-1' });
    for (const id of ['never-used', 'run-1', 'has space', '']) {
      await expect(h.core.sessions.seal(b, id)).rejects.toMatchObject({ code: 'session_not_found', status: 404 });
    }
    // b's refusal sealed nothing of a's.
    expect((await h.core.sessions.list(a, {})).sessions[0]?.is_sealed).toBe(false);
  });

  it('still works once every artifact of the session is gone (the session exists), with a count of 0', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, '1', { sessionId: 'run-1' });
    await h.core.artifacts.softDelete(t, rec.artifact_id);
    await expect(h.core.sessions.seal(t, 'run-1')).resolves.toMatchObject({ status: 'sealed', artifact_count: 0 });
    await expect(h.upload(t, 'late', { sessionId: 'run-1' })).rejects.toMatchObject({ code: 'session_sealed' });
  });
});
