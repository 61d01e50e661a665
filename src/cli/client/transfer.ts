import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { BatchDownloadUrl } from 'cairn-store-sdk';
import type { Command } from 'commander';
import { UsageError } from '../usage-error.js';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { formatBytes, formatUntil } from './format.js';
import { parseArtifactId, parseLinkExpiry } from './parse.js';
import { createProgress, type Progress } from './progress.js';

/** download, download-url and link. */
export function registerTransferCommands(program: Command): void {
  withClientOptions(
    program
      .command('download')
      .description(
        "Save an artifact's bytes (default: its filename in the current folder), or a whole session with --session.",
      )
      .argument('[id]', 'artifact id (art_…)', parseArtifactId)
      .option('-o, --output <path>', "file or folder to write, or '-' for stdout (--session: the folder)")
      .option('-f, --force', 'overwrite an existing file')
      .option('--session <id>', 'the whole session: into a folder (default ./<id>), skipping files already there')
      .option('--zip <file>', 'with --session: as one zip file')
      .option('--tar <file>', 'with --session: as one tar.gz file'),
    [
      'cairn download art_XXXXXXXXXXXXXXXX',
      'cairn download art_XXXXXXXXXXXXXXXX -o ./reports/',
      'cairn download art_XXXXXXXXXXXXXXXX -o report.md --force',
      'cairn download art_XXXXXXXXXXXXXXXX -o - | less',
      'cairn download --session run-42     # into ./run-42/; run again to resume',
      'cairn download --session run-42 --zip run-42.zip',
      'cairn download --session run-42 --tar run-42.tar.gz',
    ],
  ).action(
    clientAction(async (ctx, args, opts) => {
      const session = opts.session as string | undefined;
      if (session === undefined) {
        if (opts.zip !== undefined || opts.tar !== undefined)
          throw new UsageError('--zip and --tar go with --session.');
        if (args[0] === undefined) throw new UsageError('Give an artifact id, or --session <id>.');
        return download(ctx, args, opts);
      }
      if (args[0] !== undefined) throw new UsageError('Give an artifact id or --session, not both.');
      const { downloadSession } = await import('./session-download.js');
      return downloadSession(ctx, session, opts);
    }),
  );

  withClientOptions(
    program
      .command('download-url')
      .description('Print private download URLs (one hour, no key needed), one line per id in order.')
      .argument('<ids...>', 'artifact ids (art_…)', (v: string, previous: string[] = []) => [
        ...previous,
        parseArtifactId(v),
      ]),
    [
      'cairn download-url art_XXXXXXXXXXXXXXXX',
      'cairn download-url art_XXXXXXXXXXXXXXXX art_YYYYYYYYYYYYYYYY | xargs curl -O',
      'cairn download-url art_X --json | jq -r ".download_urls[].download_url"',
    ],
  ).action(clientAction(downloadUrls));

  withClientOptions(
    program
      .command('link')
      .description(
        'Create a temporary download link anyone can open (no key needed): of an artifact, or of a sealed session.',
      )
      .argument('[id]', 'artifact id (art_…)', parseArtifactId)
      .option('--session <id>', 'link a whole sealed session: a page of its files with "download all"')
      .option('--expires <duration>', 'lifetime: 7d, 12h, 30m or 3600s (default 7d, max 30d)', parseLinkExpiry),
    [
      'cairn link art_XXXXXXXXXXXXXXXX',
      'cairn link art_XXXXXXXXXXXXXXXX --expires 12h',
      'cairn link art_X --json | jq -r .url',
      'cairn seal run-42 && cairn link --session run-42',
    ],
  ).action(
    clientAction(async (ctx, [id], opts) => {
      const expiresIn = opts.expires as number | undefined;
      const lifetime = expiresIn === undefined ? {} : { expiresIn };
      const session = opts.session as string | undefined;
      if ((id === undefined) === (session === undefined)) {
        throw new UsageError('Give an artifact id or --session <id> (one of them).');
      }
      const link =
        session === undefined
          ? await ctx.client.createLink(String(id), lifetime)
          : await ctx.client.createSessionLink(session, lifetime);
      if (ctx.json) return ctx.printJson(link);
      ctx.print(ctx.paint('green', link.url));
      if ('archive_url' in link) ctx.note(`archive: ${link.archive_url}`);
      ctx.note(`expires ${link.expires_at} (${formatUntil(link.expires_at)})`);
    }),
  );
}

/** The API's batch limit; more ids are asked for in several calls, answered as one list. */
const BATCH = 20;

async function downloadUrls(ctx: Ctx, [ids]: unknown[]): Promise<void> {
  const all = (ids as string[]).map(String);
  const items: BatchDownloadUrl[] = [];
  for (let i = 0; i < all.length; i += BATCH) {
    items.push(...(await ctx.client.downloadUrls(all.slice(i, i + BATCH))).download_urls);
  }
  const failed = items.filter((item) => 'error' in item);
  if (ctx.json) ctx.printJson({ download_urls: items });
  else {
    // One stdout line per id that has a URL; the others are said on stderr, so a pipe gets only URLs.
    for (const item of items) {
      if ('error' in item) ctx.note(`error: ${item.artifact_id}: ${item.error.code}: ${item.error.message}`);
      else ctx.print(item.download_url);
    }
    if (items.length > failed.length) ctx.note('each URL works for one hour');
  }
  if (failed.length > 0) process.exitCode = 1;
}

async function download(ctx: Ctx, [rawId]: unknown[], opts: Record<string, unknown>): Promise<void> {
  const id = String(rawId);
  const output = opts.output as string | undefined;
  if (output === '-') {
    if (ctx.json) throw new UsageError("--json and '-o -' both want stdout; choose one.");
    return downloadToStdout(ctx, id);
  }
  let target: string;
  if (output === undefined || (await isDirectory(output))) {
    const record = await ctx.client.getArtifact(id);
    target = path.join(output ?? '.', safeFilename(record.filename, record.artifact_id));
  } else if (/[\\/]$/.test(output)) {
    throw new UsageError(`no such folder: ${output}`);
  } else {
    target = output;
  }
  await checkTarget(target, opts.force === true);
  // The size is known once the response starts: the bar is made at the first progress call.
  const bar: { current?: Progress } = {};
  const result = await ctx.client
    .downloadToFile(id, target, {
      onProgress: (received, total) => {
        bar.current ??= createProgress(`download ${path.basename(target)}`, total);
        bar.current.update(received, total);
      },
    })
    .catch((err: unknown) => {
      bar.current?.abort();
      throw err;
    });
  bar.current?.finish();
  if (ctx.json) ctx.printJson({ artifact_id: id, path: path.resolve(result.path), size_bytes: result.sizeBytes });
  else ctx.print(`Saved ${ctx.paint('bold', result.path)} (${formatBytes(result.sizeBytes)}).`);
}

async function downloadToStdout(ctx: Ctx, id: string): Promise<void> {
  const { body, sizeBytes } = await ctx.client.download(id);
  const progress = createProgress('download', sizeBytes);
  let received = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      progress.update(received, sizeBytes);
      done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(body as NodeReadableStream<Uint8Array>), count, process.stdout);
    progress.finish();
  } catch (err) {
    progress.abort();
    // The reader went away (`| head`): not a failure of ours.
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
    throw err;
  }
  if (received !== sizeBytes) throw new Error(`download ended after ${received} of ${sizeBytes} bytes.`);
}

/**
 * The stored filename is the uploader's claim: keep only its last path segment, so a name
 * like "../../.bashrc" can never write outside the chosen folder.
 */
export function safeFilename(name: string, fallback: string): string {
  // No control character of a server-chosen name reaches the disk or the terminal: C0, DEL, C1,
  // and the bidirectional controls and separators that make "gnp.exe" read as "exe.png".
  const base = path.posix
    .basename(name.replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g, '');
  return base === '' || base === '.' || base === '..' ? fallback : base;
}

/** Local mistakes are usage errors (exit 2), found before any byte is fetched. */
async function checkTarget(target: string, force: boolean): Promise<void> {
  const existing = await stat(target).catch(() => null);
  if (existing?.isDirectory()) throw new UsageError(`${target} is a folder.`);
  if (existing && !force) throw new UsageError(`${target} already exists; pass --force to overwrite it.`);
  const folder = path.dirname(target);
  if (!(await isDirectory(folder))) throw new UsageError(`no such folder: ${folder}`);
}

async function isDirectory(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
