import type { MetadataMatch } from '../../ports/metadata-store.js';

/**
 * Which of several metadata filters drives a list page. The page walks the driver's rows of
 * artifact_meta_lookup newest first and probes each other pair by primary key, so its cost is
 * the number of driver rows walked until a page's worth match them all: driving with a broad pair
 * (a seventh of a million rows) to find a narrow one walks thousands of rows, driving with the
 * narrow one a few hundred. The stores know no per-value counts, so each pair's density is read
 * from the same index: its newest DENSITY_PROBE rows, and how far back in time they reach (a pair
 * with fewer rows than that is the narrowest of all). A probe reads at most that many index
 * entries per pair, a fraction of a page.
 */
export const DENSITY_PROBE = 200;

export interface Density {
  /** Rows found, at most DENSITY_PROBE. */
  n: number;
  /** created_at of the oldest of them (null when none). */
  oldest: number | null;
}

/** The filters, the sparsest first (the walk's driver); ties keep the caller's order. */
export function sparsestFirst(matches: MetadataMatch[], densities: Density[]): MetadataMatch[] {
  const rank = (d: Density | undefined) =>
    !d || d.n < DENSITY_PROBE ? [0, d?.n ?? 0] : [1, d.oldest ?? Number.POSITIVE_INFINITY];
  return matches
    .map((match, i) => ({ match, i, r: rank(densities[i]) }))
    .sort((a, b) => a.r[0]! - b.r[0]! || a.r[1]! - b.r[1]! || a.i - b.i)
    .map((x) => x.match);
}
