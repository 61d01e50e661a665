import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResult, expectError, put } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The boundary of a multipart body is checked at the HTTP edge, before the multipart parser sees
 * it: RFC 2046 allows 1 to 70 characters of its `bchars` (letters, digits, '()+_,-./:=? and
 * space), not ending in a space. Anything else is `400 invalid_request`, never a 500 (busboy
 * throws on a boundary over 252 characters, which used to surface as `500 server_error`).
 */

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

/** A whole multipart body with one file part, framed by `boundary`. */
const body = (boundary: string, filename = 'b.txt', text = 'boundary test') =>
  `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
  `Content-Type: text/plain\r\n\r\n${text}\r\n--${boundary}--\r\n`;

const upload = (contentType: string, payload: string): Promise<ApiResult> =>
  api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts', payload, { 'content-type': contentType });

const BCHARS_SPECIALS = "'()+_,-./:=?";

describe('valid boundaries, as common clients write them, are accepted', () => {
  const cases: [string, string, string][] = [
    [
      'curl -F',
      'multipart/form-data; boundary=------------------------d74496d66958873e',
      '------------------------d74496d66958873e',
    ],
    [
      'a browser',
      'multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW',
      '----WebKitFormBoundary7MA4YWxkTrZu0gW',
    ],
    [
      '.NET HttpClient (quoted)',
      'multipart/form-data; boundary="9f6b3a1e-6c2f-4c0e-9d4e-1f7f1c3f2b1a"',
      '9f6b3a1e-6c2f-4c0e-9d4e-1f7f1c3f2b1a',
    ],
    [
      'Python email (quoted, with =)',
      'multipart/form-data; boundary="===============5310968316352713217=="',
      '===============5310968316352713217==',
    ],
    ['one character', 'multipart/form-data; boundary=x', 'x'],
    ['70 characters', `multipart/form-data; boundary=${'B'.repeat(70)}`, 'B'.repeat(70)],
    [
      'every special bchar and an inner space (quoted)',
      `multipart/form-data; boundary="a${BCHARS_SPECIALS} z"`,
      `a${BCHARS_SPECIALS} z`,
    ],
    ['upper-case names, a charset before it', 'Multipart/Form-Data; charset=utf-8;BOUNDARY=abc123', 'abc123'],
    // The quoted value is one parameter's: the strict reading and busboy both find boundary=abc.
    ['a quoted value that looks like a boundary', 'multipart/form-data; x="a; boundary=zzz"; boundary=abc', 'abc'],
  ];
  it.each(cases)('%s', async (_label, contentType, boundary) => {
    const r = await upload(contentType, body(boundary));
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ filename: 'b.txt', size_bytes: 13 });
  });

  it('Python urllib with the email package’s multipart (a quoted boundary of = signs)', async () => {
    const script = `
import json, sys, urllib.request
from email.mime.multipart import MIMEMultipart
from email.mime.application import MIMEApplication
from email import encoders
m = MIMEMultipart('form-data')
part = MIMEApplication(b'from python', 'octet-stream', _encoder=encoders.encode_noop)
part.add_header('Content-Disposition', 'form-data', name='file', filename='py.txt')
m.attach(part)
raw = m.as_bytes().split(b'\\n\\n', 1)[1].replace(b'\\n', b'\\r\\n')
req = urllib.request.Request(sys.argv[1] + '/v1/artifacts', data=raw, method='POST', headers={
  'Authorization': 'Bearer ' + sys.argv[2], 'Content-Type': m['Content-Type']})
with urllib.request.urlopen(req) as res:
  print(json.dumps({'status': res.status, 'type': m['Content-Type'], 'body': json.loads(res.read())}))
`;
    const { stdout } = await promisify(execFile)('python3', ['-c', script, s.apiUrl, s.apiKey]);
    const out = JSON.parse(stdout);
    expect(out.type).toMatch(/^multipart\/form-data; boundary="=+\d+=="$/);
    expect(out.status).toBe(201);
    expect(out.body).toMatchObject({ filename: 'py.txt', size_bytes: 11 });
  });
});

describe('invalid boundaries are 400 invalid_request before the parser runs', () => {
  const cases: [string, string][] = [
    ['71 characters', `boundary=${'B'.repeat(71)}`],
    ['252 characters', `boundary=${'B'.repeat(252)}`],
    ['253 characters (busboy throws: was a 500)', `boundary=${'B'.repeat(253)}`],
    ['10,000 characters', `boundary=${'B'.repeat(10_000)}`],
    ['253 characters, quoted', `boundary="${'B'.repeat(253)}"`],
    ['missing', ''],
    ['empty', 'boundary='],
    ['empty, quoted', 'boundary=""'],
    ['ending in a space', 'boundary="abc "'],
    ['only a space', 'boundary=" "'],
    ['a character outside bchars (@)', 'boundary=abc@def'],
    ['a character outside bchars (*)', 'boundary=abc*def'],
    ['a character outside bchars (!)', 'boundary=abc!'],
    ['a quoted-pair', 'boundary="ab\\cd"'],
    ['a quote inside', 'boundary="ab\\"cd"'],
    ['non-ASCII', 'boundary=abc\u00e9'],
    ['a tab inside, quoted', 'boundary="ab\tcd"'],
    ['given twice', 'boundary=abc; boundary=def'],
    ['given twice, differently cased', 'boundary=abc; BOUNDARY=abc'],
    ['an RFC 2231 extended boundary', "boundary*=utf-8''abc"],
    ['an extended boundary beside a plain one', "boundary=abc; boundary*=utf-8''def"],
    ['spaces around =', 'boundary = abc'],
    ['an unterminated quote', 'boundary="abc'],
    ['text after the closing quote', 'boundary="abc"def'],
    ['a parameter without a value', 'boundary=abc; lonely'],
  ];
  it.each(cases)('%s', async (_label, params) => {
    const contentType = `multipart/form-data${params === '' ? '' : `; ${params}`}`;
    const r = await upload(contentType, body('abc', 'refused.txt'));
    expectError(r, 400, 'invalid_request');
    expect(r.json.error.message).toMatch(/boundary|Content-Type/);
  });

  it('and nothing was stored by any of them', async () => {
    const list = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?filename=refused.txt');
    expect(list.json.artifacts).toEqual([]);
  });
});

describe('every route of the API origin that is sent multipart', () => {
  it('never answers an over-long boundary with a 5xx (the report endpoint answers 202 to anything)', async () => {
    const rec = await put(s.apiUrl, s.apiKey, 'route probe');
    const routes: [string, string][] = [
      ['POST', '/v1/artifacts'],
      ['POST', '/v1/artifacts/upload-url'],
      ['POST', `/v1/artifacts/${rec.artifact_id}/links`],
      ['POST', `/v1/artifacts/${rec.artifact_id}/publish`],
      ['POST', `/v1/artifacts/${rec.artifact_id}/complete`],
      ['POST', '/v1/sessions/probe/seal'],
      ['POST', '/v1/public/pages/pg_0000000000000000/unlock'],
      ['POST', '/v1/public/pages/pg_0000000000000000/report'],
      ['POST', '/mcp'],
      ['POST', '/oauth/register'],
      ['POST', '/oauth/token'],
      ['POST', '/dashboard/login'],
    ];
    const answers: Record<string, number> = {};
    for (const [method, path] of routes) {
      const r = await api(s.apiUrl, s.apiKey, method, path, body('B'.repeat(253)), {
        'content-type': `multipart/form-data; boundary=${'B'.repeat(253)}`,
      });
      answers[`${method} ${path}`] = r.status;
    }
    for (const [route, status] of Object.entries(answers)) expect(status, route).toBeLessThan(500);
    expect(answers['POST /v1/artifacts']).toBe(400);
  });
});
