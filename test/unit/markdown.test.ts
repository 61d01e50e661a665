import { describe, expect, it } from 'vitest';
import { isSafeImageUrl, isSafeLinkUrl, relativeArtifactName, renderMarkdown } from '../../src/http/render/markdown.js';
import { isAllowedHref, isAllowedSrc, MARKDOWN_XSS_PAYLOADS } from '../helpers/markdown-xss.js';

/** Tags and attributes the renderer may emit; anything else in the output is a failure. */
const ALLOWED_TAGS = new Set(
  'p a img em strong code pre h1 h2 h3 h4 h5 h6 ul ol li blockquote hr br table thead tbody tr th td s'.split(' '),
);
const ALLOWED_ATTRS: Record<string, Set<string>> = {
  a: new Set(['href', 'title', 'rel', 'target']),
  img: new Set(['src', 'alt', 'title', 'loading', 'referrerpolicy']),
  code: new Set(['class']),
  th: new Set(['style']),
  td: new Set(['style']),
  ol: new Set(['start']),
};

const decode = (v: string) =>
  v
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

interface Tag {
  name: string;
  attrs: [string, string][];
}

/**
 * Every tag of the output. The renderer escapes `<` in text, so each literal `<` starts real
 * markup, and it always writes attributes as name="value" with `"` escaped.
 */
function tagsOf(out: string): Tag[] {
  const tags: Tag[] = [];
  for (const m of out.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    const attrs: [string, string][] = [];
    const rest = (m[2] ?? '').replace(/\s([^\s="]+)="([^"]*)"/g, (_s, n: string, v: string) => {
      attrs.push([n.toLowerCase(), decode(v)]);
      return '';
    });
    // Nothing may be left over: no unquoted or valueless attributes.
    expect(rest.trim(), `stray attribute text in ${m[0]}`).toBe('');
    tags.push({ name: (m[1] ?? '').toLowerCase(), attrs });
  }
  // No `<` may appear other than as the start of a tag we parsed.
  expect(out.split('<').length - 1).toBe(out.match(/<\/?[a-zA-Z][\w-]*[^>]*>/g)?.length ?? 0);
  return tags;
}

function expectSafe(out: string): void {
  for (const tag of tagsOf(out)) {
    expect(ALLOWED_TAGS.has(tag.name), `tag <${tag.name}> in ${out}`).toBe(true);
    for (const [name, value] of tag.attrs) {
      expect(ALLOWED_ATTRS[tag.name]?.has(name), `attribute ${name} on <${tag.name}> in ${out}`).toBe(true);
      if (name === 'href') expect(isAllowedHref(value), `href ${value}`).toBe(true);
      if (name === 'src') expect(isAllowedSrc(value), `src ${value}`).toBe(true);
      if (name === 'style') expect(value).toMatch(/^text-align:(left|right|center)$/);
    }
  }
}

describe('Markdown sanitizer: XSS corpus', () => {
  it('has at least 30 payloads', () => {
    expect(MARKDOWN_XSS_PAYLOADS.length).toBeGreaterThanOrEqual(30);
  });

  it.each(MARKDOWN_XSS_PAYLOADS.map((p) => [p.name, p.markdown]))('%s renders inert', (_name, markdown) => {
    const out = renderMarkdown(markdown);
    expectSafe(out);
    expect(out).not.toMatch(/<(script|iframe|svg|object|embed|style|meta|body|details|math|div)\b/i);
    // No link survives with a script-capable target, whatever it looks like.
    expect(out).not.toMatch(/href="(?!https:\/\/|mailto:)/);
    expect(out).not.toMatch(/src="(?!https:\/\/|data:image\/(png|jpeg|gif|webp|avif))/);
  });

  it('keeps the text of a dropped link and the alt of a dropped image', () => {
    expect(renderMarkdown('[click me](javascript:alert(1))')).toBe('<p>click me</p>\n');
    expect(renderMarkdown('![a chart](data:image/svg+xml;base64,PHN2Zz4=)')).toBe('<p>a chart</p>\n');
    expect(renderMarkdown('[plain](http://example.com/)')).toBe('<p>plain</p>\n');
  });

  it('shows raw HTML as text', () => {
    expect(renderMarkdown('<b onclick="x()">hi</b>')).toBe('<p>&lt;b onclick=&quot;x()&quot;&gt;hi&lt;/b&gt;</p>\n');
  });
});

describe('Markdown sanitizer: what is kept', () => {
  it('keeps https and mailto links, with rel and a new tab', () => {
    const out = renderMarkdown('[site](https://example.com/a?b=1&c=2 "T") and [me](mailto:me@example.com)');
    expect(out).toContain(
      '<a href="https://example.com/a?b=1&amp;c=2" title="T" rel="noopener noreferrer nofollow" target="_blank">site</a>',
    );
    expect(out).toContain('<a href="mailto:me@example.com" rel="noopener noreferrer nofollow" target="_blank">me</a>');
    expectSafe(out);
  });

  it('linkifies bare URLs, upgrading scheme-less domains to https', () => {
    const out = renderMarkdown('see https://example.org/x and www.example.net and ops@example.com');
    expect(out).toContain('href="https://example.org/x"');
    expect(out).toContain('href="https://www.example.net"');
    expect(out).toContain('href="mailto:ops@example.com"');
    expectSafe(out);
  });

  it('keeps https images and raster data: images', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const out = renderMarkdown(`![chart](https://example.com/c.png) ![dot](${png})`);
    expect(out).toContain(
      '<img src="https://example.com/c.png" alt="chart" loading="lazy" referrerpolicy="no-referrer">',
    );
    expect(out).toContain(`<img src="${png}" alt="dot"`);
    expectSafe(out);
  });

  it('renders ordinary Markdown: headings, lists, code, tables', () => {
    const out = renderMarkdown(
      '# Title\n\n- one\n- **two**\n\n```ts\nconst a = 1 < 2;\n```\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n',
    );
    expect(out).toContain('<h1>Title</h1>');
    expect(out).toContain('<li><strong>two</strong></li>');
    expect(out).toContain('<code class="language-ts">const a = 1 &lt; 2;');
    expect(out).toContain('<td style="text-align:right">2</td>');
    expectSafe(out);
  });

  it('strips a leading byte order mark', () => {
    expect(renderMarkdown('\ufeff# Hi')).toBe('<h1>Hi</h1>\n');
  });
});

describe('URL checks', () => {
  it.each([
    ['https://example.com', true],
    ['HTTPS://EXAMPLE.COM/x', true],
    ['mailto:a@b.c', true],
    ['http://example.com', false],
    ['javascript:alert(1)', false],
    ['JAVASCRIPT:alert(1)', false],
    ['java\tscript:alert(1)', false],
    [' javascript:alert(1)', false],
    ['\u0000javascript:alert(1)', false],
    ['&#106;avascript:alert(1)', false],
    ['https:javascript:alert(1)', false],
    ['https:///nohost', false],
    ['//example.com', false],
    ['/relative', false],
    ['#frag', false],
    ['data:text/html,x', false],
    ['vbscript:x', false],
    ['', false],
  ])('link %j → %s', (url, safe) => {
    expect(isSafeLinkUrl(url)).toBe(safe);
  });

  it.each([
    ['https://example.com/a.png', true],
    ['data:image/png;base64,AAAA', true],
    ['data:image/jpeg;base64,AAAA', true],
    ['data:image/gif,AAAA', true],
    ['data:image/webp;base64,AAAA', true],
    ['data:image/avif;base64,AAAA', true],
    ['DATA:IMAGE/PNG;base64,AAAA', true],
    ['data:image/svg+xml;base64,AAAA', false],
    ['data:image/svg+xml,<svg>', false],
    ['data:image/png+svg,AAAA', false],
    ['data: image/png;base64,AAAA', false],
    ['data:text/html;base64,AAAA', false],
    ['http://example.com/a.png', false],
    ['javascript:alert(1)', false],
    ['mailto:a@b.c', false],
    ['/a.png', false],
  ])('image %j → %s', (url, safe) => {
    expect(isSafeImageUrl(url)).toBe(safe);
  });
});

describe('relative references to artifacts beside the page', () => {
  it('a bare filename (./, percent-encoded, with a query or fragment) is a name; anything with a path or scheme is not', () => {
    expect(relativeArtifactName('chart.png')).toBe('chart.png');
    expect(relativeArtifactName('./chart.png')).toBe('chart.png');
    expect(relativeArtifactName('chart%20v2.png#top')).toBe('chart v2.png');
    expect(relativeArtifactName('data.csv?x=1')).toBe('data.csv');
    for (const bad of [
      '../chart.png',
      '%2e%2e%2fchart.png',
      '..',
      '.',
      'sub/chart.png',
      'sub%2Fchart.png',
      '/chart.png',
      '//evil.example/x.png',
      '\\\\evil\\x.png',
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'java&#x09;script:alert(1)',
      'http://example.com/x.png',
      '%00.png',
      '%zz.png',
      '#top',
      '?q',
      '',
    ]) {
      expect(relativeArtifactName(bad), bad).toBeNull();
    }
  });

  it('rewritten to the page base only when asked, encoded, in links and images alike', () => {
    const html = renderMarkdown('![c](chart%20v2.png) [d](data.csv) ![x](../x.png)', { relativeBase: '/c/pg_X/f/' });
    expect(html).toContain('src="/c/pg_X/f/chart%20v2.png"');
    expect(html).toContain('href="/c/pg_X/f/data.csv"');
    expect(html).not.toContain('x.png');
    expect(renderMarkdown('![c](chart.png)')).not.toContain('<img');
  });
});
