import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A pid that ran on this host and has exited. */
export async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

/**
 * The staging folder a crashed process of this host leaves in `staging` (a blob folder's
 * `.staging`), holding a half-written upload. The host tag is read off the folder of a store
 * open there, which must exist.
 */
export async function crashedStagingFolder(staging: string): Promise<string> {
  const own = (await readdir(staging)).find((name) => /^\d+\.[0-9a-f]{12}\./.test(name));
  if (!own) throw new Error(`no open store's folder in ${staging}`);
  const folder = path.join(staging, `${await exitedPid()}.${own.split('.')[1]}.0a1b2c`);
  await mkdir(folder);
  await writeFile(path.join(folder, 'half-written'), 'partial');
  return folder;
}
