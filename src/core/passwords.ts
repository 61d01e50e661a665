import { Algorithm, hash, verify } from '@node-rs/argon2';

/** Page passwords: Argon2id with the OWASP minimum parameters (19 MiB memory, 2 passes, 1 lane). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** Does the work of a verify against nothing, so a missing page costs as much time as a real one. */
  verifyDummy(password: string): Promise<void>;
}

export const ARGON2_OWASP = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export class Argon2idHasher implements PasswordHasher {
  private dummy: Promise<string> | null = null;

  hash(password: string): Promise<string> {
    return hash(password, ARGON2_OWASP);
  }

  async verify(stored: string, password: string): Promise<boolean> {
    try {
      return await verify(stored, password);
    } catch {
      // A malformed stored hash never opens a page.
      return false;
    }
  }

  async verifyDummy(password: string): Promise<void> {
    this.dummy ??= hash('cairn-dummy-password', ARGON2_OWASP);
    await this.verify(await this.dummy, password);
  }
}
