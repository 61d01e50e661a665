import { describe, expect, it } from 'vitest';
import { assignEntryNames, safeEntryName } from '../../src/shared/archive-names.js';

/** The names artifacts get in archives and in folders `cairn download --session` writes. */
describe('safeEntryName', () => {
  it.each([
    ['report.md', 'report.md'],
    ['..', 'file'],
    ['...', 'file'],
    ['../../etc/passwd', '_.._etc_passwd'],
    ['/abs/path', '_abs_path'],
    ['C:\\Windows\\win.ini', 'C__Windows_win.ini'],
    ['evil\u202Egpj.exe', 'evilgpj.exe'],
    ['a\u0000b\u001fc\u007fd\u0085e', 'abcde'],
    ['zero\u200Bwidth\uFEFF', 'zerowidth'],
    ['CON', '_CON'],
    ['nul.tar.gz', '_nul.tar.gz'],
    ['COM1.txt', '_COM1.txt'],
    ['console.txt', 'console.txt'],
    ['name. . ', 'name'],
    ['  .hidden', 'hidden'],
    ['a<b>c:d"e|f?g*h', 'a_b_c_d_e_f_g_h'],
    ['cafe\u0301', 'caf\u00e9'],
  ])('%j → %j', (given, safe) => {
    expect(safeEntryName(given)).toBe(safe);
  });

  it('fits 255 UTF-8 bytes on a character boundary, keeping the extension', () => {
    const name = safeEntryName(`${'\u00e9'.repeat(200)}.txt`);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    expect(name.endsWith('.txt')).toBe(true);
    expect(name).not.toContain('\ufffd');
  });
});

describe('assignEntryNames', () => {
  it('keeps the first of a name plain and gives the next ones their artifact id, case-insensitively; manifest.json is taken', () => {
    const names = assignEntryNames([
      { id: 'art_1', filename: 'Report.md' },
      { id: 'art_2', filename: 'report.md' },
      { id: 'art_3', filename: 'manifest.json' },
      { id: 'art_4', filename: 'README' },
      { id: 'art_5', filename: 'readme' },
      { id: 'art_6', filename: 'report.art_2.md' },
    ]);
    expect(names).toEqual([
      'Report.md',
      'report.art_2.md',
      'manifest.art_3.json',
      'README',
      'readme.art_5',
      'report.art_2.art_6.md',
    ]);
  });
});
