import { type ProcessUsage, USAGE_COMMAND } from './ipc.js';

/** What one transfer cost the machine, by process. */
export interface TransferUsage {
  /** CPU seconds the server's process used (every thread: the event loop, hashing, libuv's pool). */
  serverCpuS: number;
  /**
   * The kernel's part of serverCpuS. For an upload that is mostly the socket reads and the copies
   * into the page cache; on this project's VMs the latter cost several times more on memory the
   * host has taken back (docs/benchmarks.md), so this says how much of a slow run was that.
   */
  serverSystemS: number;
  /** CPU seconds the bench's own process used: the client that sent or fetched the bytes. */
  clientCpuS: number;
  /**
   * Minor page faults of the server: memory it touched for the first time. On this project's
   * virtual machines each costs tens of µs (the host backs guest memory lazily), so a run that
   * met fresh memory is slower for that reason alone.
   */
  serverFaults: number;
}

/**
 * `run` with what it cost the server (a bench child, which answers `usage`) and this process. On
 * two cores the client, the server and the kernel's writeback share the CPUs, so a transfer's
 * speed follows what all of them used, not the server's work alone.
 */
export async function withUsage<T>(
  server: { call<U>(cmd: string): Promise<U> },
  run: () => Promise<T>,
): Promise<{ value: T; usage: TransferUsage }> {
  const before = await server.call<ProcessUsage>(USAGE_COMMAND);
  const client = process.cpuUsage();
  const value = await run();
  const { user, system } = process.cpuUsage(client);
  const after = await server.call<ProcessUsage>(USAGE_COMMAND);
  return {
    value,
    usage: {
      serverCpuS: (after.cpuMicros - before.cpuMicros) / 1e6,
      serverSystemS: (after.systemMicros - before.systemMicros) / 1e6,
      clientCpuS: (user + system) / 1e6,
      serverFaults: after.minorFaults - before.minorFaults,
    },
  };
}

/** `server 2.41 s (0.92 s system), client 0.59 s, 1,382 page faults`, per GiB of `bytes`. */
export function usagePerGiB(u: TransferUsage, bytes: number): string {
  const gib = bytes / 1024 ** 3;
  const s = (x: number) => `${(x / gib).toFixed(2)} s`;
  return `server ${s(u.serverCpuS)} (${s(u.serverSystemS)} system), client ${s(u.clientCpuS)}, ${Math.round(u.serverFaults / gib).toLocaleString('en-US')} page faults`;
}
