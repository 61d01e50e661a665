import type { AccountStore, Principal, UserRow } from '../../ports/account-store.js';
import type { TenantRow } from '../../ports/metadata-store.js';
import type { RateRule } from '../../ports/rate-limiter.js';
import { RateLimitedError } from '../access.js';
import type { CoreDeps } from '../context.js';
import { CairnError, invalid } from '../errors.js';
import { newTenantId, randomAlnum } from '../ids.js';
import type { PasswordHasher } from '../passwords.js';
import type { PlanName } from '../plans.js';
import { newUserId } from './secrets.js';

/** Sign-in attempts per client IP: a person retrying is fine, password guessing is slowed (Argon2id is costly too). */
export const LOGIN_PER_IP: RateRule = { burst: 20, sustainedPerSecond: 20 / 300 };
/** Sign-ups per client IP. */
export const SIGNUP_PER_IP: RateRule = { burst: 10, sustainedPerSecond: 10 / 3600 };

const EMAIL = /^[^\s@<>"',;]{1,64}@[^\s@<>"',;]+\.[^\s@<>"',;]+$/;
export const PASSWORD_MIN = 10;
const PASSWORD_MAX = 256;

export function normaliseEmail(email: unknown): string {
  const e = typeof email === 'string' ? email.trim().toLowerCase() : '';
  if (e.length > 254 || !EMAIL.test(e)) throw invalid('Enter a valid email address.');
  return e;
}

function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw invalid(`Passwords are ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long.`);
  }
  return password;
}

/** A tenant name from the email's local part, within the tenant name rule (a-z 0-9 . _ -). */
export function tenantNameFor(email: string): string {
  const local = email.split('@')[0] ?? '';
  const cleaned = local
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 48);
  return cleaned === '' ? 'tenant' : cleaned;
}

/**
 * Dashboard accounts: a person (email + Argon2id password) acting for one tenant. Sign-up creates
 * a Free tenant named after the email (made unique) together with its first user, atomically.
 */
export class UserService {
  constructor(
    private readonly deps: CoreDeps,
    private readonly store: AccountStore,
    private readonly hasher: PasswordHasher,
  ) {}

  async signUp(email: unknown, password: unknown, ip: string): Promise<Principal> {
    await this.limit(`signup:${ip}`, SIGNUP_PER_IP);
    const address = normaliseEmail(email);
    const hash = await this.hasher.hash(checkPassword(password));
    const base = tenantNameFor(address);
    for (let attempt = 0; attempt < 8; attempt++) {
      const name = attempt === 0 ? base : `${base}-${randomAlnum(5).toLowerCase()}`;
      const tenant = this.newTenant(name, 'free');
      const user = this.newUser(address, hash, tenant.id);
      const result = await this.store.createUser(user, tenant);
      if (result === 'created') return { user, tenant };
      if (result === 'email_taken') throw emailTaken();
    }
    throw new CairnError('server_error', 'Could not find a free tenant name; try again.');
  }

  /** `cairn admin user create`: a user for an existing tenant, or for a new one when `createTenant`. */
  async create(
    email: unknown,
    password: unknown,
    tenantName: string,
    opts: { createTenant: boolean; plan?: PlanName },
  ): Promise<Principal> {
    const address = normaliseEmail(email);
    const hash = await this.hasher.hash(checkPassword(password));
    const existing = await this.deps.tenantStore.getTenantByName(tenantName);
    if (!existing && !opts.createTenant) {
      throw invalid(`No tenant named '${tenantName}'; add --create-tenant to create it.`);
    }
    if (existing && opts.createTenant) throw invalid(`A tenant named '${tenantName}' already exists.`);
    const tenant = existing ?? this.newTenant(tenantName, opts.plan ?? 'free');
    const user = this.newUser(address, hash, tenant.id);
    const result = await this.store.createUser(user, existing ? null : tenant);
    if (result === 'email_taken') throw emailTaken();
    if (result === 'tenant_name_taken') throw invalid(`A tenant named '${tenantName}' already exists.`);
    return { user, tenant: (await this.deps.tenantStore.getTenant(tenant.id)) ?? tenant };
  }

  /** The same refusal for an unknown email and a wrong password, after the same Argon2id work. */
  async logIn(email: unknown, password: unknown, ip: string): Promise<Principal> {
    await this.limit(`login:${ip}`, LOGIN_PER_IP);
    const address = typeof email === 'string' ? email.trim().toLowerCase() : '';
    const secret = typeof password === 'string' ? password : '';
    const found = address === '' ? null : await this.store.getUserByEmail(address);
    if (!found) {
      await this.hasher.verifyDummy(secret);
      throw badLogin();
    }
    if (!(await this.hasher.verify(found.user.passwordHash, secret))) throw badLogin();
    return found;
  }

  private newTenant(name: string, plan: PlanName): TenantRow {
    if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(name)) {
      throw invalid('Tenant names are 1-63 characters of a-z, 0-9, ".", "_" and "-".');
    }
    return { id: newTenantId(), name, plan, suspended: false, createdAt: this.deps.clock.now(), storageBytes: 0 };
  }

  private newUser(email: string, passwordHash: string, tenantId: string): UserRow {
    return { id: newUserId(), email, passwordHash, tenantId, createdAt: this.deps.clock.now() };
  }

  private async limit(key: string, rule: RateRule): Promise<void> {
    const decision = await this.deps.limiter.take(key, rule, this.deps.clock.now());
    if (!decision.allowed) throw new RateLimitedError(decision);
  }
}

const emailTaken = () => invalid('An account with this email already exists; log in instead.');
const badLogin = () => new CairnError('unauthorized', 'Wrong email or password.');
