import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

/** Helpers for tests that run the real `cairn` binary as a subprocess. */

export const BIN = path.resolve(import.meta.dirname, '../../bin/cairn.js');

/** Environment for a child: the parent's, minus every CAIRN_* setting, plus `extra`. */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CAIRN_')) env[k] = v;
  return { ...env, ...extra };
}

export interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Whether it was killed for not ending within the bound. */
  killed: boolean;
}

/** Runs the built `cairn` with `args` (a child environment of `env`); SIGKILLs it if it has not ended after `boundMs`. */
export function runToExit(args: string[], env: Record<string, string>, boundMs = 20_000): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, boundMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, killed });
    });
  });
}

/**
 * Writes a `cairn` into `dir` that runs this checkout's bin/cairn.js with this Node: put `dir`
 * first on a child's PATH and `cairn` runs by name, as after `npm link`.
 */
export async function writeCairnShim(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'cairn'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, { mode: 0o755 });
}

/**
 * Runs any command to its end with exactly `env`, `input` on stdin (then closed), and collects
 * its output. Asynchronous on purpose: a server under test in this process keeps answering.
 */
export function runCommand(
  command: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; input?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

export interface ServeProcess {
  child: ChildProcess;
  apiUrl: string;
  viewerUrl: string;
  contentUrl: string;
  /** The key printed on the first start of an empty data folder, else null. */
  apiKey: string | null;
  banner: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (unless already gone) and wait for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `cairn serve` on `dataDir` with OS-chosen ports (on `node`) and waits for its banner. */
export async function spawnServe(
  dataDir: string,
  extraEnv: Record<string, string> = {},
  timeoutMs = 20_000,
  nodeArgs: string[] = [],
  node: string = process.execPath,
): Promise<ServeProcess> {
  const child = spawn(node, [...nodeArgs, BIN, 'serve'], {
    env: childEnv({
      CAIRN_DATA_DIR: dataDir,
      CAIRN_API_PORT: '0',
      CAIRN_VIEWER_PORT: '0',
      CAIRN_CONTENT_PORT: '0',
      CAIRN_LOG_LEVEL: 'silent',
      ...extraEnv,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const done = /curl [\s\S]*\/v1\/artifacts|Create more tenants/;
  const deadline = Date.now() + timeoutMs;
  while (!done.test(out)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`cairn serve exited early (${child.exitCode ?? child.signalCode}):\n${out}\n${err}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`cairn serve did not start in time:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const url = (label: string) => {
    const m = new RegExp(`${label}\\s+(http://\\S+)`).exec(out);
    if (!m?.[1]) throw new Error(`no ${label} URL in banner:\n${out}`);
    return m[1];
  };
  const key = /\b(ak_live_[A-Za-z0-9]{32})\b/.exec(out)?.[1] ?? null;
  return {
    child,
    apiUrl: url('API'),
    viewerUrl: url('Viewer'),
    contentUrl: url('Content'),
    apiKey: key,
    banner: out,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface SlowUploadOptions {
  /** The file bytes, or a size: that many bytes are generated chunk by chunk, never all held at once. */
  content: Buffer | number;
  filename: string;
  chunkBytes?: number;
  /** Pause between chunks. */
  delayMs?: number;
  /** Called once the first chunk of file bytes has been written. */
  onStarted?: () => void;
  fields?: Record<string, string>;
}

export interface UploadOutcome {
  status?: number;
  body?: string;
  error?: string;
}

/**
 * A multipart upload over node:http that streams the file in chunks (trickling with `delayMs`);
 * it stops sending once the server has answered, and never rejects.
 */
export function slowUpload(apiUrl: string, key: string, opts: SlowUploadOptions): Promise<UploadOutcome> {
  const boundary = `----cairnSlow${Math.random().toString(16).slice(2)}`;
  const fields = Object.entries(opts.fields ?? {})
    .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('');
  const head = Buffer.from(
    `${fields}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${opts.filename}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const url = new URL(`${apiUrl}/v1/artifacts`);
  const chunk = opts.chunkBytes ?? 64 * 1024;
  const delay = opts.delayMs ?? 0;
  const size = typeof opts.content === 'number' ? opts.content : opts.content.length;
  const filler = typeof opts.content === 'number' ? Buffer.alloc(chunk, 0x61) : null;
  const piece = (off: number) =>
    filler ? filler.subarray(0, Math.min(chunk, size - off)) : (opts.content as Buffer).subarray(off, off + chunk);
  return new Promise<UploadOutcome>((resolve) => {
    let settled = false;
    const finish = (o: UploadOutcome) => {
      if (!settled) {
        settled = true;
        resolve(o);
      }
    };
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + size + tail.length),
      },
    });
    req.on('error', (e) => finish({ error: e.message }));
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => {
        finish({ status: res.statusCode ?? 0, body });
        // An early answer (413, 403…) ends the exchange; stop the rest of the upload.
        req.destroy();
      });
      res.on('error', (e) => finish({ error: e.message }));
    });
    (async () => {
      req.write(head);
      for (let off = 0; off < size; off += chunk) {
        if (settled || req.destroyed) return;
        const ok = req.write(piece(off));
        if (off === 0) opts.onStarted?.();
        if (!ok) await new Promise((r) => req.once('drain', r));
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      }
      req.end(tail);
    })().catch((e: Error) => finish({ error: e.message }));
  });
}
