import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenField, WebUser } from '../helpers/hosted.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Where logging in leads (`next`, in the query and in the form's hidden field), tried as an open
 * redirect: values a browser reads as another host once it drops TAB, CR and LF, or reads `\` as
 * `/`. Only a dashboard page on the API origin is followed; anything else goes to /dashboard.
 * Real Chromium follows the same redirects in test/browser/dashboard.test.ts.
 */

let srv: TestServer;
let user: WebUser;

const ATTACKS = [
  '/\t/evil.example/x',
  '/\r/evil.example/x',
  '/\n/evil.example/x',
  '\t//evil.example/x',
  '/\t\\evil.example/x',
  '/\\evil.example/x',
  '//evil.example/x',
  'https://evil.example/x',
  '/login?next=//evil.example',
];

beforeAll(async () => {
  srv = await startTestServer();
  user = new WebUser(srv.apiUrl);
  await user.signUp(`next-${Date.now()}@example.com`);
});
afterAll(async () => {
  await srv?.close();
});

describe('next= after logging in', () => {
  it.each(['login', 'signup'])(
    'a signed-in GET /%s?next=… goes to /dashboard unless next is a dashboard page',
    async (mode) => {
      for (const next of ATTACKS) {
        const r = await user.request('GET', `/${mode}?next=${encodeURIComponent(next)}`);
        expect(r.status, JSON.stringify(next)).toBe(303);
        expect(r.location, JSON.stringify(next)).toBe('/dashboard');
      }
      const own = await user.request('GET', `/${mode}?next=${encodeURIComponent('/dashboard/keys')}`);
      expect(own.location).toBe('/dashboard/keys');
    },
  );

  it('the form carries only a safe next, and a forged hidden field is not followed', async () => {
    const email = `next-form-${Date.now()}@example.com`;
    await new WebUser(srv.apiUrl).signUp(email);
    const form = await new WebUser(srv.apiUrl).request(
      'GET',
      `/login?next=${encodeURIComponent('/\t/evil.example/x')}`,
    );
    expect(hiddenField(form.text, 'next')).toBe('/dashboard');
    for (const next of ATTACKS) {
      const fresh = new WebUser(srv.apiUrl);
      const page = await fresh.request('GET', '/login');
      const r = await fresh.request('POST', '/login', {
        csrf: hiddenField(page.text, 'csrf'),
        email,
        password: 'correct horse battery',
        next,
      });
      expect(r.status, JSON.stringify(next)).toBe(303);
      expect(r.location, JSON.stringify(next)).toBe('/dashboard');
    }
  });
});
