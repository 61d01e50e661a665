/**
 * The names artifacts get inside an archive (and in a folder `cairn download --session` writes):
 * one flat folder of names every common OS and extractor accepts as a plain file name, so that no
 * entry can climb out of the folder it is extracted into, overwrite another entry, or show a name
 * that reads other than it is. Shared by the server (zip and tar entries) and the CLI (files on
 * disk), so both name a session's files alike.
 */

/** The one name an archive reserves for itself: its manifest. */
export const MANIFEST_NAME = 'manifest.json';

/** Longest entry name, in UTF-8 bytes (the common file-name limit: ext4, APFS, NTFS in UTF-16 is more). */
const MAX_NAME_BYTES = 255;

/** C0, DEL and C1 controls. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
/**
 * Bidirectional formatting characters (they make `txt.exe` read as `exe.txt`), zero-width and
 * invisible joiners, the BOM, and the line and paragraph separators.
 */
const INVISIBLE = /[\u061c\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2064\u2066-\u206f\ufeff]/g;
/** Path separators and the characters Windows refuses in a name. */
const SEPARATORS_AND_RESERVED = /[/\\<>:"|?*]/g;
/** Windows device names, refused with any extension (`CON.txt` too). */
const DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;

/**
 * A stored filename made safe as one plain file name: separators and Windows' reserved characters
 * become `_`, controls and invisible or bidirectional characters are dropped, leading and trailing
 * dots and spaces go (`..`, `.hidden`-looking dot runs, Windows' trailing dot), device names get a
 * `_` in front, and the result fits 255 UTF-8 bytes (the extension kept). Never empty.
 */
export function safeEntryName(filename: string): string {
  let name = filename
    .normalize('NFC')
    .replace(CONTROLS, '')
    .replace(INVISIBLE, '')
    .replace(SEPARATORS_AND_RESERVED, '_')
    .replace(/^[\s.]+/u, '')
    .replace(/[\s.]+$/u, '');
  if (name === '') name = 'file';
  if (DEVICE.test(name)) name = `_${name}`;
  return fitBytes(name, MAX_NAME_BYTES);
}

/** Cuts `name` to `max` UTF-8 bytes on a character boundary, keeping a short extension. */
function fitBytes(name: string, max: number): string {
  if (Buffer.byteLength(name, 'utf8') <= max) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  const room = max - Buffer.byteLength(ext, 'utf8');
  let stem = '';
  let used = 0;
  for (const ch of name.slice(0, name.length - ext.length)) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (used + n > room) break;
    stem += ch;
    used += n;
  }
  return stem + ext;
}

/** `report.md` with id `art_x` → `report.art_x.md`; a name without extension gets `.art_x` at the end. */
function withId(name: string, id: string): string {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  return `${fitBytes(stem, MAX_NAME_BYTES - Buffer.byteLength(`.${id}${ext}`, 'utf8'))}.${id}${ext}`;
}

/**
 * Entry names for artifacts in archive order: each its safe filename, unless an earlier entry
 * (or the manifest) already has that name, compared case-insensitively as Windows and macOS do;
 * then the artifact id goes before the extension. Artifact ids are unique, so suffixed names are
 * too. Oldest first keeps the plain name with the first artifact stored under it, so names stay
 * the same as a session grows.
 */
export function assignEntryNames(items: readonly { id: string; filename: string }[]): string[] {
  const taken = new Set([MANIFEST_NAME]);
  return items.map(({ id, filename }) => {
    const plain = safeEntryName(filename);
    const name = taken.has(fold(plain)) ? withId(plain, id) : plain;
    taken.add(fold(name));
    return name;
  });
}

const fold = (name: string) => name.normalize('NFC').toLowerCase();
