import { Worker } from 'node:worker_threads';

/**
 * Running from the TypeScript sources (the test suite runs them through Vitest, whose module
 * loader a worker thread does not inherit), a worker loads its .ts modules with Node's own
 * TypeScript support, and a hook that finds `./x.ts` where the sources import `./x.js`. From the
 * build (dist/, what `cairn serve` runs) the worker is plain JavaScript and none of this applies.
 */
const FROM_SOURCES = `
const { registerHooks } = require('node:module');
const { existsSync } = require('node:fs');
const { fileURLToPath } = require('node:url');
registerHooks({
  resolve(specifier, context, next) {
    if (context.parentURL?.endsWith('.ts') && specifier.endsWith('.js') && /^\\.\\.?\\//.test(specifier)) {
      const url = new URL(specifier, context.parentURL);
      if (!existsSync(fileURLToPath(url))) return next(url.href.replace(/\\.js$/, '.ts'), context);
    }
    return next(specifier, context);
  },
});
import(require('node:worker_threads').workerData.entry);
`;

/** A worker thread running the module at `entry` (a file URL, .js or .ts). */
export function startWorker(entry: URL): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry);
  return new Worker(FROM_SOURCES, {
    eval: true,
    workerData: { entry: entry.href },
    execArgv: ['--experimental-transform-types', '--disable-warning=ExperimentalWarning'],
  });
}
