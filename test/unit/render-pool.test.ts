import { afterEach, describe, expect, it } from 'vitest';
import { type RenderJob, renderDocument } from '../../src/http/render/render-job.js';
import { RenderPool } from '../../src/http/render/render-pool.js';

/** The render workers, real threads: the same documents as rendering in place, bounded in time and in waiting. */

const pools: RenderPool[] = [];
const pool = (opts: ConstructorParameters<typeof RenderPool>[0]) => {
  const p = new RenderPool(opts);
  pools.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const preview = (text: string, filename = 'a.js'): RenderJob => ({
  kind: 'preview',
  input: {
    kind: 'code',
    title: 'T',
    filename,
    contentType: 'text/javascript',
    bytes: Buffer.from(text),
    sizeBytes: text.length,
  },
});
/**
 * Markdown that takes markdown-it many seconds of CPU to parse (a list item per line; about 8 s on
 * a quiet 2-core machine), so that it outlasts any time limit below.
 */
const slowMarkdown: RenderJob = { kind: 'markdown', source: '-\n'.repeat(4 * 1024 * 1024), title: 'slow' };

describe('RenderPool', () => {
  it('renders on a worker exactly what rendering in place gives', async () => {
    const p = pool({ workers: 1 });
    const jobs: RenderJob[] = [
      preview('const x = 1; // <b>\n'),
      { kind: 'markdown', source: '# Hi\n\n[x](javascript:alert(1)) *ok*', title: 'M' },
    ];
    for (const job of jobs) expect(await p.render(job)).toEqual({ doc: renderDocument(job) });
  });

  it('stops a render past its time limit, and goes on with a new worker', async () => {
    // The limit is far below the slow job's CPU and far above a tiny job's first render on a fresh
    // worker, which on a machine running many other processes took several hundred milliseconds.
    const p = pool({ workers: 1, timeLimitMs: 1_500 });
    expect(await p.render(slowMarkdown)).toEqual({ refused: 'timed_out' });
    expect(await p.render(preview('let y = 2;\n'))).toEqual({ doc: renderDocument(preview('let y = 2;\n')) });
  });

  it('refuses a render as busy when too many are waiting, and runs the others in turn', async () => {
    const p = pool({ workers: 1, maxWaiting: 1, timeLimitMs: 60_000 });
    // The first goes to the worker at once, the second waits for it, the third finds no room.
    const running = p.render(preview('0\n'));
    const waiting = p.render(preview('1\n'));
    expect(await p.render(preview('2\n'))).toEqual({ refused: 'busy' });
    expect(await running).toEqual({ doc: renderDocument(preview('0\n')) });
    expect(await waiting).toEqual({ doc: renderDocument(preview('1\n')) });
  });
});
