import { describe, expect, it } from 'vitest';
import { issueContentToken, passwordBinding, verifyContentToken } from '../../src/core/content-token.js';
import { normaliseReason } from '../../src/core/pages.js';
import { chooseRenderer, isHtmlType } from '../../src/core/renderer.js';
import { truncateCodePoints } from '../../src/core/validation.js';

describe('renderer choice (spec: Page renderers)', () => {
  const cases: [string, string, boolean, string][] = [
    ['text/html', 'a.html', false, 'html'],
    ['text/html; charset=utf-8', 'a.html', false, 'html'],
    ['TEXT/HTML', 'a.htm', false, 'html'],
    ['application/xhtml+xml', 'a.xhtml', false, 'download'],
    ['text/markdown', 'a.txt', false, 'markdown'],
    ['text/x-markdown', 'a', true, 'markdown'],
    ['image/png', 'a.png', false, 'image'],
    ['image/svg+xml', 'a.svg', false, 'image'],
    ['application/pdf', 'a.pdf', false, 'download'],
    ['application/octet-stream', 'a.bin', false, 'download'],
    // Open pages: a .md/.markdown name renders as Markdown whatever the stored type…
    ['text/plain', 'notes.md', false, 'markdown'],
    ['application/octet-stream', 'NOTES.MARKDOWN', false, 'markdown'],
    ['text/html', 'page.md', false, 'markdown'],
    // …gated pages choose by stored type only.
    ['text/plain', 'notes.md', true, 'text'],
    ['application/octet-stream', 'x.markdown', true, 'download'],
    ['text/plain', 'notes.md.txt', false, 'text'],
    // Readable previews (issue 35): by stored type on every page…
    ['text/plain; charset=utf-8', 'a', true, 'text'],
    ['text/css', 'a', true, 'text'],
    ['application/yaml', 'a', true, 'text'],
    ['application/json', 'a', true, 'json'],
    ['application/vnd.api+json', 'a', true, 'json'],
    ['text/csv', 'a', true, 'csv'],
    ['text/tab-separated-values', 'a', true, 'csv'],
    ['application/x-ndjson', 'a', true, 'transcript'],
    // …code by extension and other names on open pages only.
    ['text/plain', 'main.py', false, 'code'],
    ['text/plain', 'main.py', true, 'text'],
    ['application/octet-stream', 'fix.patch', false, 'code'],
    ['application/octet-stream', 'fix.patch', true, 'download'],
    ['application/octet-stream', 'data.json', false, 'json'],
    ['application/octet-stream', 'data.json', true, 'download'],
    ['application/octet-stream', 'run.log', false, 'text'],
    ['application/octet-stream', 'run.jsonl', false, 'transcript'],
    ['text/html', 'page.py', false, 'html'],
    ['image/png', 'x.csv', false, 'image'],
  ];
  it.each(cases)('%s named %s (gated %s) → %s', (type, name, gated, kind) => {
    expect(chooseRenderer(type, name, gated)).toBe(kind);
  });

  it('metadata.type=transcript makes a transcript on open pages only, never over HTML or images', () => {
    expect(chooseRenderer('text/plain', 't.txt', false, { transcript: true })).toBe('transcript');
    expect(chooseRenderer('application/json', 't.json', false, { transcript: true })).toBe('transcript');
    expect(chooseRenderer('text/plain', 't.txt', true, { transcript: true })).toBe('text');
    expect(chooseRenderer('text/html', 't.html', false, { transcript: true })).toBe('html');
    expect(chooseRenderer('image/png', 't.png', false, { transcript: true })).toBe('image');
  });

  it('counts text/html and application/xhtml+xml (with parameters) as HTML for the password rule', () => {
    expect(isHtmlType('text/html')).toBe(true);
    expect(isHtmlType('Application/XHTML+XML; charset=utf-8')).toBe(true);
    expect(isHtmlType('text/markdown')).toBe(false);
    expect(isHtmlType('image/svg+xml')).toBe(false);
  });
});

describe('content tokens', () => {
  const secret = 'test-secret';
  const now = Date.UTC(2026, 10, 23);
  const hash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA';
  const A = 'pg_AAAAAAAAAAAAAAAA';

  it('verifies for its slug until exp, never after, never for another slug or secret', () => {
    const t = issueContentToken(secret, A, hash, now);
    expect(verifyContentToken(secret, t, A, hash, now + 299_000)).toBe(true);
    expect(verifyContentToken(secret, t, A, hash, now + 300_000)).toBe(false);
    expect(verifyContentToken(secret, t, 'pg_BBBBBBBBBBBBBBBB', hash, now)).toBe(false);
    expect(verifyContentToken('other', t, A, hash, now)).toBe(false);
  });

  it('is bound to the stored password hash: a new password (or a re-hash) refuses it', () => {
    const t = issueContentToken(secret, A, hash, now);
    expect(verifyContentToken(secret, t, A, `${hash}x`, now)).toBe(false);
    expect(verifyContentToken(secret, t, A, '', now)).toBe(false);
    // The claim is a keyed digest: it does not carry the hash, and differs per secret.
    const claims = JSON.parse(Buffer.from(t.split('.')[1] ?? '', 'base64url').toString());
    expect(claims.pwb).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(claims.pwb).toBe(passwordBinding(secret, hash));
    expect(passwordBinding('other', hash)).not.toBe(claims.pwb);
    expect(t).not.toContain('c2FsdA');
  });

  it('refuses alg:none, other purposes, truncated and garbage tokens', () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const claims = { slug: A, purpose: 'page_content', exp: now / 1000 + 300, pwb: passwordBinding(secret, hash) };
    const t = issueContentToken(secret, A, hash, now);
    const [, , sig] = t.split('.');
    for (const bad of [
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.${sig}`,
      `${b64({ alg: 'HS512', typ: 'JWT' })}.${b64(claims)}.${sig}`,
      t.slice(0, -2),
      `${t}.x`,
      'not-a-token',
      '',
    ]) {
      expect(verifyContentToken(secret, bad, A, hash, now), bad).toBe(false);
    }
  });
});

describe('report reasons', () => {
  it('keeps the six known reasons and stores anything else as other', () => {
    for (const r of ['spam', 'phishing', 'malware', 'abuse', 'copyright', 'other']) expect(normaliseReason(r)).toBe(r);
    for (const r of [undefined, null, 5, 'SPAM', 'hate', ['spam'], {}]) expect(normaliseReason(r)).toBe('other');
  });
});

describe('report detail truncation', () => {
  it('counts code points, so a surrogate pair is kept whole or dropped whole', () => {
    expect(truncateCodePoints('abc', 3)).toBe('abc');
    expect(truncateCodePoints('abcd', 3)).toBe('abc');
    expect(truncateCodePoints(`a${'😀'.repeat(3)}`, 3)).toBe('a😀😀');
    expect(truncateCodePoints('😀'.repeat(3), 3)).toBe('😀😀😀');
    const cut = truncateCodePoints(`x${'𝕏'.repeat(2500)}`, 2000);
    expect([...cut]).toHaveLength(2000);
    // No lone surrogate: it survives a UTF-8 round trip unchanged.
    expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut);
  });
});
