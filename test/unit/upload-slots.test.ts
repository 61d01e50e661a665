import { describe, expect, it } from 'vitest';
import { isCairnError } from '../../src/core/errors.js';
import { UPLOAD_SLOT_AFTER_BYTES, UploadSlots } from '../../src/core/upload-slots.js';
import { announcesLargeBody } from '../../src/http/upload-slots.js';

function refusal(take: () => unknown) {
  try {
    take();
  } catch (err) {
    if (isCairnError(err)) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('UploadSlots', () => {
  it('gives a tenant its limit of slots, then refuses with 429 rate_limited and a Retry-After', () => {
    const slots = new UploadSlots(2);
    slots.take('t1');
    slots.take('t1');
    expect(slots.inUse('t1')).toBe(2);
    const err = refusal(() => slots.take('t1'));
    expect(err.code).toBe('rate_limited');
    expect(err.status).toBe(429);
    expect(err.extras.retryAfterSeconds).toBe(5);
    expect(err.message).toMatch(/at most 2/);
    // A refusal takes nothing.
    expect(slots.inUse('t1')).toBe(2);
  });

  it('counts each tenant apart', () => {
    const slots = new UploadSlots(1);
    slots.take('t1');
    expect(() => slots.take('t2')).not.toThrow();
    expect(slots.inUse('t1')).toBe(1);
    expect(slots.inUse('t2')).toBe(1);
  });

  it('a release frees one slot, once however often it is called', () => {
    const slots = new UploadSlots(2);
    const first = slots.take('t1');
    slots.take('t1');
    first();
    first();
    expect(slots.inUse('t1')).toBe(1);
    slots.take('t1');
    expect(() => slots.take('t1')).toThrow();
  });

  it('0 is no limit', () => {
    const slots = new UploadSlots(0);
    for (let i = 0; i < 1000; i++) slots.take('t1');
    expect(slots.inUse('t1')).toBe(0);
  });
});

describe('announcesLargeBody', () => {
  it('is true past UPLOAD_SLOT_AFTER_BYTES or for a body of unknown length, false otherwise', () => {
    expect(announcesLargeBody({ 'content-length': String(UPLOAD_SLOT_AFTER_BYTES + 1) })).toBe(true);
    expect(announcesLargeBody({ 'transfer-encoding': 'chunked' })).toBe(true);
    expect(announcesLargeBody({ 'content-length': String(UPLOAD_SLOT_AFTER_BYTES) })).toBe(false);
    expect(announcesLargeBody({ 'content-length': '4096' })).toBe(false);
    expect(announcesLargeBody({})).toBe(false);
  });
});
