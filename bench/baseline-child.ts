import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate } from 'node:timers/promises';
import multipart from '@fastify/multipart';
import Fastify from 'fastify';
import { HashCounter } from '../src/adapters/blob-common/hash-counter.js';
import { LIMITS } from '../src/core/plans.js';
import { baseOptions } from '../src/http/fastify-options.js';
import { serveIpc } from './ipc.js';

/**
 * The baselines, each in its own process like Cairn: `fastify` (bare routes returning the same
 * JSON, with Cairn's Fastify options and multipart settings; `fastify-turn-end` the same with the
 * GET answered at the end of its event-loop turn, as Cairn answers it), `file` (a bare node:http
 * server piping one file), `hash` (a bare node:http server that hashes a request body the way
 * Cairn does and keeps nothing: the most a Node server that checks what it receives that way can
 * do on this machine) and `s3rver` (the S3 emulator writing to a temp folder).
 */
export interface BaselineInfo {
  url: string;
}

async function fastify(recordJson: string, answerAtTurnEnd: boolean): Promise<string> {
  const app = Fastify(baseOptions('silent'));
  await app.register(multipart, {
    limits: { fileSize: LIMITS.multipartBytes + 1024 * 1024, files: 1, fields: 16, parts: 20, fieldSize: 64 * 1024 },
    throwFileSizeLimit: true,
  });
  const record = JSON.parse(recordJson) as unknown;
  // The plain route answers at once; the other after the rest of its event-loop turn.
  const answerNow = async () => record;
  const answerAtEndOfTurn = async () => {
    await setImmediate();
    return record;
  };
  app.get('/v1/artifacts/:id', answerAtTurnEnd ? answerAtEndOfTurn : answerNow);
  // Cairn's upload route minus storing: read every part (draining the file), answer 201.
  app.post('/v1/artifacts', async (request, reply) => {
    for await (const part of request.parts()) {
      if (part.type === 'file') for await (const _chunk of part.file);
    }
    return reply.status(201).send(record);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function fileServer(file: string): Promise<string> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), res).catch(() => res.destroy());
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Hashes each body as Cairn does (HashCounter) and drops it. */
async function hashServer(): Promise<string> {
  const server = http.createServer((req, res) => {
    const counter = new HashCounter(Number.MAX_SAFE_INTEGER);
    const discard = new Writable({ write: (_chunk, _enc, done) => done() });
    pipeline(req, counter, discard)
      .then(() => counter.digest())
      .then(
        (hex) => res.end(hex),
        () => res.destroy(),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

async function s3rver(): Promise<{ url: string; close(): Promise<void> }> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
  const directory = await mkdtemp(path.join(tmpdir(), 'cairn-bench-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: 'bench' }],
  });
  const { port } = await server.run();
  return {
    url: `http://127.0.0.1:${port}/bench`,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const [mode, arg = ''] = process.argv.slice(2);
  let url: string;
  let close = async () => {};
  if (mode === 'fastify' || mode === 'fastify-turn-end') url = await fastify(arg, mode === 'fastify-turn-end');
  else if (mode === 'file') url = await fileServer(arg);
  else if (mode === 'hash') url = await hashServer();
  else if (mode === 's3rver') ({ url, close } = await s3rver());
  else throw new Error(`unknown baseline ${mode}`);
  const stop = async () => {
    await close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('disconnect', () => void stop());
  serveIpc({ url } satisfies BaselineInfo, async (cmd) => {
    throw new Error(`unknown command ${cmd}`);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
