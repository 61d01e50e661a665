import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * Third-party MCP clients, pinned devDependencies (never downloaded at test time): the official
 * MCP Inspector's CLI and the official conformance suite. They run on the Node that runs the tests.
 */
const modules = path.resolve(import.meta.dirname, '../../node_modules');

export const INSPECTOR_CLI = path.join(modules, '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
export const CONFORMANCE_CLI = path.join(modules, '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script with this Node (no CAIRN_* settings leak in). This Node also comes first on PATH,
 * because the Inspector's launcher starts its CLI as a plain `node` child.
 */
export function runNodeScript(args: string[], timeoutMs = 60_000): Promise<Run> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CAIRN_')) env[k] = v;
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
