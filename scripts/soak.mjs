#!/usr/bin/env node
// `npm run soak -- --seconds N [--rate R]`: a mixed workload (small uploads, record reads, lists,
// download-link fetches, page views) sent at a fixed rate (open loop: a slow server does not slow
// the sender) against a running Cairn, printing each second's throughput, p50/p99 latency,
// errors per second and the server's RSS, then a summary. It exits 1 on any 5xx, or when RSS
// keeps growing (the last third's median above the middle third's by more than 25 % and 64 MiB).
//
// Without --api it starts `cairn serve` (the embedded default, dist/ must be built) on a temp
// data folder with a Pro tenant of its own, and reads RSS from /proc. Against your own instance:
// --api http://host:8080 --key ak_live_… [--metrics http://host:9464] (RSS from /metrics).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    rate: { type: 'string', default: '40' },
    api: { type: 'string' },
    key: { type: 'string' },
    metrics: { type: 'string' },
    'max-in-flight': { type: 'string', default: '200' },
  },
});
const seconds = Number(args.seconds);
const rate = Number(args.rate);
const maxInFlight = Number(args['max-in-flight']);
if (!(seconds > 0) || !(rate > 0)) {
  console.error('usage: npm run soak -- --seconds N [--rate R] [--api URL --key KEY [--metrics URL]]');
  process.exit(2);
}

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin', 'cairn.js');

/** Starts `cairn serve` on a fresh data folder with a Pro tenant; resolves when it is listening. */
async function startOwnServer() {
  if (!existsSync(path.join(root, 'dist', 'cli', 'main.js'))) {
    console.error('soak: dist/ is missing; run `npm run build` first (or pass --api and --key).');
    process.exit(2);
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-soak-'));
  const env = { ...process.env, CAIRN_DATA_DIR: dataDir, CAIRN_LOG_LEVEL: 'warn' };
  for (const k of ['CAIRN_DATABASE_URL', 'CAIRN_REDIS_URL', 'CAIRN_S3_BUCKET']) delete env[k];
  const created = spawnSync(process.execPath, [bin, 'admin', 'tenant', 'create', 'soak', '--plan', 'pro', '--json'], {
    env,
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(`cairn admin tenant create failed: ${created.stderr}`);
  const key = JSON.parse(created.stdout).api_key;
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...env, CAIRN_API_PORT: '0', CAIRN_VIEWER_PORT: '0', CAIRN_CONTENT_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (/API\s+http:\/\/\S+/.test(out) && /Content\s+http:\/\/\S+/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`cairn serve exited (${code}):\n${out}`)));
  });
  const api = /API\s+(http:\/\/\S+)/.exec(out)[1];
  return {
    api,
    key,
    rss: async () => {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : Number.NaN;
    },
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function rssFromMetrics(url) {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('process_resident_memory_bytes '));
    return line ? Number(line.split(' ')[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

const target = args.api
  ? {
      api: args.api.replace(/\/+$/, ''),
      key: args.key,
      rss: args.metrics ? () => rssFromMetrics(args.metrics.replace(/\/+$/, '')) : async () => Number.NaN,
      stop: async () => {},
    }
  : await startOwnServer();
if (!target.key) {
  console.error('soak: --key is required with --api');
  process.exit(2);
}
const auth = { authorization: `Bearer ${target.key}` };

async function call(url, init = {}) {
  const res = await fetch(url, { ...init, headers: { ...auth, ...init.headers }, signal: AbortSignal.timeout(30_000) });
  const body = await res.arrayBuffer();
  return { status: res.status, body, json: () => JSON.parse(Buffer.from(body).toString()) };
}

async function upload(name, text) {
  const r = await call(`${target.api}/v1/artifacts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ filename: name, content: Buffer.from(text).toString('base64'), ttl: '1d' }),
  });
  if (r.status !== 201) throw new Error(`seed upload: ${r.status} ${Buffer.from(r.body).toString()}`);
  return r.json().artifact_id;
}

// Seed: artifacts to read, download links to fetch, pages to view.
const seeded = [];
for (let i = 0; i < 10; i++) seeded.push(await upload(`seed-${i}.md`, `# Soak ${i}\n\n${'text '.repeat(200)}`));
const links = [];
const pages = [];
for (const id of seeded.slice(0, 3)) {
  links.push((await call(`${target.api}/v1/artifacts/${id}/links`, { method: 'POST' })).json().url);
  const p = await call(`${target.api}/v1/artifacts/${id}/publish`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ visibility: 'unlisted' }),
  });
  pages.push(p.json().public_url);
}
const known = [...seeded];
const pick = (list) => list[Math.floor(Math.random() * list.length)];

const OPS = [
  [
    30,
    'upload',
    async () => {
      const id = await call(`${target.api}/v1/artifacts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          filename: 'soak.bin',
          content: randomBytes(256 + Math.floor(Math.random() * 16_000)).toString('base64'),
          ttl: '1d',
        }),
      });
      if (id.status === 201 && known.length < 5000) known.push(id.json().artifact_id);
      return id.status;
    },
  ],
  [30, 'read', async () => (await call(`${target.api}/v1/artifacts/${pick(known)}`)).status],
  [15, 'list', async () => (await call(`${target.api}/v1/artifacts?limit=20`)).status],
  [15, 'link', async () => (await call(pick(links), { headers: {} })).status],
  [10, 'page', async () => (await call(pick(pages), { headers: {} })).status],
];
const weight = OPS.reduce((s, [w]) => s + w, 0);
function chooseOp() {
  let r = Math.random() * weight;
  for (const op of OPS) {
    r -= op[0];
    if (r < 0) return op;
  }
  return OPS[0];
}

const quantile = (sorted, q) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const all = [];
const perSecond = [];
let current = { done: 0, errors: 0, server: 0, latencies: [] };
let inFlight = 0;
let dropped = 0;
let fiveXX = 0;
const failures = new Map();

function fire() {
  if (inFlight >= maxInFlight) {
    dropped++;
    return;
  }
  inFlight++;
  const [, name, run] = chooseOp();
  const started = performance.now();
  run()
    .then(
      (status) => ({ status }),
      (err) => ({ status: 0, err }),
    )
    .then(({ status, err }) => {
      inFlight--;
      const ms = performance.now() - started;
      all.push(ms);
      current.latencies.push(ms);
      current.done++;
      // 2xx, 3xx (304) and 404 on a page view are answers; anything else counts as an error.
      if (status === 0 || status >= 400) {
        current.errors++;
        const k = `${name} ${status || (err?.name ?? 'error')}`;
        failures.set(k, (failures.get(k) ?? 0) + 1);
      }
      if (status >= 500) {
        current.server++;
        fiveXX++;
      }
    });
}

console.log(`soak: ${seconds} s at ${rate} req/s against ${target.api}`);
console.log('  t(s)  req/s   p50(ms)  p99(ms)  err/s  5xx  RSS(MiB)');
const rssSamples = [];
const started = performance.now();
let sent = 0;
await new Promise((resolve) => {
  // Open loop: each tick sends what the schedule owes by now, however the server is doing.
  const tick = setInterval(() => {
    const elapsed = (performance.now() - started) / 1000;
    const owed = Math.min(Math.floor(elapsed * rate), Math.floor(seconds * rate));
    while (sent < owed) {
      sent++;
      fire();
    }
    if (elapsed >= seconds) {
      clearInterval(tick);
      resolve();
    }
  }, 5);
  let second = 0;
  const report = setInterval(async () => {
    second++;
    const s = current;
    current = { done: 0, errors: 0, server: 0, latencies: [] };
    const sorted = s.latencies.sort((a, b) => a - b);
    const rss = await target.rss();
    rssSamples.push(rss);
    perSecond.push(s);
    console.log(
      `${String(second).padStart(6)} ${String(s.done).padStart(6)} ${quantile(sorted, 0.5).toFixed(1).padStart(9)} ${quantile(sorted, 0.99).toFixed(1).padStart(8)} ${String(s.errors).padStart(6)} ${String(s.server).padStart(4)} ${(rss / 1048576).toFixed(1).padStart(9)}`,
    );
    if (second >= seconds) clearInterval(report);
  }, 1000);
});
// Let the calls in flight finish (each has its own 30 s deadline).
while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
await target.stop();

const sorted = all.sort((a, b) => a - b);
const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length ? v[Math.floor(v.length / 2)] : Number.NaN;
};
const third = Math.floor(rssSamples.length / 3);
const mid = median(rssSamples.slice(third, 2 * third));
const last = median(rssSamples.slice(2 * third));
const growth = last - mid;
const rssGrows = Number.isFinite(growth) && growth > 64 * 1048576 && growth > 0.25 * mid;
const errors = [...failures].map(([k, n]) => `${k}×${n}`).join(', ') || 'none';
console.log(
  `\nsummary: ${all.length} calls in ${seconds} s (${(all.length / seconds).toFixed(1)}/s), dropped ${dropped}`,
);
console.log(
  `latency: p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms, max ${quantile(sorted, 1).toFixed(1)} ms`,
);
console.log(
  `errors: ${(perSecond.reduce((s, x) => s + x.errors, 0) / seconds).toFixed(2)}/s (${errors}); 5xx: ${fiveXX}`,
);
console.log(
  `RSS (MiB): first ${(rssSamples[0] / 1048576).toFixed(1)}, middle-third median ${(mid / 1048576).toFixed(1)}, last-third median ${(last / 1048576).toFixed(1)}, peak ${(Math.max(...rssSamples.filter(Number.isFinite)) / 1048576).toFixed(1)}`,
);
const problems = [];
if (fiveXX > 0) problems.push(`${fiveXX} responses were 5xx`);
if (rssGrows)
  problems.push(`RSS kept growing (${(growth / 1048576).toFixed(1)} MiB from the middle to the last third)`);
if (all.length < 0.9 * seconds * rate) problems.push(`only ${all.length} of ${seconds * rate} calls were made`);
if (problems.length > 0) {
  console.log(`FAIL: ${problems.join('; ')}`);
  process.exit(1);
}
console.log('OK: no 5xx, RSS bounded');
