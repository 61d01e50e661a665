import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * HMAC-SHA256 signatures for URLs that authorise by themselves (private download URLs,
 * presigned PUTs). Each use has its own purpose string so a signature for one can never be
 * replayed as another.
 */
export class UrlSigner {
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
}
