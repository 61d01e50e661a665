import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/process.js';

/**
 * bin/cairn.js turns on Node's compile cache in the user's own cache folder: never the shared
 * /tmp, where another local user could have planted compiled code, and off when asked.
 */
describe("cairn's compile cache", () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'cairn-cc-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });
  /** `cairn --version` without the parent's cache settings (Node reads NODE_DISABLE_COMPILE_CACHE='' as "off"). */
  const version = (extra: Record<string, string>) => {
    const env: Record<string, string> = { HOME: home, PATH: process.env.PATH ?? '', ...extra };
    const run = spawnSync(process.execPath, [BIN, '--version'], { env, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
  };

  it('is kept under ~/.cache/cairn/compile-cache, filled by a run', async () => {
    version({});
    const dir = path.join(home, '.cache', 'cairn', 'compile-cache');
    const versions = await readdir(dir);
    expect(versions).toHaveLength(1);
    expect((await readdir(path.join(dir, versions[0] as string))).length).toBeGreaterThan(0);
  });

  it('follows XDG_CACHE_HOME', async () => {
    const xdg = path.join(home, 'xdg');
    version({ XDG_CACHE_HOME: xdg });
    expect(existsSync(path.join(xdg, 'cairn', 'compile-cache'))).toBe(true);
  });

  it('is not written with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const xdg = path.join(home, 'off');
    version({ XDG_CACHE_HOME: xdg, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(existsSync(path.join(xdg, 'cairn'))).toBe(false);
  });
});
