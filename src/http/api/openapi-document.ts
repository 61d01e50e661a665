import type { SwaggerTransformObject } from '@fastify/swagger';

/**
 * Operations whose request body may be left out (the route takes an absent body as `{}`).
 * fastify-swagger marks every declared body required, which would make generated clients insist.
 */
const OPTIONAL_BODY = new Set(['createLink', 'reportPage']);

type Operation = { operationId?: string; requestBody?: { required?: boolean } };

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
    }
  }
  return doc;
};
