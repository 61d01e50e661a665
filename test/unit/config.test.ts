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
    expect(() => trustProxyOf('10.0.0.1, lb.internal')).toThrow(/trustProxy: .*"lb\.internal"/);
  });

  it('becomes a Fastify setting that trusts exactly that many hops, counted from the socket', () => {
    expect(fastifyTrustProxy(false)).toBe(false);
    expect(fastifyTrustProxy(['10.0.0.1'])).toEqual(['10.0.0.1']);
    const trust = fastifyTrustProxy(1) as (address: string, hop: number) => boolean;
    expect(trust('127.0.0.1', 0)).toBe(true);
    expect(trust('203.0.113.7', 1)).toBe(false);
  });
});

describe('CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS', () => {
  const load = (value?: string) =>
    loadConfig(
      { dataDir: '/tmp/cairn-config-test' },
      value === undefined ? {} : { CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS: value },
    );

  it('defaults to 60 s, takes whole seconds, 0 turns it off, and refuses anything else', () => {
    expect(load().uploadIdleTimeoutSeconds).toBe(60);
    expect(load('5').uploadIdleTimeoutSeconds).toBe(5);
    expect(load('0').uploadIdleTimeoutSeconds).toBe(0);
    for (const bad of ['-1', '1.5', 'soon']) expect(() => load(bad)).toThrow(/uploadIdleTimeoutSeconds/);
  });
});

describe('CAIRN_MAX_UPLOADS_PER_TENANT', () => {
  const load = (value?: string) =>
    loadConfig(
      { dataDir: '/tmp/cairn-config-test' },
      value === undefined ? {} : { CAIRN_MAX_UPLOADS_PER_TENANT: value },
    );

  it('defaults to 16, takes a whole number, 0 turns it off, and refuses anything else', () => {
    expect(load().maxUploadsPerTenant).toBe(16);
    expect(load('3').maxUploadsPerTenant).toBe(3);
    expect(load('0').maxUploadsPerTenant).toBe(0);
    for (const bad of ['-1', '2.5', 'many']) expect(() => load(bad)).toThrow(/maxUploadsPerTenant/);
  });
});
