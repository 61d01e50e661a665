import { describe, expect, it } from 'vitest';
import { firstDuplicateKey } from '../../src/core/json-text.js';
import { decodeBase64Text } from '../../src/shared/base64.js';

describe('firstDuplicateKey', () => {
  it('finds a key named twice in one object, at any depth, compared as decoded', () => {
    expect(firstDuplicateKey('{"a":1,"a":2}')).toBe('a');
    expect(firstDuplicateKey('{"x":{"y":[{"a":1,"b":{},"a":3}]}}')).toBe('a');
    expect(firstDuplicateKey('{"run":1,"r\\u0075n":2}')).toBe('run');
    expect(firstDuplicateKey('{"\\"":1,"\\u0022":2}')).toBe('"');
    expect(firstDuplicateKey('{"__proto__":1,"__proto__":2}')).toBe('__proto__');
  });

  it('is not fooled by strings: quotes, backslashes, brackets and commas inside them', () => {
    expect(firstDuplicateKey('{"a":"x\\"y,\\"a\\":1","b":"\\\\","c":"{[,]}"}')).toBeNull();
    expect(firstDuplicateKey('{"a\\\\":1,"a":2}')).toBeNull();
    expect(firstDuplicateKey('{"a":["a","a"],"b":{"a":1},"c":[{"a":1},{"a":2}]}')).toBeNull();
    expect(firstDuplicateKey('[1,"a",{"k":1},{"k":2}]')).toBeNull();
    expect(firstDuplicateKey('"{\\"a\\":1,\\"a\\":2}"')).toBeNull();
    expect(firstDuplicateKey(' { "a" : 1 , "b" : { } , "c" : [ ] } ')).toBeNull();
  });

  it('walks any nesting without recursion', () => {
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    expect(firstDuplicateKey(deep)).toBeNull();
    expect(firstDuplicateKey(`${'['.repeat(100_000)}{"k":1,"k":2}${']'.repeat(100_000)}`)).toBe('k');
  });
});

describe('decodeBase64Text', () => {
  it('decodes the standard alphabet with optional padding and line breaks', () => {
    expect(decodeBase64Text('aGVsbG8=')?.toString()).toBe('hello');
    expect(decodeBase64Text('aGVsbG8')?.toString()).toBe('hello');
    expect(decodeBase64Text('aGVs\nbG8=\n')?.toString()).toBe('hello');
    expect(decodeBase64Text('aGVs\r\nbG8=')?.toString()).toBe('hello');
    expect(decodeBase64Text('')?.length).toBe(0);
    expect(decodeBase64Text('+/+/')).toEqual(Buffer.from([0xfb, 0xff, 0xbf]));
  });

  it('refuses anything else', () => {
    for (const bad of [
      'aGVs bG8=',
      'aGVs\tbG8=',
      'aGVs\rbG8=',
      '-_-_',
      'QR==',
      'QUJ=',
      'QQ=',
      'Q',
      'QUI==',
      '=',
      'QQ==QQ==',
      'héllo',
    ]) {
      expect(decodeBase64Text(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});
