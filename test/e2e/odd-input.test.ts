import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttpMcp, type HttpMcp } from '../helpers/hosted.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { tusFetch, tusMetadata } from '../helpers/tus.js';

/**
 * One rule for each odd input (docs/api.md, "Odd input"), tried as a client would send it: JSON
 * text written by hand (escapes, repeated keys), base64 with blanks, tus lengths with leading
 * zeros, redirect URIs that name loopback in another spelling. Each is refused with a message
 * naming the rule, or, where the rule allows it, stored exactly.
 */

let srv: TestServer;
let mcp: HttpMcp;

beforeAll(async () => {
  srv = await startTestServer();
  mcp = await connectHttpMcp(srv.apiUrl, srv.apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await srv?.close();
});

/** A JSON upload from hand-written JSON text (escapes stay as written). */
const uploadJsonText = (text: string) => api(srv.apiUrl, srv.apiKey, 'POST', '/v1/artifacts', text);

describe('text that is not Unicode (unpaired surrogates, U+0000)', () => {
  it('a filename is refused, as metadata is, instead of being stored with U+FFFD', async () => {
    for (const half of ['\\ud800', '\\udfff', '\\udc00\\ud800']) {
      const r = await uploadJsonText(`{"filename":"a${half}.txt","content":"aGk="}`);
      expect(r.status, half).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
      expect(r.json.error.message).toMatch(/^filename must be Unicode text/);
    }
    const meta = await uploadJsonText('{"filename":"a.txt","content":"aGk=","metadata":{"k":"\\ud800"}}');
    expect(meta.status).toBe(400);
    expect(meta.json.error.message).toMatch(/unpaired surrogates/);
    // A pair is one character, and is stored as it is.
    const pair = await uploadJsonText('{"filename":"a\\ud83d\\ude00.txt","content":"aGk="}');
    expect(pair.status).toBe(201);
    expect(pair.json.filename).toBe('a😀.txt');
    const listed = await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts/${pair.json.artifact_id}`);
    expect(listed.json.filename).toBe('a😀.txt');
  });

  it('a page title and password are refused too', async () => {
    const a = await uploadJsonText('{"filename":"p.md","content":"IyBw"}');
    const publish = (text: string) =>
      api(srv.apiUrl, srv.apiKey, 'POST', `/v1/artifacts/${a.json.artifact_id}/publish`, text);
    const title = await publish('{"visibility":"unlisted","title":"T\\ud800"}');
    expect(title.status).toBe(400);
    expect(title.json.error.message).toMatch(/^title must be Unicode text/);
    const password = await publish('{"visibility":"unlisted","access":"password","password":"hunter2\\udbff"}');
    expect(password.status).toBe(400);
    expect(password.json.error.message).toMatch(/^password must be Unicode text/);
  });

  it('the MCP tools refuse it in a filename and in `text`', async () => {
    const name = await mcp.call('store_artifact', { filename: 'a\ud800.txt', text: 'hi' });
    expect(name.isError).toBe(true);
    expect(JSON.stringify(name.content)).toMatch(/Unicode text/);
    const text = await mcp.call('store_artifact', { filename: 'a.txt', text: 'half \ud800 a pair' });
    expect(text.isError).toBe(true);
    expect(JSON.stringify(text.content)).toMatch(/unpaired surrogate/);
  });

  it('tus Upload-Metadata that is not UTF-8 is refused, not patched with U+FFFD', async () => {
    const bad = `filename ${Buffer.from([0x61, 0xff, 0x2e, 0x74, 0x78, 0x74]).toString('base64')}`;
    const r = await tusFetch(`${srv.apiUrl}/v1/uploads/tus`, srv.apiKey, 'POST', {
      'Upload-Length': '2',
      'Upload-Metadata': bad,
    });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/filename is not UTF-8 text/);
  });
});

describe('base64 content', () => {
  const up = (content: string) => api(srv.apiUrl, srv.apiKey, 'POST', '/v1/artifacts', { filename: 'b.bin', content });
  it('takes line breaks (as `base64` wraps its output), nothing else; padding optional; the canonical encoding only', async () => {
    const bytes = Buffer.from('The quick brown fox jumps over the lazy dog, twice over.');
    const wrapped = bytes.toString('base64').replace(/(.{20})/g, '$1\n');
    for (const ok of [
      bytes.toString('base64'),
      wrapped,
      wrapped.replaceAll('\n', '\r\n'),
      bytes.toString('base64').replace(/=+$/, ''),
    ]) {
      const r = await up(ok);
      expect(r.status, JSON.stringify(ok)).toBe(201);
      expect(r.json.size_bytes).toBe(bytes.length);
    }
    for (const bad of [
      'aGVs bG8=', // a space inside
      'aGVs\tbG8=', // a tab
      'aGVsbG8=\u00a0', // a no-break space
      'aGVs\rbG8=', // a lone CR
      'aGVsbG8-', // base64url
      'QR==', // unused bits set: not the canonical form of "A"
      'QUI=QUI=', // padding inside
      'QUI==', // more padding than the group needs
    ]) {
      const r = await up(bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.json.error.message).toMatch(/^content is not valid base64/);
    }
  });

  it('the MCP tools follow the same rule', async () => {
    expect((await mcp.call('store_artifact', { filename: 'm.bin', content: 'aGVs\nbG8=' })).isError).toBeFalsy();
    for (const bad of ['aGVs bG8=', 'QR==']) {
      const r = await mcp.call('store_artifact', { filename: 'm.bin', content: bad });
      expect(r.isError, bad).toBe(true);
      expect(JSON.stringify(r.content)).toMatch(/not base64/);
    }
  });
});

describe('a key named twice in one JSON object', () => {
  it('is refused wherever JSON is read, instead of the last one winning', async () => {
    const twice = await uploadJsonText('{"filename":"a.txt","filename":"b.txt","content":"aGk="}');
    expect(twice.status).toBe(400);
    expect(twice.json.error.message).toBe(
      'The JSON body names the key "filename" twice in one object; send each key once',
    );
    // Deeper down, and spelt differently (an escape is the same key).
    const nested = await uploadJsonText('{"filename":"a.txt","content":"aGk=","metadata":{"run":1,"r\\u0075n":2}}');
    expect(nested.status).toBe(400);
    expect(nested.json.error.message).toMatch(/"run" twice/);
    // The same key in two objects, or inside an array of objects, is fine.
    const fine = await uploadJsonText(
      '{"filename":"a.txt","content":"aGk=","metadata":{"a":{"k":1},"b":{"k":[{"k":2},{"k":3}]}}}',
    );
    expect(fine.status).toBe(201);
    // A multipart upload's metadata field, and the other JSON bodies of the API origin.
    const form = new FormData();
    form.append('metadata', '{"k":1,"k":2}');
    form.append('file', new Blob(['hi']), 'f.txt');
    const multipart = await api(srv.apiUrl, srv.apiKey, 'POST', '/v1/artifacts', form);
    expect(multipart.status).toBe(400);
    expect(multipart.json.error.message).toMatch(/^metadata names the key "k" twice/);
    const publish = await api(
      srv.apiUrl,
      srv.apiKey,
      'POST',
      `/v1/artifacts/${fine.json.artifact_id}/publish`,
      '{"visibility":"unlisted","visibility":"public"}',
    );
    expect(publish.status).toBe(400);
    const register = await api(
      srv.apiUrl,
      null,
      'POST',
      '/oauth/register',
      '{"redirect_uris":["https://a.example/cb"],"redirect_uris":["https://b.example/cb"]}',
    );
    expect(register.status).toBe(400);
    expect(register.text).toMatch(/redirect_uris.* twice/);
    const tus = await tusFetch(`${srv.apiUrl}/v1/uploads/tus`, srv.apiKey, 'POST', {
      'Upload-Length': '2',
      'Upload-Metadata': tusMetadata({ filename: 't.txt', metadata: '{"k":1,"k":2}' }),
    });
    expect(tus.status).toBe(400);
    expect(tus.text).toMatch(/Upload-Metadata metadata names the key/);
  });
});

describe('tus lengths and offsets', () => {
  it('are plain decimal: a leading zero or a sign is refused, not read as the number', async () => {
    const create = (length: string) =>
      tusFetch(`${srv.apiUrl}/v1/uploads/tus`, srv.apiKey, 'POST', {
        'Upload-Length': length,
        'Upload-Metadata': tusMetadata({ filename: 'z.txt' }),
      });
    for (const bad of ['00010', '010', '+10', '1e3', '0x10', '10.0', '-1']) {
      const r = await create(bad);
      expect(r.status, bad).toBe(400);
      expect(r.text).toMatch(/without a sign or leading zeros/);
    }
    const ok = await create('10');
    expect(ok.status).toBe(201);
    const patch = await tusFetch(
      ok.headers.get('location') ?? '',
      srv.apiKey,
      'PATCH',
      {
        'Upload-Offset': '00',
        'Content-Type': 'application/offset+octet-stream',
      },
      Buffer.from('0123456789'),
    );
    expect(patch.status).toBe(400);
    expect((await create('0')).status).toBe(201);
  });
});

describe('OAuth registration', () => {
  it('takes a redirect URI only as the URL standard writes it, and names that spelling', async () => {
    const reg = (uris: string[]) => api(srv.apiUrl, null, 'POST', '/oauth/register', { redirect_uris: uris });
    for (const [odd, canonical] of [
      ['http://2130706433/cb', 'http://127.0.0.1/cb'],
      ['http://127.1/cb', 'http://127.0.0.1/cb'],
      ['http://0x7f.0.0.1/cb', 'http://127.0.0.1/cb'],
      ['http://LOCALHOST:3000/cb', 'http://localhost:3000/cb'],
      ['HTTPS://App.Example/cb', 'https://app.example/cb'],
      ['https://app.example', 'https://app.example/'],
      ['https://app.example/a b', 'https://app.example/a%20b'],
      ['https://app.example:443/cb', 'https://app.example/cb'],
    ] as const) {
      const r = await reg([odd]);
      expect(r.status, odd).toBe(400);
      expect(r.json).toMatchObject({ error: 'invalid_redirect_uri' });
      expect(r.json.error_description).toContain(`register ${JSON.stringify(canonical)}`);
      expect((await reg([canonical])).status, canonical).toBe(201);
    }
  });

  it('an authorize request spelling a registered loopback URI otherwise gets the error page, not a redirect', async () => {
    const client = (await api(srv.apiUrl, null, 'POST', '/oauth/register', { redirect_uris: ['http://127.0.0.1/cb'] }))
      .json;
    const params = (redirect: string) =>
      new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: redirect,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        state: 's',
      });
    for (const odd of ['http://127.1:5555/cb', 'http://2130706433/cb']) {
      const r = await fetch(`${srv.apiUrl}/oauth/authorize?${params(odd)}`, { redirect: 'manual' });
      expect(r.status, odd).toBe(400);
      expect(r.headers.get('location')).toBeNull();
    }
    // The loopback port may still change (RFC 8252), in the standard spelling.
    const port = await fetch(`${srv.apiUrl}/oauth/authorize?${params('http://127.0.0.1:5555/cb')}`, {
      redirect: 'manual',
    });
    expect(port.status).toBe(303);
  });

  it('too many registrations from one address: 429 temporarily_unavailable with Retry-After', async () => {
    let last: Awaited<ReturnType<typeof api>> | undefined;
    for (let i = 0; i < 30; i++) {
      last = await api(srv.apiUrl, null, 'POST', '/oauth/register', { redirect_uris: ['https://many.example/cb'] });
      if (last.status === 429) break;
    }
    expect(last?.status).toBe(429);
    expect(last?.json.error).toBe('temporarily_unavailable');
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
