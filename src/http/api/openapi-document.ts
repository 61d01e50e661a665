import type { SwaggerTransformObject } from '@fastify/swagger';
import { LIMITS } from '../../core/plans.js';

/**
 * Operations whose request body may be left out (the route takes an absent body as `{}`).
 * fastify-swagger marks every declared body required, which would make generated clients insist.
 */
const OPTIONAL_BODY = new Set(['createLink', 'createSessionLink', 'reportPage']);

type Operation = {
  operationId?: string;
  requestBody?: { required?: boolean };
  parameters?: { in?: string; name?: string; schema?: unknown }[];
};

/**
 * The page size of every list, as clients should send it: an integer. The route schemas take
 * the query string's text as it arrives (no type coercion) and the core parses it (parseLimit,
 * with its own message for a bad value), so the document says what the text must be.
 */
const LIMIT_SCHEMA = { type: 'integer', minimum: 1, maximum: LIMITS.listMax, default: LIMITS.listDefault };

/**
 * fastify-swagger suffixes a HEAD route's operationId with `-head` (it expects HEAD routes to be
 * the automatic twins of GET routes). The tus upload's HEAD is an operation of its own, with no
 * GET twin, so it keeps the name its route gives it.
 */
const HEAD_SUFFIX = '-head';

/** The last pass over the generated document (fastify-swagger's `transformObject`). */
export const finishDocument: SwaggerTransformObject = (document) => {
  if (!('openapiObject' in document)) return document.swaggerObject;
  const doc = document.openapiObject;
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values((item ?? {}) as Record<string, Operation>)) {
      if (op?.requestBody && op.operationId && OPTIONAL_BODY.has(op.operationId)) op.requestBody.required = false;
      if (op?.operationId?.endsWith(HEAD_SUFFIX)) op.operationId = op.operationId.slice(0, -HEAD_SUFFIX.length);
      for (const param of op?.parameters ?? [])
        if (param.in === 'query' && param.name === 'limit') param.schema = LIMIT_SCHEMA;
    }
  }
  return doc;
};
