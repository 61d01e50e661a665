import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { CairnError, invalid } from '../../core/errors.js';
import { refuseDuplicateKeys } from '../../core/json-text.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads any body leniently and refuses nothing (the page report). */
    anyBody?: boolean;
  }
}

/**
 * JSON bodies at the API's edge, for every `/v1` route at once (docs/api.md, "Compatibility").
 *
 * Other people's clients send `Content-Type: application/json` on every request, also on those
 * with no body (`Content-Length: 0`, chunked with no bytes, or no length at all). An empty body
 * is therefore read as no body, whatever its type (a non-empty one of another type than JSON or
 * multipart stays 415), and what that means is decided per route from its schema:
 * a route that takes no body runs; one whose fields are all optional gets `{}` (its defaults);
 * one with required fields is refused naming them. JSON `null` and whitespace count as empty.
 *
 * And unknown input is refused, not ignored: every body schema allows no field it does not
 * declare, and a route that takes no body refuses one with fields. The JSON parser is the
 * listener's own, so OAuth's registration and the MCP endpoint refuse a key named twice too.
 */
export function installJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    parseJson(request, text, (err, value) => {
      if (err) return done(err, undefined);
      // A key named twice is refused rather than read as its last value (src/core/json-text.ts).
      try {
        refuseDuplicateKeys(text, 'The JSON body');
      } catch (refused) {
        return done(refused as Error, undefined);
      }
      done(null, value);
    });
  });
  // Any other type is refused (415), unless nothing follows it: then it is no body either.
  app.addContentTypeParser('*', (request, payload, done) => {
    const length = request.headers['content-length'];
    if (length !== undefined && length !== '0') return done(unsupportedType(), undefined);
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      done(err, undefined);
    };
    payload.once('data', () => settle(unsupportedType()));
    payload.once('end', () => settle(null));
    payload.once('error', (err: Error) => settle(err));
  });
  app.addHook('onRoute', (route) => shapeBody(app, route));
}

const unsupportedType = () =>
  new CairnError('unsupported_media_type', 'Unsupported Content-Type for this endpoint; send JSON.');

type Schema = Record<string, unknown>;

/** Whether the route is one of the API's own (not OAuth, MCP or dashboard, which follow their own protocols). */
const isApiRoute = (route: RouteOptions) => route.url.startsWith('/v1/');

function shapeBody(app: FastifyInstance, route: RouteOptions): void {
  if (!isApiRoute(route) || route.config?.anyBody) return;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.every((m) => m === 'GET' || m === 'HEAD')) return;
  const declared = route.schema?.body as Schema | undefined;
  // The upload route documents two forms per content type and reads its body itself.
  if (declared && 'content' in declared) return;
  const body = declared ? resolve(app, declared) : undefined;
  if (body) body.additionalProperties = false;
  const required = (body?.required as string[] | undefined) ?? [];
  const hook = body ? (required.length ? needsBody(required) : optionalBody) : noBody;
  route.preValidation = [...toArray(route.preValidation), hook];
}

/** The schema itself, through a `$ref` to a shared one. */
function resolve(app: FastifyInstance, schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  return (app.getSchema(ref.replace(/#$/, '')) as Schema | undefined) ?? schema;
}

// biome-ignore lint/suspicious/noExplicitAny: Fastify's hook types vary with the route
const toArray = (h: any): any[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);

const isEmpty = (body: unknown) => body === undefined || body === null;

async function noBody(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const body = request.body;
  if (isEmpty(body)) return;
  if (typeof body === 'object' && !Array.isArray(body)) {
    const fields = Object.keys(body as object);
    if (fields.length === 0) return;
    throw invalid(`Unknown field '${(fields[0] ?? '').slice(0, 64)}': this call takes no body.`);
  }
  throw invalid('This call takes no body.');
}

async function optionalBody(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (isEmpty(request.body)) request.body = {};
}

function needsBody(required: string[]) {
  const names = required.join(', ');
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (isEmpty(request.body)) throw invalid(`Request body is empty; send a JSON object with ${names}.`);
  };
}
