import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifySchemaCompiler } from 'fastify';
import { requestComponents } from './api/schemas.js';

/**
 * A route validator built from the same TypeBox schemas that document the route, with two
 * difference from Fastify's default: `only` limits validation to some parts (the upload route
 * checks its body itself, while streaming).
 */
export function typeboxValidator(
  opts: { only?: string[] } = {},
  // biome-ignore lint/suspicious/noExplicitAny: Fastify types each route's compiler by its schema literal
): FastifySchemaCompiler<any> {
  return ({ schema, httpPart }) => {
    if (opts.only && !opts.only.includes(httpPart ?? '')) return (data: unknown) => ({ value: data });
    // A part may be a `Type.Ref` to a named request shape; TypeBox resolves it among them.
    const check = TypeCompiler.Compile(schema as TSchema, requestComponents);
    return (data: unknown) => {
      if (check.Check(data)) return { value: data };
      const first = check.Errors(data).First();
      const where = `${httpPart ?? 'input'}${first?.path.replaceAll('/', '.') ?? ''}`;
      return { error: new Error(`${where}: ${first?.message ?? 'is invalid'}`) };
    };
  };
}
