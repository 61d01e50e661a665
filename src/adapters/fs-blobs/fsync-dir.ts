import { open } from 'node:fs/promises';

/** fsyncs a folder, so that a name just created or renamed in it survives a crash of the machine. */
export async function fsyncDir(dir: string): Promise<void> {
  const h = await open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}
