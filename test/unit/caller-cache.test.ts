import { describe, expect, it } from 'vitest';
import { CallerCache } from '../../src/core/caller-cache.js';
import type { Caller } from '../../src/core/tenants.js';

const caller = (n: number): Caller => ({
  tenant: { id: `ten_${n}`, name: `t${n}`, plan: 'free', suspended: false, createdAt: 0, storageBytes: 0 },
  key: { id: `key_${n}`, tenantId: `ten_${n}`, hash: `h${n}`, last4: '0000', createdAt: 0, revokedAt: null },
});

describe('CallerCache', () => {
  it('answers only under the epoch the lookup was read in', () => {
    const cache = new CallerCache();
    cache.set('h1', caller(1), 7, 0);
    expect(cache.get('h1', 7, 1)).toEqual(caller(1));
    expect(cache.get('h1', 8, 2)).toBeUndefined();
    // The stale entry is gone, not waiting for its old epoch to come back.
    expect(cache.get('h1', 7, 3)).toBeUndefined();
  });

  it('keeps nothing while the store cannot tell its epoch', () => {
    const cache = new CallerCache();
    cache.set('h1', caller(1), null, 0);
    expect(cache.get('h1', null, 0)).toBeUndefined();
    cache.set('h1', caller(1), 1, 0);
    expect(cache.get('h1', null, 0)).toBeUndefined();
  });

  it('forgets an entry after its TTL and drops the oldest beyond its size', () => {
    const cache = new CallerCache(2, 1000);
    cache.set('h1', caller(1), 1, 0);
    expect(cache.get('h1', 1, 999)).toBeDefined();
    expect(cache.get('h1', 1, 1000)).toBeUndefined();
    cache.set('h1', caller(1), 1, 0);
    cache.set('h2', caller(2), 1, 0);
    cache.set('h3', caller(3), 1, 0);
    expect(cache.get('h1', 1, 1)).toBeUndefined();
    expect(cache.get('h2', 1, 1)).toEqual(caller(2));
    expect(cache.get('h3', 1, 1)).toEqual(caller(3));
  });
});
