import type { SwaggerTransformObject } from '@fastify/swagger';

/**
 * Operations whose request body may be left out (the route takes an absent body as `{}`).
 * fastify-swagger marks every declared body required, which would make generated clients insist.
 */
const OPTIONAL_BODY = new Set(['createLink', 'reportPage']);

type Operation = { operationId?: string; requestBody?: { required?: boolean } };

/** The last pass over the generated document (fastify-swagger's `transformObject`). */
export const finishDocument: SwaggerTransformObject = (document) => {
  if (!('openapiObject' in document)) return document.swaggerObject;
  const doc = document.openapiObject;
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values((item ?? {}) as Record<string, Operation>)) {
      if (op?.requestBody && op.operationId && OPTIONAL_BODY.has(op.operationId)) op.requestBody.required = false;
    }
  }
  return doc;
};
