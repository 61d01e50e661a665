import { describe, expect, it } from 'vitest';
import { uploadWireFields } from '../../packages/sdk/src/wire-fields.js';
import { UPLOAD_WIRE_FIELDS, UPLOAD_WIRE_NAMES, uploadRequestFrom } from '../../src/core/upload-request.js';
import { parseUploadMetadata } from '../../src/http/api/tus-headers.js';

/**
 * One upload request (issue 48): every edge maps the wire fields through uploadRequestFrom, so a
 * field named in UPLOAD_WIRE_FIELDS reaches the core from JSON, multipart, tus and presigned alike,
 * and the SDK names the same fields. A field added on one side only fails here.
 */
const SAMPLE: Record<string, unknown> = {
  filename: 'r.md',
  content_type: 'text/markdown',
  session_id: 'run-1',
  agent_id: 'bot',
  ttl: '7d',
  metadata: { k: 'v' },
  transcript: true,
};

describe('uploadRequestFrom', () => {
  it('maps every wire field and nothing else', () => {
    expect(Object.keys(SAMPLE).sort()).toEqual([...UPLOAD_WIRE_NAMES].sort());
    const req = uploadRequestFrom({ ...SAMPLE, content: 'aGk=', size_bytes: 5 } as Record<string, unknown>);
    expect(Object.keys(req).sort()).toEqual(Object.values(UPLOAD_WIRE_FIELDS).sort());
    expect(req).toMatchObject({ filename: 'r.md', contentType: 'text/markdown', metadata: { k: 'v' } });
    expect(uploadRequestFrom({})).toEqual({});
  });

  it('tus Upload-Metadata knows every wire field (and its aliases) and fills the same request', () => {
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const header = UPLOAD_WIRE_NAMES.map((name) => {
      const v = SAMPLE[name];
      return `${name} ${b64(typeof v === 'string' ? v : JSON.stringify(v))}`;
    }).join(',');
    expect(parseUploadMetadata(header)).toEqual({ ...uploadRequestFrom(SAMPLE), transcript: 'true' });
    expect(parseUploadMetadata(`name ${b64('a.txt')},filetype ${b64('text/plain')}`)).toEqual({
      filename: 'a.txt',
      contentType: 'text/plain',
    });
    expect(() => parseUploadMetadata(`colour ${b64('red')}`)).toThrow(/use filename, content_type/);
  });

  it('the SDK names the same fields', () => {
    const wire = uploadWireFields({
      filename: 'r.md',
      contentType: 'text/markdown',
      sessionId: 'run-1',
      agentId: 'bot',
      ttl: '7d',
      metadata: { k: 'v' },
      transcript: true,
    });
    expect(Object.keys(wire).sort()).toEqual([...UPLOAD_WIRE_NAMES].sort());
    expect(uploadRequestFrom(wire)).toEqual(uploadRequestFrom(SAMPLE));
  });
});
