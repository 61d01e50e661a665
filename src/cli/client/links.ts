import type { ListedLink, ListLinksQuery } from 'cairn-store-sdk';
import type { Command } from 'commander';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { type Column, formatAge, formatUntil, renderTable, terminalWidth } from './format.js';
import { parseArtifactId, parseLimit, parseLinkId } from './parse.js';

/** links (an artifact's live share links) and unlink (revoke one). */
export function registerLinkCommands(program: Command): void {
  withClientOptions(
    program
      .command('links')
      .description("List an artifact's live share links, newest first.")
      .argument('<id>', 'artifact id (art_…)', parseArtifactId)
      .option('--limit <n>', 'page size, 1-200 (default 50)', parseLimit)
      .option('--cursor <cursor>', 'continue from a previous page')
      .option('--all', 'every page'),
    ['cairn links art_XXXXXXXXXXXXXXXX', 'cairn links art_XXXXXXXXXXXXXXXX --all --json | jq -r ".links[].link_id"'],
  ).action(clientAction(links));

  withClientOptions(
    program
      .command('unlink')
      .description('Revoke a share link: its URL stops working at once (safe to repeat).')
      .argument('<link-id>', 'a link id (lnk_…), as `cairn links` shows it', parseLinkId),
    ['cairn unlink lnk_XXXXXXXXXXXXXXXXXXXX'],
  ).action(
    clientAction(async (ctx, [linkId]) => {
      const result = await ctx.client.revokeLink(String(linkId));
      if (ctx.json) ctx.printJson(result);
      else ctx.print(`Revoked ${ctx.paint('cyan', result.link_id)}: its URL no longer works.`);
    }),
  );
}

async function links(ctx: Ctx, [rawId]: unknown[], opts: Record<string, unknown>): Promise<void> {
  const id = String(rawId);
  const q: ListLinksQuery = {};
  if (opts.limit) q.limit = opts.limit as number;
  if (opts.cursor) q.cursor = opts.cursor as string;
  if (opts.all) {
    const all: ListedLink[] = [];
    for await (const l of ctx.client.iterateLinks(id, q)) all.push(l);
    if (ctx.json) ctx.printJson({ links: all, next_cursor: null, has_more: false });
    else printLinks(ctx, all);
    return;
  }
  const page = await ctx.client.listLinks(id, q);
  if (ctx.json) return ctx.printJson(page);
  printLinks(ctx, page.links);
  if (page.has_more && page.next_cursor) {
    ctx.note(`More links: repeat with --cursor ${page.next_cursor} (or use --all).`);
  }
}

function printLinks(ctx: Ctx, rows: ListedLink[]): void {
  if (rows.length === 0) {
    ctx.print('No live links.');
    return;
  }
  const now = Date.now();
  const columns: Column<ListedLink>[] = [
    { header: 'ID', value: (l) => l.link_id, style: 'cyan' },
    { header: 'CREATED', value: (l) => formatAge(l.created_at, now) },
    { header: 'EXPIRES', value: (l) => formatUntil(l.expires_at, now) },
    { header: 'URL', value: (l) => l.url, style: 'green', ownLine: true },
  ];
  ctx.print(renderTable(rows, columns, ctx.paint, terminalWidth()));
}
