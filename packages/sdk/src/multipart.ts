import { nodeCrypto } from './builtins.js';
import type { ProgressFn } from './types.js';

/** One multipart/form-data body: text fields first (the server checks them before reading the file), then the file. */
export interface MultipartPlan {
  boundary: string;
  contentType: string;
  /** Exact byte length when the file size is known, else null (chunked transfer). */
  contentLength: number | null;
  /** A fresh body each call; `file` must also be fresh (a new stream) each time. */
  body(file: AsyncIterable<Uint8Array>, onProgress?: ProgressFn): AsyncIterable<Uint8Array>;
}

const encoder = new TextEncoder();

/** Like browsers: quotes and line breaks in a header parameter are percent-encoded. */
function quoteParam(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function planMultipart(input: {
  fields: Record<string, string | undefined>;
  filename: string;
  fileContentType: string;
  fileSize: number | null;
}): MultipartPlan {
  const boundary = `----cairn-${nodeCrypto().randomBytes(16).toString('hex')}`;
  let head = '';
  for (const [name, value] of Object.entries(input.fields)) {
    if (value === undefined) continue;
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  head +=
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoteParam(input.filename)}"\r\n` +
    `Content-Type: ${input.fileContentType}\r\n\r\n`;
  const headBytes = encoder.encode(head);
  const tailBytes = encoder.encode(`\r\n--${boundary}--\r\n`);
  const contentLength = input.fileSize === null ? null : headBytes.length + input.fileSize + tailBytes.length;
  return {
    boundary,
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength,
    body: (file, onProgress) => frames(headBytes, file, tailBytes, input.fileSize, onProgress),
  };
}

async function* frames(
  head: Uint8Array,
  file: AsyncIterable<Uint8Array>,
  tail: Uint8Array,
  total: number | null,
  onProgress?: ProgressFn,
): AsyncGenerator<Uint8Array> {
  yield head;
  let sent = 0;
  onProgress?.(0, total);
  for await (const chunk of file) {
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    if (bytes.length === 0) continue;
    sent += bytes.length;
    yield bytes;
    onProgress?.(sent, total);
  }
  if (total !== null && sent !== total) {
    throw new Error(`Upload body was ${sent} bytes, expected ${total}; the file changed while it was being sent.`);
  }
  yield tail;
}
