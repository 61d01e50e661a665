import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';

/**
 * Mixed traffic (uploads, reads with a download, lists) kept running while a fault happens, with
 * a record of what each call got. Every call has a deadline: one that passes it is a hang. Any
 * answer other than a 2xx or a proper refusal (503/507 with Retry-After and the error envelope,
 * no internals) is a violation, and so is a 2xx-stored artifact that a read cannot find.
 */

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export interface Stored {
  id: string;
  sha: string;
}

interface Outcome {
  op: 'upload' | 'read' | 'list';
  status: number;
}

const INTERNALS = /ECONN|ETIMEDOUT|ENOSPC|SQLITE|postgres|pg_|\bat .+:\d+|127\.0\.0\.1|s3rver|Connection terminated/i;

export class Traffic extends EventEmitter {
  /** Uploads answered 201, by filename. */
  readonly stored = new Map<string, Stored>();
  /** Uploads answered with a refusal: none of these may ever be visible. */
  readonly refusedUploads = new Set<string>();
  readonly violations: string[] = [];
  readonly counts = { ok: 0, refused: 0, byStatus: new Map<number, number>() };
  /** Each refusal's message, counted (what a timed-out wait reports). */
  readonly reasons = new Map<string, number>();
  private running = false;
  private workers: Promise<void>[] = [];
  private seq = 0;
  /** Names this run's uploads apart from any other run's (filenames and idempotency keys). */
  readonly prefix = `t${randomBytes(4).toString('hex')}-`;

  constructor(
    private readonly apiUrl: string,
    private readonly key: string,
    private readonly opts: { concurrency?: number; deadlineMs?: number; refusals?: number[] } = {},
  ) {
    super();
  }

  private get deadlineMs() {
    return this.opts.deadlineMs ?? 20_000;
  }

  start(): this {
    this.running = true;
    for (let i = 0; i < (this.opts.concurrency ?? 4); i++) this.workers.push(this.worker(i));
    return this;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    this.workers = [];
  }

  /** Resolves once `check` holds after some call ended (checked after every call). */
  until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('outcome', listener);
        reject(new Error(`timed out waiting for ${what}; so far ${JSON.stringify(this.summary())}`));
      }, timeoutMs);
      const listener = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.off('outcome', listener);
        resolve();
      };
      this.on('outcome', listener);
    });
  }

  summary() {
    return {
      ok: this.counts.ok,
      refused: this.counts.refused,
      stored: this.stored.size,
      byStatus: Object.fromEntries(this.counts.byStatus),
      reasons: Object.fromEntries(this.reasons),
      violations: this.violations.slice(0, 5),
    };
  }

  private async worker(n: number): Promise<void> {
    // Each worker cycles upload, read, read, list (offset by its number), so the mix holds
    // whether uploads succeed or are refused fast.
    for (let turn = n; this.running; turn++) {
      const pick = turn % 4;
      if (pick === 0 || this.stored.size === 0) await this.upload();
      else if (pick === 3) await this.list();
      else await this.read();
    }
  }

  private async call(op: Outcome['op'], method: string, url: string, init: RequestInit = {}) {
    const started = Date.now();
    try {
      const res = await fetch(url, {
        ...init,
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(init.headers as Record<string, string>) },
        signal: AbortSignal.timeout(this.deadlineMs),
      });
      const body = Buffer.from(await res.arrayBuffer());
      this.judge(op, method, url, res, body);
      // Over the tenant's rate limit, wait as told, like any well-behaved client: spinning on
      // instant 429s would only load the machine.
      if (res.status === 429) await sleep(1000 * Number(res.headers.get('retry-after') ?? 1));
      return { status: res.status, body, headers: res.headers };
    } catch (err) {
      const e = err as Error;
      this.violations.push(
        e.name === 'TimeoutError'
          ? `${method} ${url} hung past ${this.deadlineMs} ms`
          : `${method} ${url} failed after ${Date.now() - started} ms without an answer: ${e.message}`,
      );
      this.emit('outcome');
      return null;
    }
  }

  private judge(op: Outcome['op'], method: string, url: string, res: Response, body: Buffer): void {
    this.counts.byStatus.set(res.status, (this.counts.byStatus.get(res.status) ?? 0) + 1);
    if (res.status < 400) {
      this.counts.ok++;
    } else if (res.status === 429) {
      // The tenant's own rate limit (the traffic runs flat out): a refusal, with its headers.
      if (!res.headers.get('retry-after')) this.violations.push(`${op} 429 without Retry-After`);
    } else if ((this.opts.refusals ?? [503]).includes(res.status)) {
      this.counts.refused++;
      const text = body.toString();
      let code: unknown;
      let requestId: unknown;
      try {
        const json = JSON.parse(text) as { error: { code: unknown; request_id: unknown } };
        code = json.error.code;
        requestId = json.error.request_id;
        const reason = `${op} ${res.status}: ${String((json.error as { message?: unknown }).message)}`;
        this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
      } catch {
        code = undefined;
      }
      if (code !== 'server_error')
        this.violations.push(`${op} ${res.status} without the envelope: ${text.slice(0, 200)}`);
      if (!res.headers.get('retry-after')) this.violations.push(`${op} ${res.status} without Retry-After`);
      if (requestId !== res.headers.get('x-request-id'))
        this.violations.push(`${op} ${res.status} request id mismatch`);
      if (INTERNALS.test(text)) this.violations.push(`${op} ${res.status} leaks internals: ${text.slice(0, 200)}`);
    } else {
      this.violations.push(`${method} ${url} → ${res.status}: ${body.toString().slice(0, 300)}`);
    }
    this.emit('outcome');
  }

  private async upload(): Promise<void> {
    const filename = `${this.prefix}${++this.seq}.bin`;
    const content = randomBytes(1 + Math.floor(Math.random() * 24_000));
    const r = await this.call('upload', 'POST', `${this.apiUrl}/v1/artifacts`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': `idem-${filename}` },
      body: JSON.stringify({ filename, content: content.toString('base64') }),
    });
    if (!r) return;
    if (r.status === 201) {
      const rec = JSON.parse(r.body.toString()) as { artifact_id: string; sha256?: string };
      this.stored.set(filename, { id: rec.artifact_id, sha: sha256(content) });
    } else this.refusedUploads.add(filename);
  }

  private async read(): Promise<void> {
    const all = [...this.stored.values()];
    const a = all[Math.floor(Math.random() * all.length)];
    if (!a) return;
    const rec = await this.call('read', 'GET', `${this.apiUrl}/v1/artifacts/${a.id}/download-url`);
    if (rec?.status !== 200) return;
    const url = (JSON.parse(rec.body.toString()) as { download_url: string }).download_url;
    const bytes = await this.call('read', 'GET', url);
    if (bytes?.status === 200 && sha256(bytes.body) !== a.sha)
      this.violations.push(`${a.id} read back different bytes`);
  }

  private async list(): Promise<void> {
    await this.call('list', 'GET', `${this.apiUrl}/v1/artifacts?limit=20`);
  }
}

/**
 * After the fault: every artifact that got a 201 is listed and downloads with its SHA-256, and
 * nothing else is listed (no refused upload became visible).
 */
export async function expectNothingLost(apiUrl: string, key: string, traffic: Traffic): Promise<void> {
  const listed = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await fetch(`${apiUrl}/v1/artifacts?limit=200${q}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as {
      artifacts: { artifact_id: string; filename: string }[];
      next_cursor: string | null;
    };
    for (const a of page.artifacts) if (a.filename.startsWith(traffic.prefix)) listed.set(a.filename, a.artifact_id);
    cursor = page.next_cursor;
  } while (cursor);
  expect(traffic.stored.size).toBeGreaterThan(0);
  expect([...listed.keys()].sort()).toEqual([...traffic.stored.keys()].sort());
  for (const name of traffic.refusedUploads) expect(listed.has(name), `${name} was refused but is listed`).toBe(false);
  for (const [name, a] of traffic.stored) expect(listed.get(name)).toBe(a.id);
  // Download URLs 20 at a time: one URL request per artifact would outrun the tenant's rate limit
  // (200 burst, 100/s) whenever the traffic stored a few hundred artifacts (a quiet machine does).
  const stored = [...traffic.stored];
  for (let i = 0; i < stored.length; i += 20) {
    const batch = stored.slice(i, i + 20);
    const res = await fetch(`${apiUrl}/v1/artifacts/batch/download-urls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ artifact_ids: batch.map(([, a]) => a.id) }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { download_urls: urls } = (await res.json()) as {
      download_urls: { artifact_id: string; download_url?: string; error?: unknown }[];
    };
    for (const [j, [name, a]] of batch.entries()) {
      const item = urls[j];
      expect(item, `${name} gets a download URL`).toMatchObject({
        artifact_id: a.id,
        download_url: expect.any(String),
      });
      const bytes = new Uint8Array(await (await fetch(item?.download_url as string)).arrayBuffer());
      expect(sha256(bytes), `${name} downloads intact`).toBe(a.sha);
    }
  }
}
