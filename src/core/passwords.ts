import type { Options } from '@node-rs/argon2';

/** @node-rs/argon2 loads a native addon: only a process that hashes or checks a password loads it. */
const argon2 = () => import('@node-rs/argon2');

/** Page passwords: Argon2id with the OWASP minimum parameters (19 MiB memory, 2 passes, 1 lane). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** Does the work of a verify against nothing, so a missing page costs as much time as a real one. */
  verifyDummy(password: string): Promise<void>;
}

/** `algorithm: 2` is the library's `Algorithm.Argon2id` (a const enum, so not importable as a type only). */
export const ARGON2_OWASP: Options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export class Argon2idHasher implements PasswordHasher {
  private dummy: Promise<string> | null = null;

  async hash(password: string): Promise<string> {
    return (await argon2()).hash(password, ARGON2_OWASP);
  }

  async verify(stored: string, password: string): Promise<boolean> {
    try {
      return await (await argon2()).verify(stored, password);
    } catch {
      // A malformed stored hash never opens a page.
      return false;
    }
  }

  async verifyDummy(password: string): Promise<void> {
    this.dummy ??= this.hash('cairn-dummy-password');
    await this.verify(await this.dummy, password);
  }
}
