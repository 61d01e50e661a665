import { describe, expect, it } from 'vitest';
import { BoundOrigins } from '../../src/bound-origins.js';

const configured = {
  api: 'http://127.0.0.1:0',
  viewer: 'http://localhost:0',
  content: 'http://127.0.0.1:0',
  download: 'http://127.0.0.1:0',
};
const bound = {
  api: 'http://127.0.0.1:18750',
  viewer: 'http://localhost:18751',
  content: 'http://127.0.0.1:18752',
  download: 'https://dl.example',
};

describe('BoundOrigins', () => {
  it('answers the configured origins until settled, then the bound ones, read through any reference', () => {
    const origins = new BoundOrigins(configured);
    const { api } = origins;
    expect(api).toBe(configured.api);
    const heldByTheCore: { api: string; download: string } = origins;
    origins.settle(bound);
    expect(heldByTheCore.api).toBe(bound.api);
    expect([origins.viewer, origins.content, origins.download]).toEqual([bound.viewer, bound.content, bound.download]);
  });

  it('is settled once, and copies what it is given', () => {
    const given = { ...bound };
    const origins = new BoundOrigins(configured);
    origins.settle(given);
    given.api = 'http://elsewhere.example';
    expect(origins.api).toBe(bound.api);
    expect(() => origins.settle(configured)).toThrow(/already settled/);
    expect(origins.api).toBe(bound.api);
  });
});
