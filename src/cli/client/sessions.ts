import type { ListSessionsQuery, SessionRecord } from 'cairn-store-sdk';
import type { Command } from 'commander';
import { clientAction, withClientOptions } from './context.js';
import { parseLimit, parseSessionId, parseTimeBound } from './parse.js';
import { sessionTable } from './render.js';

/** sessions and seal. */
export function registerSessionCommands(program: Command): void {
  withClientOptions(
    program
      .command('sessions')
      .description('List sessions, most recently active first, with artifact counts and seal state.')
      .option('--limit <n>', 'page size, 1-200 (default 50)', parseLimit)
      .option('--cursor <cursor>', 'continue from a previous page')
      .option('--created-after <when>', 'ISO date/time, or an age such as 2d', (v) => parseTimeBound(v))
      .option('--created-before <when>', 'ISO date/time, or an age such as 2d', (v) => parseTimeBound(v))
      .option('--all', 'walk every page'),
    ['cairn sessions', 'cairn sessions --created-after 1d', 'cairn sessions --all --json'],
  ).action(
    clientAction(async (ctx, _args, opts) => {
      const q: ListSessionsQuery = {};
      if (opts.limit) q.limit = opts.limit as number;
      if (opts.cursor) q.cursor = opts.cursor as string;
      if (opts.createdAfter) q.createdAfter = opts.createdAfter as string;
      if (opts.createdBefore) q.createdBefore = opts.createdBefore as string;
      let sessions: SessionRecord[];
      if (opts.all) {
        sessions = [];
        for await (const s of ctx.client.iterateSessions(q)) sessions.push(s);
        if (ctx.json) return ctx.printJson({ sessions, next_cursor: null, has_more: false });
      } else {
        const page = await ctx.client.listSessions(q);
        if (ctx.json) return ctx.printJson(page);
        sessions = page.sessions;
        if (page.has_more && page.next_cursor) {
          ctx.note(`More sessions: repeat with --cursor ${page.next_cursor} (or use --all).`);
        }
      }
      ctx.print(sessions.length === 0 ? 'No sessions.' : sessionTable(sessions, ctx.paint));
    }),
  );

  withClientOptions(
    program
      .command('seal')
      .description('Seal a session: later uploads naming it are refused. Irreversible.')
      .argument('<session>', 'session id', parseSessionId),
    ['cairn seal run-42', 'cairn seal run-42 --json'],
  ).action(
    clientAction(async (ctx, [id]) => {
      const result = await ctx.client.sealSession(String(id));
      if (ctx.json) return ctx.printJson(result);
      const n = result.artifact_count;
      ctx.print(
        `Sealed session ${ctx.paint('cyan', result.session_id)} (${n} artifact${n === 1 ? '' : 's'}) at ${result.sealed_at}.`,
      );
    }),
  );
}
