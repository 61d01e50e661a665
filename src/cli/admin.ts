import type { Command } from 'commander';
import type { AdminAction } from './admin-actions.js';
import { fitted, withExamples } from './help.js';

/**
 * `cairn admin`: operator commands that work directly on the data folder (or the configured
 * database), with no server running. Safe beside a running server: the store serialises writers.
 * This module only defines them (it is loaded for `cairn --help` too); each action loads
 * admin-actions.ts, and with it the runtime, when it runs.
 */
export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description('Operator commands on the data folder (no server needed): tenants, keys, sweeping.')
    .option('--data <dir>', 'data folder (env CAIRN_DATA_DIR, default ./data)')
    .addHelpText(
      'after',
      fitted(
        `
Examples:
  $ cairn admin tenant create acme --plan pro
  $ cairn admin tenant list
  $ cairn admin key create acme --json
  $ cairn admin key revoke acme key_XXXXXXXXXXXXXXXX
  $ cairn admin user create ada@example.com --tenant acme --password-stdin
  $ cairn admin page unpublish pg_XXXXXXXXXXXXXXXX
  $ cairn admin page restore pg_XXXXXXXXXXXXXXXX
  $ cairn admin sweep
  $ CAIRN_DATABASE_URL=postgres://… cairn admin migrate --json`,
      ),
    );

  const tenant = withExamples(admin.command('tenant').description('Create, list, re-plan and suspend tenants.'), [
    'cairn admin tenant create acme --plan pro',
    'cairn admin tenant list',
    'cairn admin tenant set-plan acme free',
    'cairn admin tenant suspend acme',
  ]);
  withExamples(tenant.command('create <name>'), [
    'cairn admin tenant create acme                # free plan',
    'cairn admin tenant create acme --plan pro --json | jq -r .api_key',
    'cairn admin --data /var/lib/cairn tenant create acme',
  ])
    .description('Create a tenant and its first API key (printed once).')
    .option('--plan <plan>', 'free or pro', 'free')
    .option('--json', 'print {tenant_name, plan, api_key}')
    .action(run('tenantCreate'));
  withExamples(tenant.command('list'), ['cairn admin tenant list', 'cairn admin tenant list --json'])
    .description('List tenants with plan, status and storage used.')
    .option('--json', 'print a JSON array')
    .action(run('tenantList'));
  withExamples(tenant.command('set-plan <name> <plan>'), [
    'cairn admin tenant set-plan acme pro',
    'cairn admin tenant set-plan acme free',
  ])
    .description('Move a tenant to the free or pro plan.')
    .action(run('tenantSetPlan'));
  withExamples(tenant.command('suspend <name>'), ['cairn admin tenant suspend acme'])
    .description('Refuse the tenant’s API calls and stop its links and pages.')
    .action(run('tenantSuspend'));
  withExamples(tenant.command('unsuspend <name>'), ['cairn admin tenant unsuspend acme'])
    .description('Lift a suspension.')
    .action(run('tenantUnsuspend'));

  const key = withExamples(admin.command('key').description('Create, list and revoke API keys.'), [
    'cairn admin key create acme',
    'cairn admin key list acme',
    'cairn admin key revoke acme key_XXXXXXXXXXXXXXXX',
  ]);
  withExamples(key.command('create <tenant>'), [
    'cairn admin key create acme',
    'cairn admin key create acme --json | jq -r .api_key',
  ])
    .description('Create an API key (printed once).')
    .option('--json', 'print {tenant_name, api_key}')
    .action(run('keyCreate'));
  withExamples(key.command('list <tenant>'), ['cairn admin key list acme', 'cairn admin key list acme --json'])
    .description('List keys by id and last 4 characters (keys themselves are stored only as hashes).')
    .option('--json', 'print a JSON array')
    .action(run('keyList'));
  withExamples(key.command('revoke <tenant> <key>'), [
    'cairn admin key revoke acme key_XXXXXXXXXXXXXXXX  # a key_id from `key list`',
    'cairn admin key revoke acme ak_live_…               # or by the full key',
  ])
    .description('Revoke a key, given its key_id (from key list) or the full key.')
    .action(run('keyRevoke'));

  const user = withExamples(
    admin.command('user').description('Dashboard users (people who log in at {api}/dashboard).'),
    ['cairn admin user create ada@example.com --tenant acme --password-stdin < pw'],
  );
  withExamples(user.command('create <email>'), [
    'cairn admin user create ops@example.com --tenant ops --create-tenant \\\n      --plan pro --password-stdin < pw',
    `printf '%s' "$PASSWORD" | cairn admin user create ada@example.com \\\n      --tenant acme --password-stdin`,
  ])
    .description(
      'Create a dashboard user for a tenant. Without --password-stdin a password is generated and shown once.',
    )
    .requiredOption('--tenant <name>', 'the tenant the user acts for')
    .option('--create-tenant', 'create the tenant too (it must not exist)')
    .option('--plan <plan>', 'plan of a tenant created with --create-tenant: free or pro', 'free')
    .option('--password-stdin', 'read the password from standard input (never from an argument)')
    .option('--json', 'print {email, tenant_name, plan, user_id} (and password when generated)')
    .action(run('userCreate'));

  const page = withExamples(admin.command('page').description('Operator actions on public pages.'), [
    'cairn admin page unpublish pg_XXXXXXXXXXXXXXXX',
    'cairn admin page restore pg_XXXXXXXXXXXXXXXX',
  ]);
  withExamples(page.command('unpublish <slug>'), [
    'cairn admin page unpublish pg_XXXXXXXXXXXXXXXX',
    'cairn admin page unpublish pg_XXXXXXXXXXXXXXXX --json',
  ])
    .description(
      'Take any tenant’s page down (after a confirmed abuse report). It stays down: the owner’s publish is ' +
        'refused (page_taken_down) until `page restore`. The artifact is untouched.',
    )
    .option('--json', 'print {page_id, unpublished, taken_down, tenant_name}')
    .action(run('pageUnpublish'));
  withExamples(page.command('restore <slug>'), [
    'cairn admin page restore pg_XXXXXXXXXXXXXXXX',
    'cairn admin page restore pg_XXXXXXXXXXXXXXXX --json',
  ])
    .description('Lift a takedown. The page stays offline until its owner publishes it again.')
    .option('--json', 'print {page_id, taken_down, live, tenant_name}')
    .action(run('pageRestore'));

  withExamples(admin.command('migrate'), [
    'cairn admin migrate                 # the data folder (CAIRN_DATA_DIR)',
    'CAIRN_DATABASE_URL=postgres://… cairn admin migrate --json',
  ])
    .description(
      'Create or upgrade the metadata schema (SQLite in the data folder, or CAIRN_DATABASE_URL) and nothing else. ' +
        'Also done at every start; safe to run from several machines at once.',
    )
    .option('--json', 'print {database, location, from_version, to_version, applied}')
    .action(run('migrate'));

  withExamples(admin.command('sweep'), ['cairn admin sweep', 'cairn admin sweep --json'])
    .description(
      'Run the background sweeper once: expiry, hard deletes, orphan blobs, old idempotency records, dead links, staging left by stopped processes.',
    )
    .option('--json', 'print the counts as JSON')
    .action(run('sweep'));
}

/** The action named `name` of admin-actions.ts, loaded when it runs. */
function run(name: AdminAction) {
  return async (...params: unknown[]): Promise<void> => {
    const { ADMIN_ACTIONS } = await import('./admin-actions.js');
    await ADMIN_ACTIONS[name](...params);
  };
}
