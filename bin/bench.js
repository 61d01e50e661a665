#!/usr/bin/env node
// `npm run bench [-- --quick] [-- --write]`: the benchmarks, compiled from src/bench/ by `npm run build`.
import { main } from '../dist/bench/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  },
);
