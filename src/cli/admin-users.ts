import type { Accounts } from '../core/accounts/index.js';
import { randomAlnum } from '../core/ids.js';
import { isPlanName } from '../core/plans.js';
import { stdoutLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline (from `echo` or a file) is not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** `cairn admin user create`: dashboard accounts for headless set-ups (no sign-up form needed). */
export async function createUser(accounts: Accounts, opts: Record<string, unknown>, email = ''): Promise<void> {
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
}
