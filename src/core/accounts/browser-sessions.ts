import type { AccountStore, Principal } from '../../ports/account-store.js';
import type { CoreDeps } from '../context.js';
import { hashSecret, newSessionId, SESSION_ID, type Tagger } from './secrets.js';

/** How long a dashboard login lasts. */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

export interface BrowserSession extends Principal {
  /** The raw id from the cookie; never stored. */
  id: string;
  /** The CSRF token every form of this session carries. */
  csrf: string;
}

/**
 * Dashboard logins: a random id in a cookie, only its hash in the store. CSRF tokens are an HMAC
 * of the session id (or, before login, of a random pre-session value also kept in a cookie), so
 * nothing extra is stored and a token is worthless without the victim's cookie.
 */
export class BrowserSessionService {
  constructor(
    private readonly deps: CoreDeps,
    private readonly store: AccountStore,
    private readonly csrf: Tagger,
  ) {}

  async create(principal: Principal): Promise<BrowserSession> {
    const id = newSessionId();
    const now = this.deps.clock.now();
    await this.store.createBrowserSession({
      idHash: hashSecret(id),
      userId: principal.user.id,
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
    });
    // Opportunistic clean-up of expired sessions, codes and tokens, bounded.
    await this.store.purgeExpired(now, 100);
    return { ...principal, id, csrf: this.csrfFor(id) };
  }

  /** The live session behind a cookie value, or null (unknown, malformed or expired). */
  async resolve(id: string | undefined): Promise<BrowserSession | null> {
    if (!id || !SESSION_ID.test(id)) return null;
    const found = await this.store.getBrowserSession(hashSecret(id));
    if (!found) return null;
    if (found.session.expiresAt <= this.deps.clock.now()) {
      await this.store.deleteBrowserSession(found.session.idHash);
      return null;
    }
    return { user: found.user, tenant: found.tenant, id, csrf: this.csrfFor(id) };
  }

  async destroy(id: string): Promise<void> {
    if (SESSION_ID.test(id)) await this.store.deleteBrowserSession(hashSecret(id));
  }

  /** The CSRF token bound to a session id or a pre-session value. */
  csrfFor(value: string): string {
    return this.csrf.tag(`csrf:${value}`);
  }

  checkCsrf(value: string, token: unknown): boolean {
    return this.csrf.verify(`csrf:${value}`, token);
  }
}
