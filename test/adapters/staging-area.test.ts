import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StagingArea } from '../../src/adapters/fs-blobs/staging-area.js';
import { eventually } from '../helpers/e2e.js';
import { exitedPid } from '../helpers/staging.js';

/** The staging folder shared by the processes that open one blob folder (see StagingArea). */

let root: string;
const opened: StagingArea[] = [];

beforeEach(async () => {
  root = path.join(await mkdtemp(path.join(tmpdir(), 'cairn-staging-')), '.staging');
  await mkdir(root);
});
afterEach(async () => {
  for (const area of opened.splice(0)) await area.close();
  vi.useRealTimers();
  await rm(path.dirname(root), { recursive: true, force: true });
});

async function openArea(opts: ConstructorParameters<typeof StagingArea>[1] = {}): Promise<StagingArea> {
  const area = new StagingArea(root, opts);
  opened.push(area);
  await area.open();
  return area;
}

/** The host tag this host's folders carry (the middle of an own folder's name). */
const hostTagOf = (area: StagingArea) => path.basename(area.dir).split('.')[1] as string;

/** A leftover entry: a folder holding a half-written upload, or a loose file. */
async function leftover(name: string, opts: { ageMs?: number; folder?: boolean } = {}): Promise<string> {
  const full = path.join(root, name);
  if (opts.folder === false) await writeFile(full, 'partial');
  else {
    await mkdir(full);
    await writeFile(path.join(full, 'half-written'), 'partial');
  }
  if (opts.ageMs) {
    const then = new Date(Date.now() - opts.ageMs);
    await utimes(full, then, then);
  }
  return full;
}

describe('StagingArea', () => {
  it('stages in a folder of its own, named for this process', async () => {
    const area = await openArea();
    expect(path.dirname(area.dir)).toBe(root);
    expect(path.basename(area.dir)).toMatch(new RegExp(`^${process.pid}\\.[0-9a-f]{12}\\.[0-9a-f]+$`));
    expect((await stat(area.dir)).isDirectory()).toBe(true);
  });

  it('a second opening (an admin command, another server) keeps what a running process is staging', async () => {
    const first = await openArea();
    await writeFile(path.join(first.dir, 'upload-in-flight'), 'bytes so far');
    const second = await openArea();
    expect(await second.sweep()).toBe(0);
    expect(existsSync(path.join(first.dir, 'upload-in-flight'))).toBe(true);
  });

  it('removes at once the folder of a process of this host that has exited (a crash, then a restart)', async () => {
    const tag = hostTagOf(await openArea());
    const dead = await leftover(`${await exitedPid()}.${tag}.a1b2c3`);
    const restarted = await openArea();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(restarted.dir)).toBe(true);
  });

  it('judges another host’s folder by its mark only: kept while fresh, removed once stale', async () => {
    const staleMs = 60_000;
    const area = await openArea({ staleMs });
    // The pid of this very process: no pid is checked for a host that is not this one.
    const fresh = await leftover(`${process.pid}.0123456789ab.a1b2c3`);
    const stale = await leftover(`${process.pid}.ba9876543210.d4e5f6`, { ageMs: staleMs + 5_000 });
    expect(await area.sweep()).toBe(1);
    expect(existsSync(fresh)).toBe(true);
    expect(existsSync(stale)).toBe(false);
  });

  it('a folder of a running pid of this host (a reused pid) goes once it is stale', async () => {
    const staleMs = 60_000;
    const area = await openArea({ staleMs });
    const reused = await leftover(`${process.pid}.${hostTagOf(area)}.a1b2c3`, { ageMs: staleMs + 5_000 });
    expect(await area.sweep()).toBe(1);
    expect(existsSync(reused)).toBe(false);
  });

  it('loose files (the layout before per-process folders) go once stale, not while fresh', async () => {
    const staleMs = 60_000;
    const area = await openArea({ staleMs });
    const fresh = await leftover('0f3c9d1e2b7a4c5d', { folder: false });
    const stale = await leftover('9a8b7c6d5e4f3a2b', { folder: false, ageMs: staleMs + 5_000 });
    expect(await area.sweep()).toBe(1);
    expect(existsSync(fresh)).toBe(true);
    expect(existsSync(stale)).toBe(false);
  });

  it('keeps marking its folder while open, so an idle process is never taken for a stopped one', async () => {
    const staleMs = 60_000;
    const area = await openArea({ heartbeatMs: 20, staleMs });
    const then = new Date(Date.now() - 2 * staleMs);
    await utimes(area.dir, then, then);
    await eventually(async () => Date.now() - (await stat(area.dir)).mtimeMs < staleMs, 5000, 'the mark');
    const other = await openArea({ staleMs });
    expect(await other.sweep()).toBe(0);
    expect(existsSync(area.dir)).toBe(true);
  });

  /**
   * The heartbeat fires only when a test advances the faked interval: a real one could remake the
   * folder in the middle of the test's own `rm -r`, which then fails with ENOTEMPTY.
   */
  async function openAreaWithManualHeartbeat(): Promise<{ area: StagingArea; beat: () => void }> {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const area = await openArea({ heartbeatMs: 1000 });
    return { area, beat: () => vi.advanceTimersToNextTimer() };
  }

  it('a sweep after the whole staging folder was removed from outside finds nothing, and the mark remakes it', async () => {
    const { area, beat } = await openAreaWithManualHeartbeat();
    await rm(root, { recursive: true });
    expect(await area.sweep()).toBe(0);
    beat();
    await eventually(() => existsSync(area.dir), 5000, 'the folder to be remade');
  });

  it('a staging file can be created at once after its folder was removed from outside', async () => {
    const area = await openArea();
    await rm(area.dir, { recursive: true });
    const handle = await area.createFile(path.join(area.dir, 'upload'));
    await handle.write('bytes');
    await handle.close();
    // A second file of that name is refused: staging files are never overwritten.
    await expect(area.createFile(path.join(area.dir, 'upload'))).rejects.toThrow(/EEXIST/);
  });

  it('remakes its folder if it is removed from outside, and close removes it with its contents', async () => {
    const { area, beat } = await openAreaWithManualHeartbeat();
    await rm(area.dir, { recursive: true });
    beat();
    await eventually(() => existsSync(area.dir), 5000, 'the folder to be remade');
    await writeFile(path.join(area.dir, 'left-by-an-aborted-upload'), 'partial');
    await area.close();
    expect(existsSync(area.dir)).toBe(false);
    // Closed: no more marks, so nothing remakes it.
    await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(area.dir)).toBe(false);
  });
});
