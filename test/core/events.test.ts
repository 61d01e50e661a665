import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/wire/index.js';
import { type CoreHarness, codeOf, coreHarness, DAY_MS, iso, START } from './harness.js';

/**
 * The change feed in the core (issue 55): each change records its event with the change, shown
 * as the record the API returns for its subject; the list's filters, order and pages; tenant
 * isolation; no secrets; retention swept by the sweeper.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const types = (events: EventRecord[]) => events.map((e) => e.type);

describe('events recorded with each change', () => {
  it('shows each event with the record the API returns for what it concerns', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'hello', { filename: 'a.md', sessionId: 'run-42', metadata: { step: 1 } });
    h.clock.advance(1000);
    const published = await h.core.pages.publish(t, rec.artifact_id, {
      visibility: 'unlisted',
      access: 'password',
      password: 'correct horse battery',
      title: 'Report',
    });
    const link = await h.core.sharing.createLink(t, rec.artifact_id, {});
    await h.core.sharing.revokeLink(t, link.link_id);
    await h.core.sessions.seal(t, 'run-42');
    await h.core.pages.unpublish(t, rec.artifact_id);
    await h.core.artifacts.softDelete(t, rec.artifact_id);

    const { events, has_more, next_cursor } = await h.core.events.list(t, {});
    expect(types(events)).toEqual([
      'artifact.created',
      'page.published',
      'link.created',
      'link.revoked',
      'session.sealed',
      'page.unpublished',
      'artifact.deleted',
    ]);
    expect(has_more).toBe(false);
    expect(next_cursor).toBeNull();
    expect(events.map((e) => e.event_id)).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((n) => `evt_${String(n).padStart(16, '0')}`),
    );
    expect(events[0]).toEqual({
      event_id: 'evt_0000000000000001',
      type: 'artifact.created',
      created_at: iso(START),
      data: rec,
    });
    expect(events[1]!.data).toEqual({
      page_id: published.page_id,
      artifact_id: rec.artifact_id,
      public_url: published.public_url,
      visibility: 'unlisted',
      access: 'password',
      title: 'Report',
      live: true,
      taken_down: false,
    });
    expect(events[2]!.data).toEqual(link);
    expect(events[4]!.data).toMatchObject({ session_id: 'run-42', is_sealed: true, artifact_count: 1 });
    expect(events[6]!.data).toMatchObject({ artifact_id: rec.artifact_id, filename: 'a.md', page: null });
    // Never the password or its hash.
    const text = JSON.stringify(events);
    expect(text).not.toContain('argon2');
    expect(text).not.toContain('correct horse');
  });

  it('records a session link created and revoked, with the record its creation answered', async () => {
    const t = await h.tenant('acme');
    const other = await h.tenant('other');
    await h.upload(t, 'report', { sessionId: 'run-9' });
    await h.core.sessions.seal(t, 'run-9');
    const link = await h.core.sharing.createSessionLink(t, 'run-9', { expiresIn: 3600 });
    h.clock.advance(1000);
    await h.core.sharing.revokeLink(t, link.link_id);
    await h.core.sharing.revokeLink(t, link.link_id); // again: no change, no event
    const { events } = await h.core.events.list(t, { types: 'session_link.*' });
    expect(types(events)).toEqual(['session_link.created', 'session_link.revoked']);
    expect(events[0]!.data).toEqual(link);
    // A revoke ends the link's life at its time.
    expect(events[1]!.data).toEqual({ ...link, expires_at: iso(START + 1000) });
    expect(events[1]!.created_at).toBe(iso(START + 1000));
    expect((await h.core.events.list(t, { session_id: 'run-9', types: 'session_link.revoked' })).events).toHaveLength(
      1,
    );
    expect((await h.core.events.list(other, {})).events).toEqual([]);
  });

  it('records an expiry and an operator takedown, for the owner only', async () => {
    const t = await h.tenant('acme');
    const other = await h.tenant('other');
    const rec = await h.upload(t, 'short', { ttl: '1h' });
    const page = await h.core.pages.publish(t, rec.artifact_id, { visibility: 'unlisted' });
    await h.core.pages.takeDown(page.page_id);
    h.clock.advance(2 * 3_600_000);
    await h.core.sweeper.runOnce();
    expect(types((await h.core.events.list(t, {})).events)).toEqual([
      'artifact.created',
      'page.published',
      'page.taken_down',
      'artifact.expired',
    ]);
    expect((await h.core.events.list(other, {})).events).toEqual([]);
  });

  it('records nothing for an upload the store refuses', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'one', { sessionId: 'run-1' });
    await h.core.sessions.seal(t, 'run-1');
    expect(await codeOf(h.upload(t, 'two', { sessionId: 'run-1' }))).toBe('session_sealed');
    // A replay of an idempotent upload is not a change either.
    await h.upload(t, 'three', { idempotencyKey: 'k1' });
    await h.upload(t, 'three', { idempotencyKey: 'k1' });
    expect(types((await h.core.events.list(t, {})).events)).toEqual([
      'artifact.created',
      'session.sealed',
      'artifact.created',
    ]);
  });
});

describe('GET /v1/events', () => {
  it('pages oldest first and resumes after a cursor or an event id', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 5; i++) await h.upload(t, `n${i}`, { sessionId: i % 2 ? 'odd' : 'even' });
    const first = await h.core.events.list(t, { limit: '2' });
    expect(first.events.map((e) => e.data)).toMatchObject([{ filename: 'file.txt' }, { filename: 'file.txt' }]);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBe(first.events[1]!.event_id);
    const second = await h.core.events.list(t, { limit: '2', cursor: first.next_cursor! });
    expect(second.events.map((e) => e.event_id)).toEqual(['evt_0000000000000003', 'evt_0000000000000004']);
    const rest = await h.core.events.list(t, { after: second.events[1]!.event_id });
    expect(rest.events.map((e) => e.event_id)).toEqual(['evt_0000000000000005']);
    expect(rest).toMatchObject({ has_more: false, next_cursor: null });
    const odd = await h.core.events.list(t, { session_id: 'odd' });
    expect(odd.events.map((e) => e.event_id)).toEqual(['evt_0000000000000002', 'evt_0000000000000004']);
  });

  it('filters by types, with prefixes, and refuses what it does not know', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'x', { sessionId: 's' });
    await h.core.sessions.seal(t, 's');
    await h.core.artifacts.softDelete(t, rec.artifact_id);
    expect(types((await h.core.events.list(t, { types: 'session.sealed' })).events)).toEqual(['session.sealed']);
    expect(types((await h.core.events.list(t, { types: 'artifact.*' })).events)).toEqual([
      'artifact.created',
      'artifact.deleted',
    ]);
    expect(types((await h.core.events.list(t, { types: 'artifact.deleted, session.sealed' })).events)).toEqual([
      'session.sealed',
      'artifact.deleted',
    ]);
    for (const bad of [
      { types: 'artifact.made' },
      { types: 'nope.*' },
      { after: 'art_0000000000000000' },
      { after: 'evt_1' },
      { cursor: 'evt_0000000000000001', after: 'evt_0000000000000001' },
      { session_id: '../x' },
      { limit: '0' },
      { since: 'yesterday' },
    ]) {
      expect(await codeOf(h.core.events.list(t, bad)), JSON.stringify(bad)).toBe('invalid_request');
    }
  });
});

describe('retention', () => {
  it('the sweeper drops events older than 7 days, and the numbering goes on', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'old');
    h.clock.advance(6 * DAY_MS);
    await h.upload(t, 'newer');
    h.clock.advance(DAY_MS + 1);
    const report = await h.core.sweeper.runOnce();
    expect(report.eventsPurged).toBe(1);
    await h.upload(t, 'newest');
    expect((await h.core.events.list(t, {})).events.map((e) => e.event_id)).toEqual([
      'evt_0000000000000002',
      'evt_0000000000000003',
    ]);
  });

  it('keeps them as long as CAIRN_EVENT_RETENTION_SECONDS says', async () => {
    await h.close();
    h = await coreHarness({ env: { CAIRN_EVENT_RETENTION_SECONDS: String(30 * 86_400) } });
    const t = await h.tenant('acme');
    await h.upload(t, 'old');
    h.clock.advance(8 * DAY_MS);
    expect((await h.core.sweeper.runOnce()).eventsPurged).toBe(0);
    h.clock.advance(23 * DAY_MS);
    expect((await h.core.sweeper.runOnce()).eventsPurged).toBe(1);
  });
});
