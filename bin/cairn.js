#!/usr/bin/env node
// The `cairn` command: serve, admin, and the client commands. Built into dist/ by `npm install`.
// The version check runs before anything is loaded: on an older Node the native SQLite module
// would fail later, far from the cause. On an older Node, a checkout's own Node 24 or 22 (the one
// scripts/with-node.sh installs) runs the command instead (older-node.js).
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
