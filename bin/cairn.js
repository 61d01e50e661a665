#!/usr/bin/env node
// The `cairn` command: serve, admin, and the client commands. Built into dist/ by `npm install`.
// The version check runs before anything is loaded: on an older Node the native SQLite module
// would fail later, far from the cause.
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  console.error(`cairn needs Node.js 22 or newer (24 recommended); this is Node ${process.versions.node}.`);
  process.exit(1);
}

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
