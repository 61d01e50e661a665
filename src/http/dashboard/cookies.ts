/**
 * The cookies Cairn sets (the dashboard's two, the viewer's unlock cookie), read and written here:
 * each has fixed attributes (HttpOnly, SameSite=Lax, a path, Secure on https), so a parser and a
 * writer of a few lines, tested in test/unit/dashboard-cookies.test.ts, do what a cookie plugin
 * registered on two listeners would. On an https API origin the dashboard's carry the `__Host-`
 * prefix, which the browser only accepts with Secure, Path=/ and no Domain: no subdomain can set
 * or shadow them.
 */

/** Parses a Cookie header; the first occurrence of a name wins, malformed pairs are skipped. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, Math.max(eq, 0)).trim();
    if (eq < 0 || name === '') continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (!out.has(name)) {
      try {
        out.set(name, decodeURIComponent(value));
      } catch {
        // Not percent-encoded correctly: not one of ours.
      }
    }
  }
  return out;
}

export interface CookieNames {
  session: string;
  /** The pre-session value the login and sign-up forms' CSRF tokens are bound to. */
  preSession: string;
  secure: boolean;
}

export function cookieNames(apiOrigin: string): CookieNames {
  const secure = apiOrigin.startsWith('https:');
  const prefix = secure ? '__Host-' : '';
  return { session: `${prefix}cairn_session`, preSession: `${prefix}cairn_csrf`, secure };
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/ (or `path`), Secure on https; `maxAgeSeconds` 0 deletes it. */
export function setCookie(name: string, value: string, secure: boolean, maxAgeSeconds?: number, path = '/'): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${path}`, 'HttpOnly', 'SameSite=Lax'];
  if (secure) parts.push('Secure');
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  return parts.join('; ');
}
