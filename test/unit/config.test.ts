import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { fastifyTrustProxy } from '../../src/http/fastify-options.js';

const trustProxyOf = (value: string | undefined) =>
  loadConfig({ dataDir: '/tmp/cairn-config-test' }, { CAIRN_TRUST_PROXY: value }).trustProxy;

describe('CAIRN_TRUST_PROXY', () => {
  it('is off by default and for 0/false/no', () => {
    for (const v of [undefined, '', ' ', '0', 'false', 'no', 'off']) expect(trustProxyOf(v), String(v)).toBe(false);
  });

  it('1 and true mean one trusted hop, never "trust every hop"', () => {
    for (const v of ['1', 'true', 'TRUE', 'yes', 'on']) expect(trustProxyOf(v), v).toBe(1);
    expect(trustProxyOf('2')).toBe(2);
  });

  it('takes a comma-separated list of proxy addresses, CIDRs and range names', () => {
    expect(trustProxyOf('10.0.0.1, 10.1.0.0/16,fd00::/8 ,::1,loopback')).toEqual([
      '10.0.0.1',
      '10.1.0.0/16',
      'fd00::/8',
      '::1',
      'loopback',
    ]);
  });

  it('refuses anything else with a message naming the bad entries', () => {
    for (const v of ['lb.internal', '10.0.0.0/33', '10.0.0.1,', '::1/129', '1.2.3', '99', '-1', '10.0.0.0/8/1']) {
      expect(() => trustProxyOf(v), v).toThrow(ConfigError);
    }
    expect(() => trustProxyOf('10.0.0.1, lb.internal')).toThrow(/CAIRN_TRUST_PROXY=.*: .*"lb\.internal"/);
  });

  it('becomes a Fastify setting that trusts exactly that many hops, counted from the socket', () => {
    expect(fastifyTrustProxy(false)).toBe(false);
    expect(fastifyTrustProxy(['10.0.0.1'])).toEqual(['10.0.0.1']);
    const trust = fastifyTrustProxy(1) as (address: string, hop: number) => boolean;
    expect(trust('127.0.0.1', 0)).toBe(true);
    expect(trust('203.0.113.7', 1)).toBe(false);
  });
});

/** Whole-number settings where 0 turns the feature off. */
const wholeNumberSettings = [
  {
    env: 'CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS',
    key: 'uploadIdleTimeoutSeconds',
    byDefault: 60,
    some: '5',
    bad: ['-1', '1.5', 'soon'],
  },
  {
    env: 'CAIRN_MAX_UPLOADS_PER_TENANT',
    key: 'maxUploadsPerTenant',
    byDefault: 16,
    some: '3',
    bad: ['-1', '2.5', 'many'],
  },
] as const;

describe.each(wholeNumberSettings)('$env', ({ env, key, byDefault, some, bad }) => {
  const load = (value?: string) =>
    loadConfig({ dataDir: '/tmp/cairn-config-test' }, value === undefined ? {} : { [env]: value })[key];

  it(`defaults to ${byDefault}, takes a whole number, 0 turns it off, and refuses anything else`, () => {
    expect(load()).toBe(byDefault);
    expect(load(some)).toBe(Number(some));
    expect(load('0')).toBe(0);
    // Named as it was set: the variable and its value.
    for (const value of bad) expect(() => load(value)).toThrow(`${env}=${JSON.stringify(value)}: `);
  });
});

describe('CAIRN_BLOB_BACKEND', () => {
  const backendOf = (env: Record<string, string>) => loadConfig({ dataDir: '/tmp/cairn-config-test' }, env).blobBackend;

  it('unset: the folder, or S3 when a bucket is named (as before the setting existed)', () => {
    expect(backendOf({})).toBe('fs');
    expect(backendOf({ CAIRN_S3_BUCKET: 'cairn-bytes' })).toBe('s3');
  });

  it('fs keeps the bytes in the folder even with a bucket named; s3 needs the bucket', () => {
    expect(backendOf({ CAIRN_BLOB_BACKEND: 'fs', CAIRN_S3_BUCKET: 'cairn-bytes' })).toBe('fs');
    expect(backendOf({ CAIRN_BLOB_BACKEND: 's3', CAIRN_S3_BUCKET: 'cairn-bytes' })).toBe('s3');
    expect(() => backendOf({ CAIRN_BLOB_BACKEND: 's3' })).toThrow(
      /CAIRN_BLOB_BACKEND="s3": needs CAIRN_S3_BUCKET, the bucket that keeps the bytes/,
    );
    expect(() => backendOf({ CAIRN_BLOB_BACKEND: 'gcs' })).toThrow(/CAIRN_BLOB_BACKEND="gcs"/);
  });
});
