#!/usr/bin/env node
// The `cairn` command: serve, admin, and the client commands. Built into dist/ by `npm install`.
import { main } from '../dist/cli/main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
