import type { Origins } from './core/context.js';

/**
 * The core's origins (the base of every URL it hands out), as `cairn serve` knows them. A
 * configured origin, or a listener on a fixed port, is known before anything starts; a listener
 * on port 0 (tests, ephemeral instances) gets its port only when it binds, and it can only bind
 * once its app is built over the core. So the composition root builds the core over this object
 * and settles it with the bound origins once the listeners are bound, before the sweeper and the
 * counters start and before the server's address is handed to anyone (on port 0 no one can call
 * earlier; on a fixed port the configured origin already is the bound one). Settled once; the
 * core only reads it, per request, and its deps are never changed after they are built.
 */
export class BoundOrigins implements Origins {
  #origins: Origins;
  #settled = false;

  constructor(configured: Origins) {
    this.#origins = { ...configured };
  }

  get api(): string {
    return this.#origins.api;
  }
  get viewer(): string {
    return this.#origins.viewer;
  }
  get content(): string {
    return this.#origins.content;
  }
  get download(): string {
    return this.#origins.download;
  }

  /** The origins of the bound listeners; a second call is a bug in the composition root. */
  settle(bound: Origins): void {
    if (this.#settled) throw new Error('the origins are already settled');
    this.#origins = { ...bound };
    this.#settled = true;
  }
}
