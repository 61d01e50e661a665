import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * HMAC-SHA256 signatures for URLs that authorise by themselves (private download URLs,
 * presigned PUTs). Each use has its own purpose string so a signature for one can never be
 * replayed as another.
 */
export class UrlSigner {
  private sealingKey: Buffer | null = null;

  constructor(private readonly secret: string) {}

  sign(purpose: string, subject: string, expiresAtSeconds: number): string {
    return createHmac('sha256', this.secret).update(`${purpose}\n${subject}\n${expiresAtSeconds}`).digest('base64url');
  }

  verify(purpose: string, subject: string, expiresAtSeconds: number, signature: string, nowMs: number): boolean {
    if (!Number.isSafeInteger(expiresAtSeconds) || expiresAtSeconds * 1000 <= nowMs) return false;
    const expected = Buffer.from(this.sign(purpose, subject, expiresAtSeconds));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /**
   * A URL-safe token that carries `payload` sealed (AES-256-GCM): only this secret can make one,
   * and only this secret can read it, so what it names (a tenant id, a query) is not shown to
   * whoever holds the URL. For URLs whose subject is more than an id (archive downloads).
   */
  seal(purpose: string, payload: unknown, expiresAtSeconds: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key(), iv).setAAD(Buffer.from(purpose));
    const text = JSON.stringify({ p: payload, e: expiresAtSeconds });
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The payload of a token `seal` made for `purpose`, or null when it is forged, altered, of another purpose or expired. */
  open(purpose: string, token: string, nowMs: number): unknown {
    if (!/^[A-Za-z0-9_-]{40,4096}$/.test(token)) return null;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length < 12 + 16 + 1) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key(), raw.subarray(0, 12)).setAAD(Buffer.from(purpose));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
      const { p, e } = JSON.parse(text.toString('utf8')) as { p: unknown; e: unknown };
      if (typeof e !== 'number' || !Number.isSafeInteger(e) || e * 1000 <= nowMs) return null;
      return p;
    } catch {
      return null;
    }
  }

  /** The sealing key, derived from the secret (never the signing key itself). */
  private key(): Buffer {
    this.sealingKey ??= createHmac('sha256', this.secret).update('cairn sealed token v1').digest();
    return this.sealingKey;
  }
}
