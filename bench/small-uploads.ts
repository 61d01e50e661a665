import { alternating, type Durations, smallUploadLoad } from './api-load.js';
import type { CairnChildInfo } from './cairn-child.js';
import { startCairn } from './engine-run.js';
import type { BenchChild } from './ipc.js';
import { ms, type ResultRow, ratio } from './report.js';

/**
 * Small uploads (4 KB multipart, 20 connections). The target compares Cairn with the same route
 * returning 201 without storing (a second Cairn process started with `--no-store`), so the
 * figure is what storing costs: the blob made durable, pinned and recorded. A bare Fastify route
 * with the same multipart settings is measured too, for scale: it shows what Cairn's request
 * path costs on top of parsing. All three alternate, best of `d.rounds` runs each.
 */
export async function smallUploadRows(
  cairn: BenchChild<CairnChildInfo>,
  cairnKey: string,
  noStoreDataDir: string,
  bareUrl: string,
  d: Durations,
  log: (s: string) => void,
): Promise<ResultRow[]> {
  const noStore = await startCairn(noStoreDataDir, {}, ['--no-store']);
  try {
    const { apiKey } = await noStore.call<{ apiKey: string }>('tenant', { name: 'small', plan: 'pro' });
    log('small uploads: Cairn alternating with the same route storing nothing and a bare route');
    const best = await alternating(
      ['bare', 'noStore', 'cairn'] as const,
      d,
      (side, _round, seconds) =>
        side === 'cairn'
          ? smallUploadLoad(cairn.info.apiUrl, cairnKey, seconds)
          : side === 'noStore'
            ? smallUploadLoad(noStore.info.apiUrl, apiKey, seconds)
            : smallUploadLoad(bareUrl, 'x', seconds),
      d.small,
    );
    const { cairn: stored, noStore: dropped, bare } = best;
    const name = 'small uploads (4 KB multipart, distinct bytes), 20 connections';
    const uploads = `${stored.reqPerSec.toFixed(0)} uploads/s (p50 ${ms(stored.p50)}, p99 ${ms(stored.p99)})`;
    return [
      {
        name,
        cairn: uploads,
        baseline: `same route, 201 without storing: ${dropped.reqPerSec.toFixed(0)}/s`,
        figure: ratio(stored.reqPerSec / dropped.reqPerSec),
        target: '≥ 0.3×',
        pass: stored.reqPerSec / dropped.reqPerSec >= 0.3,
      },
      {
        name: `${name}, for scale`,
        cairn: uploads,
        baseline: `bare Fastify multipart route: ${bare.reqPerSec.toFixed(0)}/s`,
        figure: ratio(stored.reqPerSec / bare.reqPerSec),
        target: '',
        pass: null,
      },
    ];
  } finally {
    await noStore.stop();
  }
}
