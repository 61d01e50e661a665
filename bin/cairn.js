#!/usr/bin/env node
// The `cairn` command: serve, admin, and the client commands. Built into dist/ by `npm install`.
// The version check runs before anything is loaded: on an older Node the native SQLite module
// would fail later, far from the cause. On an older Node, a checkout's own Node 24 or 22 (the one
// scripts/with-node.sh installs) runs the command instead (older-node.js).
import nodeModule from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Node keeps the compiled code of Cairn and its dependencies between runs, so a client command or
// `cairn mcp` started again skips compiling the same files (an MCP host's wait for `initialize`
// drops by a sixth). The cache is the user's own ($XDG_CACHE_HOME or ~/.cache, cairn/compile-cache),
// never a folder in the shared /tmp another local user could have filled; NODE_COMPILE_CACHE names
// another, NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node 20 has none (and hands over below).
const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
nodeModule.enableCompileCache?.(process.env.NODE_COMPILE_CACHE || join(cacheHome, 'cairn', 'compile-cache'));
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  const { runOnCheckoutNode } = await import('./older-node.js');
  process.exitCode = await runOnCheckoutNode();
} else {
  const { start } = await import('../dist/cli/start.js');
  start(process.argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
}
