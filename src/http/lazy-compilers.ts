import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';
import { type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's own schema compilers (ajv for requests, fast-json-stringify for responses), each route's
 * compiled when it is first used rather than when its listener starts. Fastify compiles every
 * route's validators and every status code's serializer as the app becomes ready; for Cairn's
 * routes that was about 1.8 s of CPU on a 2-core machine at every `cairn serve` (and at every
 * server a test starts), mostly serializers of error answers that most processes never send.
 * A route compiles on its first request instead, once per process, at a few milliseconds each.
 */
type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;

/** `compile` turned into one that returns at once, and compiles on the first call of what it returned. */
function onFirstUse<Route, Fn extends (...args: never[]) => unknown>(compile: (route: Route) => Fn) {
  return (route: Route): Fn => {
    let compiled: Fn | undefined;
    return ((...args: Parameters<Fn>) => {
      compiled ??= compile(route);
      return compiled(...args);
    }) as Fn;
  };
}

/** The compiler `make` builds, built at its first use (building one adds every shared schema to it). */
function builtOnFirstUse<Route, Fn>(make: () => (route: Route) => Fn): (route: Route) => Fn {
  let compiler: ((route: Route) => Fn) | undefined;
  return (route) => {
    compiler ??= make();
    return compiler(route);
  };
}

const buildValidator: BuildCompilerFromPool = (externalSchemas, ajvOptions) =>
  onFirstUse(builtOnFirstUse(() => AjvCompiler()(externalSchemas, ajvOptions)));

const buildSerializer: SerializerFactory = (externalSchemas, serializerOptions) =>
  onFirstUse(builtOnFirstUse(() => SerializerSelector()(externalSchemas, serializerOptions)));

export const lazySchemaController: SchemaController = { compilersFactory: { buildValidator, buildSerializer } };
