import { constants } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Whether files in `folder` can be opened with O_DIRECT (Linux, on a filesystem that takes it:
 * ext4 and xfs do, tmpfs does not). The O_DIRECT tests assert the direct path where it is, and
 * the page-cache fallback where it is not.
 */
export async function directIoWorks(folder: string): Promise<boolean> {
  if (constants.O_DIRECT === undefined) return false;
  const dir = await mkdtemp(path.join(folder, 'cairn-direct-probe-'));
  try {
    const h = await open(path.join(dir, 'probe'), constants.O_CREAT | constants.O_WRONLY | constants.O_DIRECT);
    await h.close();
    return true;
  } catch {
    return false;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
