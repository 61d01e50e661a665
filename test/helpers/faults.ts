/**
 * Fault injection over a REAL adapter (no mock): the next call of a named method throws, or waits
 * first, and every other call is the adapter's own. Lets a test show what a transient failure of
 * S3, PostgreSQL or the disk at one exact step does to a request, and that a retry recovers.
 */
export interface Faults<T extends object> {
  /** Hand this to the code under test in place of the real adapter. */
  target: T;
  /** The next call of `method` rejects with `error` without reaching the adapter. */
  failNext(method: keyof T & string, error?: Error): void;
  /** The next call of `method` waits `ms` before running. */
  delayNext(method: keyof T & string, ms: number): void;
  /** Names of the methods called so far, in order. */
  calls: string[];
}

export function withFaults<T extends object>(real: T): Faults<T> {
  const failures = new Map<string, Error>();
  const delays = new Map<string, number>();
  const calls: string[] = [];
  const target = new Proxy(real, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return async (...args: unknown[]) => {
        calls.push(prop);
        const wait = delays.get(prop);
        if (wait !== undefined) {
          delays.delete(prop);
          await new Promise((r) => setTimeout(r, wait));
        }
        const failure = failures.get(prop);
        if (failure) {
          failures.delete(prop);
          throw failure;
        }
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
  return {
    target,
    calls,
    failNext: (method, error = new Error(`injected failure of ${method}`)) => {
      failures.set(method, error);
    },
    delayNext: (method, ms) => {
      delays.set(method, ms);
    },
  };
}
