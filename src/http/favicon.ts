import type { FastifyInstance } from 'fastify';

/**
 * `/favicon.ico`, which every browser asks each origin for: without it every dashboard and viewer
 * page logged a 404. A 32x32 icon (three stacked stones, a cairn) drawn here as a classic ICO
 * (one 32-bit BMP image), so there is no binary file to keep and every browser reads it.
 */

const SIZE = 32;

/** The stones: centre x, centre y, radii, colour (RGB), bottom to top; y grows downwards. */
const STONES: [number, number, number, number, number][] = [
  [16, 24.5, 12.5, 5.5, 0x6b7280],
  [16, 15.5, 8.5, 4.5, 0x9ca3af],
  [16, 8, 5, 3.5, 0xd1d5db],
];

function pixel(x: number, y: number): number | null {
  for (let i = STONES.length - 1; i >= 0; i--) {
    const [cx, cy, rx, ry, rgb] = STONES[i] as [number, number, number, number, number];
    const dx = (x + 0.5 - cx) / rx;
    const dy = (y + 0.5 - cy) / ry;
    if (dx * dx + dy * dy <= 1) return rgb;
  }
  return null;
}

function drawIco(): Buffer {
  const pixels = SIZE * SIZE * 4;
  const mask = SIZE * (SIZE / 8); // 1 bit a pixel, rows of 4 bytes: all 0 (the alpha channel decides)
  const image = 40 + pixels + mask;
  const out = Buffer.alloc(6 + 16 + image);
  // ICONDIR: reserved, type 1 (icon), one image.
  out.writeUInt16LE(0, 0);
  out.writeUInt16LE(1, 2);
  out.writeUInt16LE(1, 4);
  // ICONDIRENTRY: width, height, colours, reserved, planes, bits, size, offset.
  out.writeUInt8(SIZE, 6);
  out.writeUInt8(SIZE, 7);
  out.writeUInt16LE(1, 10);
  out.writeUInt16LE(32, 12);
  out.writeUInt32LE(image, 14);
  out.writeUInt32LE(22, 18);
  // BITMAPINFOHEADER: the height counts the image and its mask.
  let o = 22;
  out.writeUInt32LE(40, o);
  out.writeInt32LE(SIZE, o + 4);
  out.writeInt32LE(SIZE * 2, o + 8);
  out.writeUInt16LE(1, o + 12);
  out.writeUInt16LE(32, o + 14);
  out.writeUInt32LE(pixels + mask, o + 20);
  o += 40;
  // Rows bottom-up, pixels as BGRA.
  for (let y = SIZE - 1; y >= 0; y--) {
    for (let x = 0; x < SIZE; x++) {
      const rgb = pixel(x, y);
      if (rgb !== null) {
        out.writeUInt8(rgb & 0xff, o);
        out.writeUInt8((rgb >> 8) & 0xff, o + 1);
        out.writeUInt8((rgb >> 16) & 0xff, o + 2);
        out.writeUInt8(0xff, o + 3);
      }
      o += 4;
    }
  }
  return out;
}

let ico: Buffer | undefined;

/** Adds GET (and HEAD) /favicon.ico to a listener. */
export function faviconRoute(app: FastifyInstance): void {
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => {
    ico ??= drawIco();
    return reply
      .type('image/x-icon')
      .header('Cache-Control', 'public, max-age=86400')
      .header('X-Content-Type-Options', 'nosniff')
      .send(ico);
  });
}
