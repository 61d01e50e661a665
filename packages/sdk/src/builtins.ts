import { createRequire } from 'node:module';

/**
 * Node modules that cost a client process noticeable start-up time, loaded on first use as
 * CommonJS objects. An ESM `import` of them would run at start-up in every process that loads the
 * SDK (a CLI command, an MCP server), and its module facade reads every export: node:http's
 * loads undici (fetch's HTTP stack), about 0.1 s of CPU, as much again as a bare `node -e 0`;
 * node:crypto's costs a quarter of that.
 */
const load = createRequire(import.meta.url);

export const nodeCrypto = (): typeof import('node:crypto') => load('node:crypto');
export const nodeHttp = (protocol: string): typeof import('node:http') =>
  protocol === 'https:' ? load('node:https') : load('node:http');
