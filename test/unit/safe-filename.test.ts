import { describe, expect, it } from 'vitest';
import { safeFilename } from '../../src/cli/client/transfer.js';

/** The name `cairn download` writes a server-chosen filename under, in the folder the user chose. */
describe('safeFilename', () => {
  it('keeps only the last path segment, whatever the separators', () => {
    expect(safeFilename('../../.bashrc', 'fallback')).toBe('.bashrc');
    expect(safeFilename('..\\..\\evil.txt', 'fallback')).toBe('evil.txt');
    expect(safeFilename('/etc/passwd', 'fallback')).toBe('passwd');
  });

  it('drops C0, DEL and C1 control characters (a terminal reads C1 as escapes) and bidi controls', () => {
    expect(safeFilename('re\u001b[31mport.md', 'x')).toBe('re[31mport.md');
    expect(safeFilename('a\u007fb\u0085c\u009bd.txt', 'x')).toBe('abcd.txt');
    expect(safeFilename('invoice\u202egnp.exe', 'x')).toBe('invoicegnp.exe');
    expect(safeFilename('a\u2066b\u2069\u200e\u061c\u2028c', 'x')).toBe('abc');
    expect(safeFilename('été ✓.txt', 'x')).toBe('été ✓.txt');
  });

  it('falls back when nothing usable is left', () => {
    for (const name of ['', '.', '..', '\u009b', 'dir/..']) expect(safeFilename(name, 'art_X')).toBe('art_X');
  });
});
