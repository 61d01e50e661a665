import type { Command } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { type Accounts, createAccounts } from '../core/accounts/index.js';
import { CairnError, isCairnError } from '../core/errors.js';
import type { Core } from '../core/index.js';
import { isPlanName, type PlanName } from '../core/plans.js';
import { toIso, toIsoOrNull } from '../core/time.js';
import type { PageRow } from '../ports/metadata-store.js';
import { createRuntime } from '../runtime.js';
import { describeMigration, migrateMetadata } from './admin-migrate.js';
import { createUser } from './admin-users.js';
import { printJsonError } from './json-error.js';
import { printTable } from './table.js';
import { stderrLine, stdoutLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

/** What the admin commands (admin.ts defines them) do, each as a commander action. */

type Action = (...params: unknown[]) => Promise<void>;
type Handler<T> = (made: T, opts: Record<string, unknown>, ...args: string[]) => Promise<void>;

function adminConfig(cmd: Command): Config {
  const opts = cmd.optsWithGlobals() as Record<string, unknown>;
  try {
    return loadConfig({ dataDir: opts.data as string | undefined, logLevel: 'silent' }, process.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * Runs `fn` over what `make` takes from a runtime built from the admin's configuration; Cairn
 * errors exit 1 with a message. Under --json every failure, usage mistakes included, is one
 * envelope line on stderr.
 */
function withRuntime<T>(make: (runtime: Awaited<ReturnType<typeof createRuntime>>) => T, fn: Handler<T>): Action {
  return async (...params) => {
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
      if (!opts.json) throw err;
      process.exitCode = printJsonError(err);
    }
  };
}

const withCore = (fn: Handler<Core>): Action => withRuntime((r) => r.core, fn);
/** Like withCore, with the account services (dashboard users) too. */
const withAccounts = (fn: Handler<Accounts>): Action =>
  withRuntime((r) => createAccounts(r.core, r.adapters.accounts), fn);

const plan = (value: string): PlanName => {
  if (!isPlanName(value)) throw new UsageError(`plan must be free or pro, not '${value}'.`);
  return value;
};

const suspension = (suspended: boolean) =>
  withCore(async (core, _opts, name = '') => {
    const t = await core.tenants.setSuspended(await core.tenants.byName(name), suspended);
    stdoutLine(`Tenant ${t.name} is ${t.suspended ? 'suspended' : 'active'}.`);
  });

/** Runs a page action by slug; prints the outcome with the page's tenant, or fails for an unknown slug. */
const pageAction = (
  act: (core: Core, slug: string) => Promise<PageRow | null>,
  report: (page: PageRow, tenantName: string | null, json: boolean) => string,
) =>
  withCore(async (core, opts, slug = '') => {
    const found = await act(core, slug);
    if (!found) throw new CairnError('artifact_not_found', `no page ${slug}`);
    const tenantName = (await core.deps.tenantStore.getTenant(found.tenantId))?.name ?? null;
    stdoutLine(report(found, tenantName, Boolean(opts.json)));
  });

export const ADMIN_ACTIONS = {
  tenantCreate: withCore(async (core, opts, name = '') => {
    const { tenant: t, apiKey } = await core.tenants.create(name, plan(String(opts.plan)));
    if (opts.json) stdoutLine(JSON.stringify({ tenant_name: t.name, plan: t.plan, api_key: apiKey }));
    else stdoutLine(`Created tenant ${t.name} (${t.plan}). API key, shown only once:\n  ${apiKey}`);
  }),
  tenantList: withCore(async (core, opts) => {
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
  tenantSetPlan: withCore(async (core, _opts, name = '', p = '') => {
    const t = await core.tenants.setPlan(await core.tenants.byName(name), plan(p));
    stdoutLine(`Tenant ${t.name} is now on the ${t.plan} plan.`);
  }),
  tenantSuspend: suspension(true),
  tenantUnsuspend: suspension(false),

  keyCreate: withCore(async (core, opts, name = '') => {
    const t = await core.tenants.byName(name);
    const apiKey = await core.tenants.createKey(t);
    if (opts.json) stdoutLine(JSON.stringify({ tenant_name: t.name, api_key: apiKey }));
    else stdoutLine(`New API key for ${t.name}, shown only once:\n  ${apiKey}`);
  }),
  keyList: withCore(async (core, opts, name = '') => {
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
  keyRevoke: withCore(async (core, _opts, name = '', keyId = '') => {
    await core.tenants.revokeKey(await core.tenants.byName(name), keyId);
    stdoutLine('Key revoked.');
  }),

  userCreate: withAccounts(createUser),

  pageUnpublish: pageAction(
    (core, slug) => core.pages.takeDown(slug),
    (p, tenant, json) =>
      json
        ? JSON.stringify({ page_id: p.slug, unpublished: true, taken_down: true, tenant_name: tenant })
        : `Page ${p.slug} (tenant ${tenant}) is taken down; its owner cannot publish it again until it is restored.`,
  ),
  pageRestore: pageAction(
    (core, slug) => core.pages.restore(slug),
    (p, tenant, json) =>
      json
        ? JSON.stringify({ page_id: p.slug, taken_down: false, live: p.live, tenant_name: tenant })
        : `Page ${p.slug} (tenant ${tenant}) is no longer taken down; its owner can publish it again.`,
  ),

  // The configuration alone: migrating builds no runtime (no blob store, no Redis).
  migrate: async (...params) => {
    const cmd = params.at(-1) as Command;
    const report = await migrateMetadata(adminConfig(cmd));
    stdoutLine(cmd.opts().json ? JSON.stringify(report) : describeMigration(report));
  },

  sweep: withCore(async (core, opts) => {
    const report = await core.sweeper.runOnce();
    if (opts.json) stdoutLine(JSON.stringify(report));
    else for (const [k, v] of Object.entries(report)) stdoutLine(`${k.padEnd(18)} ${v}`);
  }),
} satisfies Record<string, Action>;

export type AdminAction = keyof typeof ADMIN_ACTIONS;
