import type { Adapters } from './runtime.js';

/**
 * Whether this instance may take traffic: the metadata store, the blob store and (when one is
 * configured) Redis each answer within a bound. A check that hangs counts as failed, so a load
 * balancer's probe is answered in time whatever the dependency does.
 */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

export interface Readiness {
  ready: boolean;
  /** `ok`, or why the check failed (the error's code or message, never a secret). */
  checks: Record<string, string>;
}

type Check = () => Promise<void>;

function within(check: Check, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${ms} ms`), ms);
  });
  const run = check().then(
    () => 'ok',
    (err: unknown) => {
      const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
      return `failed: ${String(e?.code ?? e?.name ?? e?.message ?? err).slice(0, 200)}`;
    },
  );
  return Promise.race([run, timeout]).finally(() => clearTimeout(timer));
}

export function readinessChecks(adapters: Adapters): Record<string, Check> {
  const { store, blobs, limiter } = adapters;
  const checks: Record<string, Check> = {
    metadata_store: () => store.ping?.() ?? Promise.resolve(),
    blob_store: () => blobs.ping?.() ?? Promise.resolve(),
  };
  // Only a shared limiter has a server to ask; the in-process one is always there.
  if (limiter.ping) checks.redis = () => limiter.ping?.() ?? Promise.resolve();
  return checks;
}

export async function checkReadiness(
  checks: Record<string, Check>,
  timeoutMs = READINESS_CHECK_TIMEOUT_MS,
): Promise<Readiness> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((name) => within(checks[name] as Check, timeoutMs)));
  const out: Record<string, string> = {};
  names.forEach((name, i) => {
    out[name] = results[i] as string;
  });
  return { ready: results.every((r) => r === 'ok'), checks: out };
}
