// `node --import ./module-log.mjs …`: writes every module the process loaded (file URLs and node:
// builtins), one per line, to the file named by CAIRN_TEST_MODULE_LOG when the process exits.
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    loaded.add(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  // Node's own internal modules too (fetch's HTTP stack is one), as `internal:<id>`.
  const internal = process.moduleLoadList.map((m) => `internal:${m.replace(/^NativeModule /, '')}`);
  writeFileSync(process.env.CAIRN_TEST_MODULE_LOG, [...loaded, ...internal].join('\n'));
});
