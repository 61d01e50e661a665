import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, childEnv } from '../helpers/process.js';

/**
 * `cairn … | head -1`: the reader closes the pipe after its first line, and the command's next
 * write fails with EPIPE. The command must end quietly (no stack trace on stderr), as a shell
 * user expects of any tool piped into `head`.
 */
function runIntoClosingReader(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // As `head` does once it has its lines, but before the first write, so that every write of the
    // command meets the closed pipe (after its first chunk, the rest might fit in the pipe's buffer).
    child.stdout.destroy();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('a reader that stops early', () => {
  it('ends `cairn admin --help` quietly, with no stack trace', async () => {
    const r = await runIntoClosingReader(['admin', '--help']);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled|at /);
    expect(r.code).toBe(0);
  });
});
