import path from 'node:path';
import type { Config } from '../config.js';

/**
 * What `cairn serve` prints once it listens: where each listener is (the address it is bound to,
 * and the public URL when one is configured), where records, bytes and rate limits are kept, and
 * on a first start the key. Every line fits 80 columns (a long value wraps at a space onto lines
 * of its own, indented), so no terminal breaks a phrase.
 */

const WIDTH = 80;
const LABEL = 11;

export function serveBanner(config: Config, apiKey: string | null, env: NodeJS.ProcessEnv = process.env): string {
  const lines = ['Cairn is running.'];
  const field = (label: string, value: string) => lines.push(...wrapField(label, value));
  const listener = (label: string, origin: string, port: number, configured: boolean) =>
    field(label, configured ? `${bound(config.host, port)}, public URL ${origin}` : origin);
  const hasOrigin = (name: string) => Boolean(env[name]?.trim());
  listener('API', config.apiOrigin, config.apiPort, hasOrigin('CAIRN_API_ORIGIN'));
  listener('Viewer', config.viewerOrigin, config.viewerPort, hasOrigin('CAIRN_VIEWER_ORIGIN'));
  listener('Content', config.contentOrigin, config.contentPort, hasOrigin('CAIRN_CONTENT_ORIGIN'));
  if (config.downloadOrigin !== config.contentOrigin) field('Downloads', config.downloadOrigin);
  if (config.metricsPort !== undefined) {
    field('Metrics', `http://${config.metricsHost}:${config.metricsPort}/metrics (readiness: /ready)`);
  }
  field('Records', records(config));
  field('Bytes', bytes(config));
  field('Limits', config.redisUrl ? `rate limits in Redis ${address(config.redisUrl)}` : 'rate limits in this process');
  if (apiKey) {
    lines.push(
      '',
      'First start: created tenant "default" and its API key, shown only this once:',
      `  ${apiKey}`,
      '',
      'Try it:',
      `  curl -H "Authorization: Bearer ${apiKey}" \\`,
      `       -F file=@README.md ${config.apiOrigin}/v1/artifacts`,
    );
  } else {
    lines.push('', 'Create more tenants and keys with: cairn admin tenant create NAME --plan pro');
  }
  return lines.join('\n');
}

function bound(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function records(config: Config): string {
  if (!config.databaseUrl) return `SQLite, ${path.join(config.dataDir, 'cairn.sqlite')}`;
  const schema = config.databaseSchema ? ` (schema ${config.databaseSchema})` : '';
  return `PostgreSQL ${address(config.databaseUrl)}${schema}`;
}

function bytes(config: Config): string {
  if (config.blobBackend === 'fs' || !config.s3Bucket) return `folder ${path.join(config.dataDir, 'blobs')}`;
  const prefix = config.s3Prefix ? `/${config.s3Prefix}` : '';
  const at = config.s3Endpoint ? ` at ${address(config.s3Endpoint)}` : '';
  return `S3 bucket ${config.s3Bucket}${prefix}${at}`;
}

/** host:port/path of a service URL, never its user or password. */
function address(url: string): string {
  try {
    const u = new URL(url);
    const where = u.port ? `${u.hostname}:${u.port}` : u.hostname;
    return u.pathname.length > 1 ? `${where}${u.pathname}` : where;
  } catch {
    return '(unparsed URL)';
  }
}

/** `  Label      value`, the value wrapped at spaces to 80 columns under itself. */
function wrapField(label: string, value: string): string[] {
  const indent = ' '.repeat(2 + LABEL);
  const out: string[] = [];
  let line = `  ${label.padEnd(LABEL)}`;
  let empty = true;
  for (const word of value.split(' ')) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      out.push(line);
      line = indent + word;
    } else {
      line += (empty ? '' : ' ') + word;
    }
    empty = false;
  }
  out.push(line);
  return out;
}
