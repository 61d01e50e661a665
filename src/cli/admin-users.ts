import type { Command } from 'commander';
import type { Accounts } from '../core/accounts/index.js';
import { randomAlnum } from '../core/ids.js';
import { isPlanName } from '../core/plans.js';
import { withExamples } from './help.js';
import { stdoutLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

type WithAccounts = (
  fn: (accounts: Accounts, opts: Record<string, unknown>, ...args: string[]) => Promise<void>,
) => (...params: unknown[]) => Promise<void>;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline (from `echo` or a file) is not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** `cairn admin user create`: dashboard accounts for headless set-ups (no sign-up form needed). */
export function registerUserCommands(admin: Command, withAccounts: WithAccounts): void {
  const user = withExamples(
    admin.command('user').description('Dashboard users (people who log in at {api}/dashboard).'),
    ['cairn admin user create ada@example.com --tenant acme --password-stdin < pw.txt'],
  );
  withExamples(user.command('create <email>'), [
    'cairn admin user create ops@example.com --tenant ops --create-tenant --plan pro --password-stdin < pw.txt',
    `printf '%s' "$PASSWORD" | cairn admin user create ada@example.com --tenant acme --password-stdin`,
  ])
    .description(
      'Create a dashboard user for a tenant. Without --password-stdin a password is generated and shown once.',
    )
    .requiredOption('--tenant <name>', 'the tenant the user acts for')
    .option('--create-tenant', 'create the tenant too (it must not exist)')
    .option('--plan <plan>', 'plan of a tenant created with --create-tenant: free or pro', 'free')
    .option('--password-stdin', 'read the password from standard input (never from an argument)')
    .option('--json', 'print {email, tenant_name, plan, user_id} (and password when generated)')
    .action(
      withAccounts(async (accounts, opts, email = '') => {
        const plan = String(opts.plan);
        if (!isPlanName(plan)) throw new UsageError(`plan must be free or pro, not '${plan}'.`);
        const generated = opts.passwordStdin ? null : randomAlnum(20);
        const password = generated ?? (await readStdin());
        const { user: u, tenant } = await accounts.users.create(email, password, String(opts.tenant), {
          createTenant: Boolean(opts.createTenant),
          plan,
        });
        if (opts.json) {
          const out = { email: u.email, tenant_name: tenant.name, plan: tenant.plan, user_id: u.id };
          stdoutLine(JSON.stringify(generated ? { ...out, password: generated } : out));
        } else {
          stdoutLine(`Created user ${u.email} for tenant ${tenant.name} (${tenant.plan}).`);
          if (generated) stdoutLine(`Password, shown only once:\n  ${generated}`);
        }
      }),
    );
}
