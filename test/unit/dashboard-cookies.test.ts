import { describe, expect, it } from 'vitest';
import { safeNext } from '../../src/http/dashboard/context.js';
import { cookieNames, parseCookies, setCookie } from '../../src/http/dashboard/cookies.js';

describe('dashboard cookies', () => {
  it('are __Host- prefixed and Secure on an https API origin, plain on http', () => {
    expect(cookieNames('https://cairn.example.com')).toEqual({
      session: '__Host-cairn_session',
      preSession: '__Host-cairn_csrf',
      secure: true,
    });
    expect(cookieNames('http://127.0.0.1:8080')).toEqual({
      session: 'cairn_session',
      preSession: 'cairn_csrf',
      secure: false,
    });
    expect(setCookie('__Host-cairn_session', 'abc', true)).toBe(
      '__Host-cairn_session=abc; Path=/; HttpOnly; SameSite=Lax; Secure',
    );
    expect(setCookie('cairn_session', '', false, 0)).toBe('cairn_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
  });

  it('parses a Cookie header: first occurrence wins, quotes and junk handled', () => {
    const c = parseCookies('a=1; b="two"; a=3; junk; =x; c=%E2%9C%93; d=%zz');
    expect([...c]).toEqual([
      ['a', '1'],
      ['b', 'two'],
      ['c', '✓'],
    ]);
    expect(parseCookies(undefined).size).toBe(0);
  });

  it('only follows a next= path to a dashboard page on this origin after login', () => {
    const api = 'http://127.0.0.1:8080';
    expect(safeNext('/oauth/authorize?client_id=x', api)).toBe('/oauth/authorize?client_id=x');
    expect(safeNext('/dashboard/keys', api)).toBe('/dashboard/keys');
    expect(safeNext('/dashboard', api)).toBe('/dashboard');
    // The same origin written out, and dot segments, as the browser would read them.
    expect(safeNext(`${api}/dashboard/apps`, api)).toBe('/dashboard/apps');
    expect(safeNext('/dashboard/../oauth/authorize?a=1', api)).toBe('/oauth/authorize?a=1');
    // What is kept is what the parser serialised: nothing a browser would strip or read otherwise.
    expect(safeNext('/dashboard/a b', api)).toBe('/dashboard/a%20b');
    for (const bad of [
      'https://evil.example',
      '//evil.example/x',
      '/\\evil.example',
      '\\\\evil.example',
      'javascript:alert(1)',
      // Characters browsers drop from URLs (TAB, CR, LF) turn `/_/evil` into `//evil`.
      '/\t/evil.example/x',
      '/\r/evil.example/x',
      '/\n/evil.example/x',
      '\t//evil.example/x',
      '/\t\\evil.example',
      ' //evil.example/x',
      'http://127.0.0.1:8081/dashboard',
      'https://127.0.0.1:8080/dashboard',
      `${api}.evil.example/dashboard`,
      `http://user@127.0.0.1:8080@evil.example/dashboard`,
      // This origin, but not a dashboard page.
      '/login?next=//evil.example',
      '/v1/artifacts',
      '/dashboardx',
      '/dashboard/../v1/whoami',
      '/%09/evil.example/x',
      '',
      undefined,
      42,
    ]) {
      expect(safeNext(bad, api), JSON.stringify(bad)).toBe('/dashboard');
    }
  });
});
