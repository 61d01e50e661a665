import { createHash, randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../src/ports/blob-store.js';

/** The optional methods of a BlobStore: what an adapter declares it implements (tus's per-extension suites). */
export type BlobCapability = 'presignGet' | 'presignUpload' | 'sweepStaging';
const CAPABILITIES: readonly BlobCapability[] = ['presignGet', 'presignUpload', 'sweepStaging'];

export interface BlobStoreFixture {
  store: BlobStore;
  cleanup: () => Promise<void>;
  /**
   * With `sweepStaging`: leaves in the store's staging what a process that stopped mid-upload
   * would leave (after init), so that the sweep has one leftover to remove.
   */
  leaveStaleStaging?: () => Promise<void>;
}

/**
 * The BlobStore contract, run by every adapter (local folder, S3-compatible storage): the methods
 * every store has, then one section per optional method the adapter declares in `capabilities`.
 * A store must implement exactly what it declares, so a capability cannot be added untested.
 */
export function blobStoreContract(
  name: string,
  make: () => Promise<BlobStoreFixture>,
  capabilities: readonly BlobCapability[] = [],
): void {
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const tenant = () => `ten_${randomBytes(6).toString('hex')}`;

  /** A source that produces `total` bytes of a repeating pattern without holding them. */
  function generated(total: number): { stream: Readable; hash: Promise<string> } {
    const h = createHash('sha256');
    const chunk = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = i % 251;
    let left = total;
    let resolve!: (s: string) => void;
    const hash = new Promise<string>((r) => {
      resolve = r;
    });
    const stream = new Readable({
      read() {
        if (left === 0) {
          resolve(h.digest('hex'));
          this.push(null);
          return;
        }
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        h.update(part);
        this.push(part);
      },
    });
    return { stream, hash };
  }

  async function readAll(s: Readable): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const p of s) parts.push(p as Buffer);
    return Buffer.concat(parts);
  }

  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let fixture: BlobStoreFixture;

    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
      await store.init();
    });
    afterEach(async () => fixture.cleanup());

    it(`implements exactly the optional methods it declares (${capabilities.join(', ') || 'none'})`, () => {
      for (const method of CAPABILITIES) {
        expect(typeof store[method] === 'function', method).toBe(capabilities.includes(method));
      }
    });

    async function put(t: string, data: Buffer): Promise<string> {
      const staged = await store.stage(Readable.from([data]), data.length + 10);
      const key = `${t}/${staged.sha256}`;
      await store.commit(staged, key);
      return key;
    }

    it('stages with the right hash and size, commits, and reads back', async () => {
      const data = Buffer.from('hello, cairn');
      const staged = await store.stage(Readable.from([data]), 100);
      expect(staged).toMatchObject({ sizeBytes: data.length, sha256: sha(data) });
      const key = `${tenant()}/${staged.sha256}`;
      expect(await store.stat(key)).toBeNull();
      await store.commit(staged, key);
      expect(await store.stat(key)).toEqual({ sizeBytes: data.length });
      expect(await readAll(await store.read(key))).toEqual(data);
    });

    it('handles an empty blob', async () => {
      const staged = await store.stage(Readable.from([]), 10);
      expect(staged).toMatchObject({ sizeBytes: 0, sha256: sha(Buffer.alloc(0)) });
      const key = `${tenant()}/${staged.sha256}`;
      await store.commit(staged, key);
      expect(await store.stat(key)).toEqual({ sizeBytes: 0 });
    });

    it('reads inclusive byte ranges: first byte, middle, last byte', async () => {
      const data = Buffer.from('0123456789');
      const key = await put(tenant(), data);
      expect((await readAll(await store.read(key, { start: 0, end: 0 }))).toString()).toBe('0');
      expect((await readAll(await store.read(key, { start: 3, end: 6 }))).toString()).toBe('3456');
      expect((await readAll(await store.read(key, { start: 9, end: 9 }))).toString()).toBe('9');
    });

    it('reads piped into a target that flushes late: every byte, whole and in ranges', async () => {
      const data = randomBytes(3 * 1024 * 1024 + 17);
      const key = await put(tenant(), data);
      for (const range of [undefined, { start: 1_000_000, end: 2_200_000 }, { start: 5, end: 5 }]) {
        // Done with a chunk only when it calls back, and copies it then: a buffer the store
        // reused before that shows up as wrong bytes.
        const copies: Buffer[] = [];
        const target = new Writable({
          highWaterMark: 16 * 1024,
          write(chunk: Buffer, _enc, callback) {
            setImmediate(() => {
              copies.push(Buffer.from(chunk));
              callback();
            });
          },
        });
        await pipeline(await store.read(key, range), target);
        expect(Buffer.concat(copies).equals(range ? data.subarray(range.start, range.end + 1) : data)).toBe(true);
      }
    });

    it('keeps one copy when the same content is committed twice, also concurrently', async () => {
      const t = tenant();
      const data = Buffer.from('same bytes');
      const [a, b] = await Promise.all([
        store.stage(Readable.from([data]), 100),
        store.stage(Readable.from([data]), 100),
      ]);
      const key = `${t}/${sha(data)}`;
      await Promise.all([store.commit(a, key), store.commit(b, key)]);
      expect(await text(await store.read(key))).toBe('same bytes');
      await store.commit(await store.stage(Readable.from([data]), 100), key);
      expect(await store.stat(key)).toEqual({ sizeBytes: data.length });
    });

    it('passes exactly at the size limit and refuses one byte over, keeping nothing', async () => {
      const ok = await store.stage(Readable.from([Buffer.alloc(64)]), 64);
      expect(ok.sizeBytes).toBe(64);
      await store.discard(ok);
      await store.discard(ok);
      await expect(store.stage(Readable.from([Buffer.alloc(65)]), 64)).rejects.toMatchObject({
        code: 'file_too_large',
      });
    });

    it('rejects with the source error when the source fails half-way', async () => {
      let sent = 0;
      const failing = new Readable({
        read() {
          sent++;
          if (sent > 3) this.destroy(new Error('client went away'));
          else this.push(Buffer.alloc(1024));
        },
      });
      await expect(store.stage(failing, 1024 * 1024)).rejects.toThrow(/client went away/);
    });

    it('rejects a read of a missing key, and deletes idempotently', async () => {
      const key = `${tenant()}/${sha(Buffer.from('nothing here'))}`;
      await expect(store.read(key)).rejects.toThrow();
      const real = await put(tenant(), Buffer.from('to delete'));
      await store.delete(real);
      await store.delete(real);
      expect(await store.stat(real)).toBeNull();
    });

    it('streams a 64 MiB blob through without holding it, hash intact', async () => {
      const size = 64 * 1024 * 1024;
      const { stream, hash } = generated(size);
      const staged = await store.stage(stream, size);
      expect(staged.sizeBytes).toBe(size);
      expect(staged.sha256).toBe(await hash);
      const key = `${tenant()}/${staged.sha256}`;
      await store.commit(staged, key);
      const check = createHash('sha256');
      let n = 0;
      for await (const part of await store.read(key)) {
        check.update(part as Buffer);
        n += (part as Buffer).length;
      }
      expect(n).toBe(size);
      expect(check.digest('hex')).toBe(staged.sha256);
    }, 120_000);

    describe('landing objects', () => {
      const landing = (t: string, name = `art_${randomBytes(8).toString('hex')}`) => `uploads/${t}/${name}`;
      /** `good` bytes, then the source fails, as a dropped connection does. */
      const cutOff = (good: Buffer) =>
        new Readable({
          read() {
            this.push(good);
            this.destroy(new Error('connection reset'));
          },
        });

      it('lands, reads back, stages for a commit, and keeps the landing until it is dropped', async () => {
        for (const size of [10, 70 * 1024, 1024 * 1024 + 1]) {
          const t = tenant();
          const data = randomBytes(size);
          const key = landing(t, `art_${randomBytes(8).toString('hex')}.0.0123456789abcdef`);
          expect(await store.land(key, Readable.from([data]), size)).toMatchObject({ sizeBytes: size, complete: true });
          expect(sha(await readAll(await store.readLanded(key)))).toBe(sha(data));
          const staged = await store.stageLanded(key, size);
          expect(staged).toMatchObject({ sizeBytes: size, sha256: sha(data) });
          await store.commit(staged!, `${t}/${sha(data)}`);
          await store.discard(staged!);
          expect(sha(await readAll(await store.read(`${t}/${sha(data)}`)))).toBe(sha(data));
          // Still there for a completion that has to run again.
          expect(sha(await readAll(await store.readLanded(key)))).toBe(sha(data));
          await store.dropLanded(key);
          await store.dropLanded(key);
          await expect(store.readLanded(key)).rejects.toThrow();
          expect(await store.stageLanded(key, size)).toBeNull();
        }
      });

      it('returns the size and hash of what it landed, and stages it from them without reading it again', async () => {
        for (const size of [10, 1024 * 1024 + 1]) {
          const t = tenant();
          const data = randomBytes(size);
          const key = landing(t);
          const landed = await store.land(key, Readable.from([data]), size);
          expect(landed).toEqual({ sizeBytes: size, complete: true, sha256: sha(data) });
          const staged = await store.stageLanded(key, size, landed);
          expect(staged).toMatchObject({ sizeBytes: size, sha256: sha(data) });
          await store.commit(staged!, `${t}/${sha(data)}`);
          await store.discard(staged!);
          expect(sha(await readAll(await store.read(`${t}/${sha(data)}`)))).toBe(sha(data));
          // A result that does not describe the object (another size) finds nothing to stage.
          expect(await store.stageLanded(key, size + 1, { ...landed, sizeBytes: size + 1 })).toBeNull();
          await expect(store.stageLanded(key, size - 1, landed)).rejects.toMatchObject({ code: 'file_too_large' });
        }
      });

      it('keeps what arrived when the source fails part-way', async () => {
        const key = landing(tenant());
        const good = randomBytes(300_000);
        expect(await store.land(key, cutOff(good), 10_000_000)).toEqual({
          sizeBytes: good.length,
          complete: false,
          sha256: sha(good),
        });
        expect(sha(await readAll(await store.readLanded(key)))).toBe(sha(good));
      });

      it('refuses more than maxBytes, keeping nothing', async () => {
        const key = landing(tenant());
        await expect(store.land(key, Readable.from([randomBytes(2000)]), 1000)).rejects.toMatchObject({
          code: 'file_too_large',
        });
        await expect(store.readLanded(key)).rejects.toThrow();
        await expect(store.stageLanded(key, 5000)).resolves.toBeNull();
        const staged = await store.land(key, Readable.from([randomBytes(2000)]), 5000);
        expect(staged.sizeBytes).toBe(2000);
        await expect(store.stageLanded(key, 1000)).rejects.toMatchObject({ code: 'file_too_large' });
      });

      it('sweeps landings older than the cutoff only', async () => {
        const key = landing(tenant());
        await store.land(key, Readable.from([Buffer.from('left behind')]), 100);
        await store.sweepLandings(Date.now() - 3600_000);
        expect(await readAll(await store.readLanded(key))).toEqual(Buffer.from('left behind'));
        expect(await store.sweepLandings(Date.now() + 3600_000)).toBeGreaterThanOrEqual(1);
        await expect(store.readLanded(key)).rejects.toThrow();
      });

      it('refuses keys outside the landing area', async () => {
        for (const bad of ['uploads/../x', `uploads/${tenant()}/../../etc`, 'staging/abc', `uploads/${tenant()}/a/b`]) {
          await expect(store.land(bad, Readable.from([Buffer.from('x')]), 10)).rejects.toThrow(/invalid landing key/);
          await expect(store.readLanded(bad)).rejects.toThrow(/invalid landing key/);
        }
      });
    });

    describe.runIf(capabilities.includes('presignGet'))('capability: presignGet', () => {
      it('signs a GET of the object that answers its bytes as a named attachment of its type', async () => {
        const t = tenant();
        const data = Buffer.from('# report\n');
        const key = await put(t, data);
        const url = await store.presignGet!(key, 'résumé "final".md', 'text/markdown', 60);
        const res = await fetch(url);
        expect(res.status).toBe(200);
        expect(Buffer.from(await res.arrayBuffer())).toEqual(data);
        expect(res.headers.get('content-type')).toBe('text/markdown');
        const disposition = res.headers.get('content-disposition') ?? '';
        expect(disposition).toMatch(/^attachment; /);
        expect(disposition).toContain(`filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.md`);
      });
    });

    describe.runIf(capabilities.includes('presignUpload'))('capability: presignUpload', () => {
      it('signs a PUT of the declared size to a landing object, staged like any landing', async () => {
        const data = randomBytes(100_000);
        const key = `uploads/${tenant()}/art_${randomBytes(8).toString('hex')}`;
        expect(await store.stageLanded(key, data.length)).toBeNull();
        const { url, headers } = await store.presignUpload!(key, data.length, 60);
        const res = await fetch(url, { method: 'PUT', headers, body: data });
        expect(res.status).toBe(200);
        const staged = await store.stageLanded(key, data.length);
        expect(staged).toMatchObject({ sizeBytes: data.length, sha256: sha(data) });
        await store.discard(staged!);
        await store.dropLanded(key);
      });

      it('refuses to sign for a key outside the landing area', async () => {
        await expect(store.presignUpload!('../x', 1, 60)).rejects.toThrow(/invalid landing key/);
        await expect(store.presignUpload!('staging/x', 1, 60)).rejects.toThrow(/invalid landing key/);
      });
    });

    describe.runIf(capabilities.includes('sweepStaging'))('capability: sweepStaging', () => {
      it('removes what a stopped process left in staging, and nothing of a running upload', async () => {
        expect(fixture.leaveStaleStaging, 'the fixture leaves stale staging').toBeTypeOf('function');
        const source = new Readable({ read() {} });
        const running = store.stage(source, 10_000_000);
        source.push(randomBytes(200_000));
        await fixture.leaveStaleStaging?.();
        expect(await store.sweepStaging!()).toBe(1);
        expect(await store.sweepStaging!()).toBe(0);
        source.push(null);
        const staged = await running;
        expect(staged.sizeBytes).toBe(200_000);
        await store.discard(staged);
      });
    });
  });
}
