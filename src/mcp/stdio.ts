import { homedir } from 'node:os';
import path from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CairnClient } from 'cairn-store-sdk';
import { CAIRN_VERSION } from 'cairn-store-sdk/internal';
import { INLINE_UPLOAD_BYTES } from '../shared/upload-limits.js';
import { PathConfinement, parseAllowPaths } from './paths.js';
import { createLocalServer, MCP_SERVER_VERSION } from './server.js';

/** `cairn mcp`: the local stdio MCP server. stdout carries protocol messages only; the rest goes to stderr. */

export interface StdioOptions {
  /** The key and the URL it goes to, resolved as for every CLI command (env first, then the profile). */
  apiKey: string;
  apiUrl: string;
  /** Where the key came from ('CAIRN_API_KEY', 'profile "default" in …'), for the start-up line. */
  keySource: string;
  /** Repeatable --allow-path values (each may be ':'-separated). */
  allowPath: string[];
  /** --allow-destructive (command line only). */
  allowDestructive: boolean;
}

/**
 * The longest JSON-RPC message stdin may carry. The SDK's default, 10 MiB, is less than a
 * store_artifact of a 10 MiB file in base64 (about 14 MB), and a message over it closes the
 * connection without a word; this takes that, or 10 MiB of `text` with every other character
 * escaped, with room for the rest of the call.
 */
const MAX_MESSAGE_BYTES = 2 * Math.ceil((INLINE_UPLOAD_BYTES * 4) / 3) + 256 * 1024;

/** A startup problem the CLI reports with exit code 2. */
export class McpStartupError extends Error {}

/** Cairn config dirs on the deny-list besides ~/.config/cairn. */
function configDirs(env: NodeJS.ProcessEnv): string[] {
  const dirs: string[] = [];
  if (env.CAIRN_CONFIG_DIR) dirs.push(env.CAIRN_CONFIG_DIR);
  if (env.XDG_CONFIG_HOME) dirs.push(path.join(env.XDG_CONFIG_HOME, 'cairn'));
  return dirs;
}

/** Runs until the client closes stdin. */
export async function runStdioServer(opts: StdioOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { apiKey } = opts;
  let roots: string[];
  try {
    roots = parseAllowPaths(opts.allowPath, env.CAIRN_MCP_ALLOW_PATH);
  } catch (err) {
    throw new McpStartupError((err as Error).message);
  }
  const confinement = await PathConfinement.create({
    cwd: process.cwd(),
    roots,
    home: homedir(),
    configDirs: configDirs(env),
  });

  // Anything a library prints must not corrupt the protocol stream.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;

  const client = new CairnClient({
    apiKey,
    baseUrl: opts.apiUrl,
    userAgent: `cairn-mcp/${MCP_SERVER_VERSION} node/${process.versions.node}`,
  });
  const server = createLocalServer({
    client,
    keyHint: apiKey.slice(-4),
    openLocalFile: (p) => confinement.open(p),
    allowDestructive: opts.allowDestructive,
    audit: (line) => process.stderr.write(`${line}\n`),
    pathRoots: confinement.roots,
    events: client,
  });
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: MAX_MESSAGE_BYTES });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  process.stderr.write(
    `cairn mcp ${MCP_SERVER_VERSION} (Cairn ${CAIRN_VERSION}): ${client.baseUrl}, key …${apiKey.slice(-4)} from ${opts.keySource}, ` +
      `path uploads under ${confinement.roots.join(', ') || 'no folder (add one with --allow-path)'}, destructive tools ${
        opts.allowDestructive ? 'allowed' : 'only with host confirmation'
      }\n`,
  );
  await closed;
  await server.close().catch(() => {});
}
