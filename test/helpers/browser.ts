import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Frame,
  type Page,
} from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { startTestServer, type TestServer } from './server.js';

/**
 * Real Chromium (the Debian package) driven by playwright-core. Without it the browser suites are
 * skipped loudly on a development machine, and fail in CI (CI set), where Chromium must exist.
 */
export const CHROMIUM_PATH = process.env.CAIRN_CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM_PATH);
if (!haveChromium && !process.env.CI) {
  console.warn(
    `\n!!! SKIPPING browser tests: no Chromium at ${CHROMIUM_PATH} (set CAIRN_CHROMIUM_PATH). CI fails here.\n`,
  );
}
/**
 * For `describe.skipIf(skipBrowser)`: true only when Chromium is missing outside CI (in CI the
 * suites run anyway, and the launch fails them).
 */
export const skipBrowser = !haveChromium && !process.env.CI;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Nothing leaves the machine: requests to any host but the test server's are aborted. */
export async function keepLocal(page: Page): Promise<void> {
  await page.route(/^https?:\/\/(?!localhost[:/]|127\.0\.0\.1[:/])/, (route) => route.abort());
}

export interface ChromiumSession {
  s: TestServer;
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

/**
 * The hooks every Chromium file needs: a test server and one browser for the file, and a fresh
 * context and page (kept local) before each test, or once for the whole file with `per: 'file'`.
 * `ready` gets them, to set the file's own variables and listeners (and, once, its fixtures);
 * `server` sets the test server's options.
 */
export function useChromium(
  opts: { per: 'test' | 'file'; context?: BrowserContextOptions; server?: Parameters<typeof startTestServer>[0] },
  ready: (session: ChromiumSession) => void | Promise<void>,
): void {
  let s: TestServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  const open = async (server: TestServer, chromiumBrowser: Browser) => {
    await context?.close();
    context = await chromiumBrowser.newContext(opts.context);
    const page = await context.newPage();
    await keepLocal(page);
    await ready({ s: server, browser: chromiumBrowser, context, page });
  };
  beforeAll(async () => {
    if (skipBrowser) return;
    s = await startTestServer(opts.server);
    browser = await launchChromium();
    if (opts.per === 'file') await open(s, browser);
  });
  if (opts.per === 'test') {
    beforeEach(async () => {
      if (skipBrowser) return;
      await open(s as TestServer, browser as Browser);
    });
  }
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });
}

/**
 * Opens an ordinary page on the viewer origin with no security headers at all: the control on
 * which a probe must see scripts run, requests leave and cookies read, so that its checks can
 * fail. Every answer of Cairn's viewer carries a CSP, so the browser's router answers this one.
 * Chromium counts a routed document as "public", and would then refuse its requests to loopback
 * (Local Network Access); granting that permission keeps the control about our policy alone.
 */
export async function openControlPage(page: Page, s: TestServer): Promise<void> {
  const url = `${s.viewerUrl}/__control`;
  await page.context().grantPermissions(['local-network-access'], { origin: s.viewerUrl });
  await page.route(url, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>control</title>' }),
  );
  await page.goto(url);
}

export const OUTPUT_DIR = path.resolve('test-output');

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(OUTPUT_DIR, { recursive: true });
  const file = path.join(OUTPUT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

/**
 * Copies a screenshot over the committed one in docs/, only when asked to with
 * CAIRN_UPDATE_DOCS_SCREENSHOTS=1: an ordinary test run must leave the working tree clean.
 * Returns whether it copied.
 */
export async function copyToDocs(file: string, name: string): Promise<boolean> {
  if (process.env.CAIRN_UPDATE_DOCS_SCREENSHOTS !== '1') return false;
  await copyFile(file, path.resolve('docs', name));
  return true;
}

/** The frame showing `{content}/c/<slug>` inside the viewer shell, once it has loaded. */
export async function contentFrame(page: Page, s: TestServer, slug: string): Promise<Frame> {
  const prefix = `${s.contentUrl}/c/${slug}`;
  const handle = await page.waitForSelector('iframe');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('iframe has no frame');
  await frame.waitForLoadState('load');
  expect(frame.url().startsWith(prefix), frame.url()).toBe(true);
  return frame;
}

/** A small RGB gradient PNG (valid, so naturalWidth > 0 proves the image really decoded). */
export function makePng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = (crcTable[(c ^ b) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE(crc(body));
    return Buffer.concat([head, body, tail]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      row[1 + x * 3] = Math.round((x / width) * 255);
      row[2 + x * 3] = Math.round((y / height) * 200) + 30;
      row[3 + x * 3] = 180;
    }
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
