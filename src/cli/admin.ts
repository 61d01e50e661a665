import type { Command } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { type Accounts, createAccounts } from '../core/accounts/index.js';
import { CairnError, isCairnError } from '../core/errors.js';
import type { Core } from '../core/index.js';
import { isPlanName, type PlanName } from '../core/plans.js';
import { toIso, toIsoOrNull } from '../core/time.js';
import type { PageRow } from '../ports/metadata-store.js';
import { createRuntime } from '../runtime.js';
import { registerMigrateCommand } from './admin-migrate.js';
import { registerUserCommands } from './admin-users.js';
import { withExamples } from './help.js';
import { printJsonError } from './json-error.js';
import { printTable } from './table.js';
import { stderrLine, stdoutLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

/**
 * `cairn admin`: operator commands that work directly on the data folder (or the configured
 * database), with no server running. Safe beside a running server: the store serialises writers.
 */
export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description('Operator commands on the data folder (no server needed): tenants, keys, sweeping.')
    .option('--data <dir>', 'data folder (env CAIRN_DATA_DIR, default ./data)')
    .addHelpText(
      'after',
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
    );

  const adminConfig = (cmd: Command): Config => {
    const opts = cmd.optsWithGlobals() as Record<string, unknown>;
    try {
      return loadConfig({ dataDir: opts.data as string | undefined, logLevel: 'silent' }, process.env);
    } catch (err) {
      if (err instanceof ConfigError) throw new UsageError(err.message);
      throw err;
    }
  };

  /** Runs `fn` over a runtime built from the admin's configuration; Cairn errors exit 1 with a message. */
  const withRuntime =
    <T>(
      make: (runtime: Awaited<ReturnType<typeof createRuntime>>) => T,
      fn: (made: T, opts: Record<string, unknown>, ...args: string[]) => Promise<void>,
    ) =>
    async (...params: unknown[]) => {
      const cmd = params.at(-1) as Command;
      const opts = cmd.optsWithGlobals() as Record<string, unknown>;
      const args = params.slice(0, -2).filter((p): p is string => typeof p === 'string');
      try {
        const runtime = await createRuntime(adminConfig(cmd));
        try {
          await fn(make(runtime), opts, ...args);
        } catch (err) {
          if (!isCairnError(err) || opts.json) throw err;
          stderrLine(`error: ${err.message} (${err.code})`);
          process.exitCode = 1;
        } finally {
          await runtime.close();
        }
      } catch (err) {
        // Under --json every failure, usage mistakes included, is one envelope line on stderr.
        if (!opts.json) throw err;
        process.exitCode = printJsonError(err);
      }
    };
  const withCore = (fn: (core: Core, opts: Record<string, unknown>, ...args: string[]) => Promise<void>) =>
    withRuntime((r) => r.core, fn);
  /** Like withCore, with the account services (dashboard users) too. */
  const withAccounts = (fn: (accounts: Accounts, opts: Record<string, unknown>, ...args: string[]) => Promise<void>) =>
    withRuntime((r) => createAccounts(r.core, r.adapters.accounts), fn);

  const plan = (value: string): PlanName => {
    if (!isPlanName(value)) throw new UsageError(`plan must be free or pro, not '${value}'.`);
    return value;
  };

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
    .action(
      withCore(async (core, opts, name = '') => {
        const { tenant: t, apiKey } = await core.tenants.create(name, plan(String(opts.plan)));
        if (opts.json) stdoutLine(JSON.stringify({ tenant_name: t.name, plan: t.plan, api_key: apiKey }));
        else stdoutLine(`Created tenant ${t.name} (${t.plan}). API key, shown only once:\n  ${apiKey}`);
      }),
    );
  withExamples(tenant.command('list'), ['cairn admin tenant list', 'cairn admin tenant list --json'])
    .description('List tenants with plan, status and storage used.')
    .option('--json', 'print a JSON array')
    .action(
      withCore(async (core, opts) => {
        const rows = (await core.deps.tenantStore.listTenants()).map((t) => ({
          tenant_name: t.name,
          plan: t.plan,
          suspended: t.suspended,
          usage_storage_bytes: t.storageBytes,
          created_at: toIso(t.createdAt),
        }));
        if (opts.json) stdoutLine(JSON.stringify(rows));
        else printTable(rows, ['tenant_name', 'plan', 'suspended', 'usage_storage_bytes', 'created_at']);
      }),
    );
  withExamples(tenant.command('set-plan <name> <plan>'), [
    'cairn admin tenant set-plan acme pro',
    'cairn admin tenant set-plan acme free',
  ])
    .description('Move a tenant to the free or pro plan.')
    .action(
      withCore(async (core, _opts, name = '', p = '') => {
        const t = await core.tenants.setPlan(await core.tenants.byName(name), plan(p));
        stdoutLine(`Tenant ${t.name} is now on the ${t.plan} plan.`);
      }),
    );
  for (const [verb, suspended] of [
    ['suspend', true],
    ['unsuspend', false],
  ] as const) {
    withExamples(tenant.command(`${verb} <name>`), [`cairn admin tenant ${verb} acme`])
      .description(suspended ? 'Refuse the tenant’s API calls and stop its links and pages.' : 'Lift a suspension.')
      .action(
        withCore(async (core, _opts, name = '') => {
          const t = await core.tenants.setSuspended(await core.tenants.byName(name), suspended);
          stdoutLine(`Tenant ${t.name} is ${t.suspended ? 'suspended' : 'active'}.`);
        }),
      );
  }

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
    .action(
      withCore(async (core, opts, name = '') => {
        const t = await core.tenants.byName(name);
        const apiKey = await core.tenants.createKey(t);
        if (opts.json) stdoutLine(JSON.stringify({ tenant_name: t.name, api_key: apiKey }));
        else stdoutLine(`New API key for ${t.name}, shown only once:\n  ${apiKey}`);
      }),
    );
  withExamples(key.command('list <tenant>'), ['cairn admin key list acme', 'cairn admin key list acme --json'])
    .description('List keys by id and last 4 characters (keys themselves are stored only as hashes).')
    .option('--json', 'print a JSON array')
    .action(
      withCore(async (core, opts, name = '') => {
        const t = await core.tenants.byName(name);
        const rows = (await core.deps.tenantStore.listApiKeys(t.id)).map((k) => ({
          key_id: k.id,
          last_4: k.last4,
          created_at: toIso(k.createdAt),
          revoked_at: toIsoOrNull(k.revokedAt),
        }));
        if (opts.json) stdoutLine(JSON.stringify(rows));
        else printTable(rows, ['key_id', 'last_4', 'created_at', 'revoked_at']);
      }),
    );
  withExamples(key.command('revoke <tenant> <key>'), [
    'cairn admin key revoke acme key_XXXXXXXXXXXXXXXX    # by key_id, from `key list`',
    'cairn admin key revoke acme ak_live_…               # or by the full key',
  ])
    .description('Revoke a key, given its key_id (from key list) or the full key.')
    .action(
      withCore(async (core, _opts, name = '', keyId = '') => {
        await core.tenants.revokeKey(await core.tenants.byName(name), keyId);
        stdoutLine('Key revoked.');
      }),
    );

  registerUserCommands(admin, withAccounts);

  /** Runs a page action by slug; prints the outcome with the page's tenant, or fails for an unknown slug. */
  const pageAction =
    (
      act: (core: Core, slug: string) => Promise<PageRow | null>,
      report: (page: PageRow, tenantName: string | null, json: boolean) => string,
    ) =>
    async (core: Core, opts: Record<string, unknown>, slug = '') => {
      const found = await act(core, slug);
      if (!found) throw new CairnError('artifact_not_found', `no page ${slug}`);
      const tenantName = (await core.deps.tenantStore.getTenant(found.tenantId))?.name ?? null;
      stdoutLine(report(found, tenantName, Boolean(opts.json)));
    };

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
    .action(
      withCore(
        pageAction(
          (core, slug) => core.pages.takeDown(slug),
          (p, tenant, json) =>
            json
              ? JSON.stringify({ page_id: p.slug, unpublished: true, taken_down: true, tenant_name: tenant })
              : `Page ${p.slug} (tenant ${tenant}) is taken down; its owner cannot publish it again until it is restored.`,
        ),
      ),
    );
  withExamples(page.command('restore <slug>'), [
    'cairn admin page restore pg_XXXXXXXXXXXXXXXX',
    'cairn admin page restore pg_XXXXXXXXXXXXXXXX --json',
  ])
    .description('Lift a takedown. The page stays offline until its owner publishes it again.')
    .option('--json', 'print {page_id, taken_down, live, tenant_name}')
    .action(
      withCore(
        pageAction(
          (core, slug) => core.pages.restore(slug),
          (p, tenant, json) =>
            json
              ? JSON.stringify({ page_id: p.slug, taken_down: false, live: p.live, tenant_name: tenant })
              : `Page ${p.slug} (tenant ${tenant}) is no longer taken down; its owner can publish it again.`,
        ),
      ),
    );

  registerMigrateCommand(admin, adminConfig);

  withExamples(admin.command('sweep'), ['cairn admin sweep', 'cairn admin sweep --json'])
    .description(
      'Run the background sweeper once: expiry, hard deletes, orphan blobs, old idempotency records, dead links, staging left by stopped processes.',
    )
    .option('--json', 'print the counts as JSON')
    .action(
      withCore(async (core, opts) => {
        const report = await core.sweeper.runOnce();
        if (opts.json) stdoutLine(JSON.stringify(report));
        else for (const [k, v] of Object.entries(report)) stdoutLine(`${k.padEnd(18)} ${v}`);
      }),
    );
}
