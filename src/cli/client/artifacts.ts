import { type ArtifactRecord, CairnError, type ListArtifactsQuery } from 'cairn-store-sdk';
import type { Command } from 'commander';
import { UsageError } from '../usage-error.js';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { collectMeta, parseArtifactId, parseLimit, parseTimeBound } from './parse.js';
import { artifactDetail, artifactTable } from './render.js';

/** ls, get, rm (push is in push.ts). */
export function registerArtifactCommands(program: Command): void {
  withClientOptions(
    program
      .command('ls')
      .description('List artifacts, newest first, with filters.')
      .option('--session <id>', 'only this session')
      .option('--agent <id>', 'only this agent')
      .option('--filename <name>', 'only this exact filename')
      .option('--content-type <mime>', 'only this content type')
      .option('--created-after <when>', 'ISO date/time, or an age such as 2d', (v) => parseTimeBound(v))
      .option('--created-before <when>', 'ISO date/time, or an age such as 2d', (v) => parseTimeBound(v))
      .option('--transcript', 'only transcripts')
      .option(
        '--meta <key=value>',
        'only artifacts whose metadata has this value (repeatable, up to 8 pairs, all must match)',
        collectMeta,
      )
      .option('--limit <n>', 'page size, 1-200 (default 50)', parseLimit)
      .option('--cursor <cursor>', 'continue from a previous page')
      .option('--all', 'walk every page'),
    [
      'cairn ls',
      'cairn ls --session run-42 --limit 200',
      'cairn ls --meta model=gpt-5 --meta type=transcript --created-after 7d',
      'cairn ls --transcript --all --json > transcripts.json',
    ],
  ).action(clientAction(list));

  withClientOptions(
    program
      .command('get')
      .description('Show one artifact’s record (with its page, if published).')
      .argument('<id>', 'artifact id (art_…)', parseArtifactId),
    ['cairn get art_XXXXXXXXXXXXXXXX', 'cairn get art_XXXXXXXXXXXXXXXX --json | jq .metadata'],
  ).action(
    clientAction(async (ctx, [id]) => {
      const record = await ctx.client.getArtifact(String(id));
      if (ctx.json) ctx.printJson(record);
      else ctx.print(artifactDetail(record, ctx.paint));
    }),
  );

  withClientOptions(
    program
      .command('rm')
      .description('Delete an artifact (its page goes down at once; safe to repeat).')
      .argument('<id>', 'artifact id (art_…)', parseArtifactId),
    ['cairn rm art_XXXXXXXXXXXXXXXX'],
  ).action(
    clientAction(async (ctx, [id]) => {
      let result: { artifact_id: string; deleted: boolean; deleted_at?: string | null; already_deleted?: true };
      try {
        result = await ctx.client.deleteArtifact(String(id));
      } catch (err) {
        // A repeat succeeds, as unlink, unpublish and seal do (docs/cli.md, "Exit codes").
        if (!(err instanceof CairnError && err.code === 'artifact_already_deleted')) throw err;
        result = { artifact_id: String(id), deleted: true, already_deleted: true };
      }
      if (ctx.json) ctx.printJson(result);
      else if (result.already_deleted) ctx.print(`${ctx.paint('cyan', result.artifact_id)} was already deleted.`);
      else ctx.print(`Deleted ${ctx.paint('cyan', result.artifact_id)}.`);
    }),
  );
}

async function list(ctx: Ctx, _args: unknown[], opts: Record<string, unknown>): Promise<void> {
  const meta = (opts.meta as [string, string][] | undefined) ?? [];
  if (meta.length > 8) throw new UsageError('ls takes at most 8 --meta pairs (the API allows 8).');
  const q: ListArtifactsQuery = {};
  if (opts.session) q.sessionId = opts.session as string;
  if (opts.agent) q.agentId = opts.agent as string;
  if (opts.filename) q.filename = opts.filename as string;
  if (opts.contentType) q.contentType = opts.contentType as string;
  if (opts.createdAfter) q.createdAfter = opts.createdAfter as string;
  if (opts.createdBefore) q.createdBefore = opts.createdBefore as string;
  if (opts.transcript) q.transcript = true;
  if (meta.length > 0) q.metadata = Object.fromEntries(meta);
  if (opts.limit) q.limit = opts.limit as number;
  if (opts.cursor) q.cursor = opts.cursor as string;

  if (opts.all) {
    const artifacts: ArtifactRecord[] = [];
    for await (const a of ctx.client.iterateArtifacts(q)) artifacts.push(a);
    // The API body's shape, as one page holding everything.
    if (ctx.json) ctx.printJson({ artifacts, next_cursor: null, has_more: false });
    else printArtifacts(ctx, artifacts);
    return;
  }
  const page = await ctx.client.listArtifacts(q);
  if (ctx.json) {
    ctx.printJson(page);
    return;
  }
  printArtifacts(ctx, page.artifacts);
  if (page.has_more && page.next_cursor) {
    ctx.note(`More artifacts: repeat with --cursor ${page.next_cursor} (or use --all).`);
  }
}

function printArtifacts(ctx: Ctx, artifacts: ArtifactRecord[]): void {
  if (artifacts.length === 0) ctx.print('No artifacts.');
  else ctx.print(artifactTable(artifacts, ctx.paint));
}
