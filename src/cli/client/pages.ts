import { type ArtifactRecord, CairnError, type PublishOptions } from 'cairn-store-sdk';
import type { Command } from 'commander';
import { fitted } from '../help.js';
import { UsageError } from '../usage-error.js';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { parseArtifactId, parsePageRef, parseVisibility } from './parse.js';

/** publish and unpublish. */
export function registerPageCommands(program: Command): void {
  withClientOptions(
    program
      .command('publish')
      .description('Publish an artifact as a web page; publishing again replaces its settings (same URL).')
      .argument('<id>', 'artifact id (art_…)', parseArtifactId)
      .option('--title <title>', 'shown in the page header (give it again when re-publishing to keep it)')
      .option('--password <password>', 'require this password to view (Pro; not for HTML)')
      .option('--no-password', 'open a password-protected page to everyone')
      .option(
        '--visibility <visibility>',
        "unlisted or public (default: the page's current visibility, else unlisted)",
        parseVisibility,
      )
      .addHelpText(
        'after',
        fitted(
          `
Publishing again replaces the page's title and access (the URL stays): give --title and
--password again to keep them. Without --visibility the page keeps its current visibility.
A password-protected page is never opened by accident: re-publishing it needs either
--password (keep a gate) or --no-password (open it).`,
        ),
      ),
    [
      'cairn publish art_XXXXXXXXXXXXXXXX',
      'cairn publish art_XXXXXXXXXXXXXXXX --title "Q3 report" --password hunter2',
      'cairn publish art_XXXXXXXXXXXXXXXX --title "Q3 final" --password pw  # again',
      'cairn publish art_XXXXXXXXXXXXXXXX --no-password      # remove the gate',
      'cairn publish art_XXXXXXXXXXXXXXXX --json | jq -r .public_url',
    ],
  ).action(clientAction(publish));

  withClientOptions(
    program
      .command('unpublish')
      .description('Take a page down at once (the artifact stays). Publishing again restores the same URL.')
      .argument('<id-or-slug>', 'artifact id (art_…) or page id (pg_…)', parsePageRef),
    ['cairn unpublish art_XXXXXXXXXXXXXXXX', 'cairn unpublish pg_XXXXXXXXXXXXXXXX'],
  ).action(
    clientAction(async (ctx, [id]) => {
      const result = await ctx.client.unpublish(String(id));
      if (ctx.json) ctx.printJson(result);
      else ctx.print(`Unpublished page ${ctx.paint('cyan', result.page_id)}.`);
    }),
  );
}

async function publish(ctx: Ctx, [rawId]: unknown[], opts: Record<string, unknown>): Promise<void> {
  const id = String(rawId);
  // The current page (from the artifact's record) decides what "again" keeps: its visibility.
  const current = await ctx.client.getArtifact(id);
  const options: PublishOptions = {
    visibility: (opts.visibility as PublishOptions['visibility']) ?? pageVisibility(current) ?? 'unlisted',
  };
  if (opts.title !== undefined) options.title = opts.title as string;
  if (typeof opts.password === 'string') {
    options.access = 'password';
    options.password = opts.password;
  } else if (opts.password === false) {
    options.access = 'none';
  } else if (current.page && (await isPasswordGated(ctx, current.page.public_url))) {
    throw new UsageError(
      `${id}'s page is password-protected and publishing again replaces its settings: ` +
        'pass --password to keep a gate, or --no-password to open the page to everyone.',
    );
  }
  const page = await ctx.client.publish(id, options);
  if (ctx.json) return ctx.printJson(page);
  ctx.print(ctx.paint('green', page.public_url));
  ctx.note(`page ${page.page_id}: ${page.visibility}, ${page.access === 'password' ? 'password required' : 'open'}`);
}

function pageVisibility(record: ArtifactRecord): PublishOptions['visibility'] | undefined {
  const v = record.page?.visibility;
  return v === 'public' || v === 'unlisted' ? v : undefined;
}

/** Asks the public gate-info endpoint, which answers 200 only for a live password page. */
async function isPasswordGated(ctx: Ctx, publicUrl: string): Promise<boolean> {
  const slug = new URL(publicUrl).pathname.split('/').pop() ?? '';
  try {
    await ctx.client.gateInfo(slug);
    return true;
  } catch (err) {
    if (err instanceof CairnError && err.status === 404) return false;
    throw err;
  }
}
