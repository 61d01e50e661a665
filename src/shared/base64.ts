// Shared by the core (the API's `content`) and the MCP tools, which the local server loads without the core.

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The bytes of a base64 text, or null when it is not one. The one rule for base64 in JSON (the
 * API's `content`, the MCP tools' `content`): the standard alphabet (not base64url); line breaks
 * (LF or CRLF, as `base64` wraps its output) anywhere, and nothing else, spaces included; `=`
 * padding optional, but when given it completes the last group of four; and the canonical
 * encoding, whose unused bits are zero (`QR==` is not another way of writing `QQ==`).
 */
export function decodeBase64Text(text: string): Buffer | null {
  const s = text.includes('\n') ? text.replace(/\r?\n/g, '') : text;
  if (!BASE64_TEXT.test(s)) return null;
  const data = s.replace(/=+$/, '');
  const rest = data.length % 4;
  if (rest === 1 || (s.length > data.length && s.length % 4 !== 0)) return null;
  // The last character of a short group carries 4 (2 of 4) or 2 (3 of 4) unused bits.
  const unused = rest === 2 ? 0x0f : rest === 3 ? 0x03 : 0;
  if (unused !== 0 && (BASE64_ALPHABET.indexOf(data[data.length - 1] as string) & unused) !== 0) return null;
  return Buffer.from(data, 'base64');
}
