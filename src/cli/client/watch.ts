import type { EventRecord } from 'cairn-store-sdk';
import type { Command } from 'commander';
import { EVENT_ID, EVENT_TYPES } from '../../shared/event-types.js';
import { UsageError } from '../usage-error.js';
import { clientAction, withClientOptions } from './context.js';

const TYPE_OR_PREFIX = new RegExp(`^(${EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|')}|[a-z_]+\\.\\*)$`);

function parseTypes(value: string): string[] {
  const types = value
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const bad = types.find((t) => !TYPE_OR_PREFIX.test(t));
  if (bad !== undefined || types.length === 0) {
    throw new UsageError(
      `--types takes event types or prefixes such as artifact.*; the types are ${EVENT_TYPES.join(', ')}.`,
    );
  }
  return types;
}

function parseCount(value: string): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1)
    throw new UsageError('--count must be a whole number of at least 1.');
  return Number(value);
}

/** One line for a person: when, what, and the record's name. */
function line(e: EventRecord): string {
  const d = e.data as unknown as Record<string, unknown>;
  const subject =
    'artifact_id' in d && 'filename' in d
      ? `${d.artifact_id} ${d.filename}${d.session_id ? ` (session ${d.session_id})` : ''}`
      : 'page_id' in d
        ? `${d.page_id} ${d.public_url}`
        : 'link_id' in d
          ? `${d.link_id} for ${'artifact_id' in d ? d.artifact_id : `session ${d.session_id}`}`
          : 'webhook_id' in d
            ? `${d.webhook_id} ${d.url}`
            : `${d.session_id ?? ''}`;
  return `${e.created_at}  ${e.type.padEnd(16)}  ${subject}`;
}

/** watch: follows the change feed (GET /v1/events/stream), resuming after a dropped connection. */
export function registerWatchCommand(program: Command): void {
  withClientOptions(
    program
      .command('watch')
      .description(
        'Follow what changes in the account as it happens (uploads, deletions, seals, pages, links), one line per ' +
          'event; reconnects by itself and resumes where it was. Ctrl-C to stop.',
      )
      .option('--session <id>', 'only events of this session')
      .option(
        '--types <list>',
        'comma-separated event types or prefixes, e.g. artifact.created,session.sealed',
        parseTypes,
      )
      .option('--after <event_id>', 'start after this event (default: from now on)')
      .option('--count <n>', 'stop after n events', parseCount),
    ['cairn watch', 'cairn watch --session run-42 --types artifact.*', 'cairn watch --json --count 1'],
  ).action(
    clientAction(async (ctx, _args, opts) => {
      const after = opts.after as string | undefined;
      if (after !== undefined && !EVENT_ID.test(after))
        throw new UsageError('--after takes an event id, evt_ and 16 digits.');
      const ctl = new AbortController();
      const stop = () => ctl.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      let seen = 0;
      let connects = 0;
      try {
        for await (const e of ctx.client.followEvents({
          signal: ctl.signal,
          ...(after !== undefined ? { after } : {}),
          ...(opts.types ? { types: opts.types as string[] } : {}),
          ...(opts.session ? { sessionId: opts.session as string } : {}),
          onConnect: (from) => {
            if (connects++ > 0) ctx.note(`Reconnecting${from ? ` after ${from}` : ''}…`);
          },
        })) {
          // One JSON object per line, so a script reads events as they come.
          if (ctx.json) process.stdout.write(`${JSON.stringify(e)}\n`);
          else ctx.print(line(e));
          if (opts.count !== undefined && ++seen >= (opts.count as number)) break;
        }
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        ctl.abort();
      }
    }),
  );
}
