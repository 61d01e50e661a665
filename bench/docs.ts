import { type Machine, machineLines, markdownTable, type ResultRow } from './report.js';

/** Everything after this line of docs/benchmarks.md is written by hand and kept by each run. */
export const HAND_WRITTEN_MARKER = '<!-- Written by hand below this line; npm run bench keeps it. -->';

/** The hand-written part of an earlier docs/benchmarks.md (from the marker on), or the marker alone. */
export function handWrittenPart(previous: string | null): string {
  const at = previous?.indexOf(HAND_WRITTEN_MARKER) ?? -1;
  return previous && at >= 0 ? previous.slice(at) : `${HAND_WRITTEN_MARKER}\n`;
}

/**
 * docs/benchmarks.md: what the bench measures and how, the machine, and the table of one run,
 * followed by the hand-written part (`kept`, from handWrittenPart).
 */
export function benchmarksMarkdown(rows: ResultRow[], m: Machine, mode: string, seconds: number, kept: string): string {
  return `# Benchmarks

\`npm run bench\` (sources in \`bench/\`, not part of the package) measures what users of a storage
service feel: how fast the CLI, the MCP server and the service start, large uploads and
downloads, the API's most frequent read, lists over a million rows, small uploads, and the same
on PostgreSQL. Every figure is a ratio against a baseline
measured in the same run on the same machine, so the ratios, not the absolute numbers, carry over
to other hardware.

${machineLines(m, mode).join('\n')}
- Duration: ${seconds.toFixed(0)} s

## Results

${markdownTable(rows)}

## How each figure is measured

- **Processes.** Cairn (the real \`startServer\` over the embedded default, data in \`os.tmpdir()\`),
  the bare baselines and s3rver each run in their own process; the load comes from the bench
  process. The bench lifts the per-tenant rate rule (the real limiter and request counter still
  run on every call) so throughput figures measure the server, not the plan's 100 requests/s.
- **Start-up** (first, on a machine the rest has not yet warmed): each command and its floor take
  turns, 7 times each (3 with \`--quick\`), and the medians are compared. \`cairn --version\` and
  \`cairn ls --limit 5\` (against a running Cairn) are timed in CPU (user + system, each
  child's rusage from \`wait4\`, in microseconds) beside a bare \`node -e 0\`: what each step of a
  script or an agent costs the machine.
  \`cairn mcp\` is timed from spawn to its answer to \`initialize\` (what an MCP host waits for)
  beside a minimal stdio server on the same MCP SDK with one tool (\`bench/bare-mcp-server.ts\`);
  \`cairn serve\` on a fresh data folder from spawn to the first 200 on \`/health\` beside a bare
  Fastify answering \`/health\` (\`bench/bare-serve.ts\`), for scale.
- **Large uploads.** A 1 GiB random file goes through the presigned flow (upload-url, PUT,
  complete) and its first 450 MiB as a multipart upload (the spec caps multipart at 500 MB); the
  peer is s3rver receiving a plain PUT of the same file. The same 1 GiB also goes up with tus
  (\`POST {api}/v1/uploads/tus\`, then one PATCH of the whole file, timed until its 204, when the
  artifact is active), compared with the presigned flow: its runs take turns with the presigned
  ones in the same round. For scale only: \`cp\` of the file
  followed by an \`fsync\` (Cairn answers once the blob is on the disk), and a bare node:http
  server that hashes the PUT as Cairn does and keeps nothing (on two cores client and server share
  the CPUs, so that is about the most a server checking its bytes can reach). Best of two runs
  each, alternating, every run after a \`sync\` and after a scratch file has been written and
  deleted (this VM backs memory lazily, and a first write to such memory is dear).
- **Server memory** is the Cairn process's peak RSS (sampled every 50 ms) minus its RSS before
  the upload. **Dedup** uploads the multipart file again and compares the blob bytes on disk.
- **Download** fetches the signed URL from \`download-url\`; the baseline is a bare node:http
  server piping the same file. Best of three, alternating, page cache warm for both.
- **GET** is autocannon with 50 connections against a small artifact's record; the baseline is a
  bare Fastify route (Cairn's Fastify options) returning the same JSON. Three 4 s runs each,
  alternating, best of each; the "for scale" rows give each process's CPU time per request, and a
  second bare route that answers at the end of its event-loop turn, as Cairn answers its GETs.
- **Lists.** One tenant is seeded with the row count above straight into the store, with
  metadata and sessions, so lists use the real indexes. Each shape (first page, a cursor 90 % of
  the way down, \`metadata.batch=b42\` (1 % of rows), \`metadata.kind=k3&metadata.batch=b42\` (two
  pairs), \`session_id=s42\` (0.1 %)) is requested one at a time over one keep-alive connection,
  every request timed.
- **Small uploads** are 4 KB multipart files with different bytes, 20 connections. The baseline is
  a second Cairn started with \`--no-store\` (\`bench/no-store.ts\`): everything the route does but
  storing, so the figure is the cost of storing (the blob made durable, pinned and recorded).
- **PostgreSQL** (when \`CAIRN_BENCH_DATABASE_URL\` or \`CAIRN_TEST_DATABASE_URL\` is set) runs the
  GET and list figures on a fresh schema beside SQLite, alternating between the two, so each ratio
  compares the engines at the same moments of the machine.

${kept}`;
}
