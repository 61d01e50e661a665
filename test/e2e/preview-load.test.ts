import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKey } from '../../src/core/context.js';
import { PREVIEW_MAX_HTML_BYTES } from '../../src/http/render/preview/budget.js';
import { HIGHLIGHT_MAX_BYTES } from '../../src/http/render/preview/code.js';
import { publishContent } from '../helpers/pages.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * What a preview costs the server, tried as the third probe did, by an anonymous visitor of
 * published pages: the size of the answer for hostile files, whether the listeners still answer
 * while previews render, and that a second view of a page is a read and not another render.
 */

let s: TestServer;
const MiB = 1024 * 1024;
/** The page's own frame: stylesheet, head, notes. */
const FRAME = 16 * 1024;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const view = async (slug: string) => {
  const res = await fetch(`${s.contentUrl}/c/${slug}`);
  return { status: res.status, body: await res.text() };
};

/** A JavaScript file just under the highlighting bound: the costliest render of a preview kind. */
const code = (n: number) => {
  const line = `function f${n}(a, b) { return a * b + ${n}; } // "comment" <b>\n`;
  return line.repeat(Math.floor(HIGHLIGHT_MAX_BYTES / line.length) - 1);
};

describe('preview output', () => {
  it('a 2 MiB .txt of newlines is a few KB (it was 48 MB), a 2 MiB log of ESC[ at most the bound (it was 30 MB)', async () => {
    const newlines = await publishContent(s, { filename: 'n.txt', content: '\n'.repeat(2 * MiB) });
    const r = await view(newlines.slug);
    expect(r.status).toBe(200);
    expect(r.body.length).toBeLessThan(FRAME);
    expect(r.body).toContain('2,097,152 empty lines');
    const escapes = await publishContent(s, { filename: 'e.log', content: '\u001b['.repeat(MiB) });
    const e = await view(escapes.slug);
    expect(e.status).toBe(200);
    expect(Buffer.byteLength(e.body)).toBeLessThan(PREVIEW_MAX_HTML_BYTES + FRAME);
    expect(e.body).toContain('data-preview-stopped');
  });
});

describe('previews off the event loop', () => {
  it('GET /health answers at once while three previews render', async () => {
    const slugs = await Promise.all(
      [1, 2, 3].map(async (n) => (await publishContent(s, { filename: `c${n}.js`, content: code(n) })).slug),
    );
    const started = Date.now();
    let rendering = true;
    const views = Promise.all(slugs.map(view)).finally(() => {
      rendering = false;
    });
    let slowest = 0;
    while (rendering) {
      const t0 = Date.now();
      expect((await fetch(`${s.apiUrl}/health`)).status).toBe(200);
      slowest = Math.max(slowest, Date.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const rendered = Date.now() - started;
    for (const v of await views) {
      expect(v.status).toBe(200);
      expect(v.body).toContain('hljs-');
    }
    // Rendered on the event loop, /health waited for the renders (about as long as all of them);
    // on the render workers it answers in a fraction of that.
    expect(slowest, `slowest /health ${slowest} ms while three previews took ${rendered} ms`).toBeLessThan(
      rendered / 4,
    );
  });
});

describe('a preview is rendered once', () => {
  it('a later view of the page is a read: it is answered with the bytes gone from the blob store', async () => {
    const { artifact, slug } = await publishContent(s, { filename: 'once.js', content: code(4) });
    const first = await view(slug);
    expect(first.status).toBe(200);
    const { tenant } = await s.core.tenants.authenticate(s.apiKey);
    await s.core.deps.blobs.delete(blobKey(tenant.id, artifact.content_hash));
    const again = await view(slug);
    expect(again.status).toBe(200);
    expect(again.body).toBe(first.body);
  });

  it('and a Markdown page too', async () => {
    const { artifact, slug } = await publishContent(s, {
      filename: 'once.md',
      content: '# Once\n\nRendered *once*.\n',
    });
    const first = await view(slug);
    expect(first.body).toContain('<h1>Once</h1>');
    const { tenant } = await s.core.tenants.authenticate(s.apiKey);
    await s.core.deps.blobs.delete(blobKey(tenant.id, artifact.content_hash));
    expect(await view(slug)).toEqual(first);
  });
});
