import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazySchemaController } from '../../src/http/lazy-compilers.js';

/**
 * Routes compiled at their first request still validate and serialize exactly as Fastify's own
 * compilers do: a refused body is refused with ajv's reasons, and a response is written through its
 * schema (fields it does not name are dropped).
 */

function app() {
  const a = Fastify({ schemaController: lazySchemaController });
  a.addSchema({ $id: 'Count', type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] });
  a.post(
    '/count',
    {
      schema: {
        body: { $ref: 'Count#' },
        querystring: { type: 'object', properties: { twice: { type: 'boolean' } } },
        response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
      },
    },
    async (request) => ({ n: (request.body as { n: number }).n, secret: 'never shown' }),
  );
  return a;
}

describe('lazily compiled route schemas', () => {
  it('refuse what the schema refuses, with the validator’s reasons, on every request', async () => {
    const a = app();
    for (let i = 0; i < 2; i++) {
      const bad = await a.inject({ method: 'POST', url: '/count', payload: { n: 'three' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toMatch(/body\/n must be integer/);
      const missing = await a.inject({ method: 'POST', url: '/count', payload: {} });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().message).toMatch(/must have required property 'n'/);
      const query = await a.inject({ method: 'POST', url: '/count?twice=maybe', payload: { n: 2 } });
      expect(query.statusCode).toBe(400);
    }
    await a.close();
  });

  it('let through what it takes, and write the answer through the response schema', async () => {
    const a = app();
    const ok = await a.inject({ method: 'POST', url: '/count', payload: { n: 3 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ n: 3 });
    await a.close();
  });
});
