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

  it('only follows a next= path on this origin after login', () => {
    expect(safeNext('/oauth/authorize?client_id=x')).toBe('/oauth/authorize?client_id=x');
    for (const bad of [
      'https://evil.example',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
      undefined,
    ]) {
      expect(safeNext(bad)).toBe('/dashboard');
    }
  });
});
