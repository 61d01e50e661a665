import { createRequire } from 'node:module';
import type { BuildCompilerFromPool } from '@fastify/ajv-compiler';
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's own schema compilers (ajv for requests, fast-json-stringify for responses), each route's
 * compiled when it is first used rather than when its listener starts. Fastify compiles every
 * route's validators and every status code's serializer as the app becomes ready; for Cairn's
 * routes that was about a third of the CPU of a `cairn serve` start (and of every server a test
 * starts), mostly serializers of error answers that most processes never send.
 * A route compiles on its first request instead, once per process, at a few milliseconds each;
 * ajv and fast-json-stringify themselves are loaded by the first compile.
 */
const load = createRequire(import.meta.url);
const ajvCompiler = (): typeof import('@fastify/ajv-compiler') => load('@fastify/ajv-compiler');
const serializerSelector = (): typeof import('@fastify/fast-json-stringify-compiler') =>
  load('@fastify/fast-json-stringify-compiler');

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;

/**
 * `compile` turned into one that returns at once, and compiles on the first call of what it
 * returned. Fastify reads a failed validation's reasons from the validator's own `errors`
 * property (ajv sets it on the compiled function at each call), so the stand-in passes that on:
 * without it a refused request would count as valid.
 */
function onFirstUse<Route, Fn extends (...args: never[]) => unknown>(compile: (route: Route) => Fn) {
  return (route: Route): Fn => {
    let compiled: (Fn & { errors?: unknown }) | undefined;
    const standIn = (...args: Parameters<Fn>) => {
      compiled ??= compile(route);
      return compiled(...args);
    };
    Object.defineProperty(standIn, 'errors', { get: () => compiled?.errors });
    return standIn as unknown as Fn;
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
  onFirstUse(builtOnFirstUse(() => ajvCompiler().AjvCompiler()(externalSchemas, ajvOptions)));

const buildSerializer: SerializerFactory = (externalSchemas, serializerOptions) =>
  onFirstUse(builtOnFirstUse(() => serializerSelector().SerializerSelector()(externalSchemas, serializerOptions)));

export const lazySchemaController: SchemaController = { compilersFactory: { buildValidator, buildSerializer } };
