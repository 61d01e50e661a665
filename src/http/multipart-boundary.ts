import type { FastifyRequest } from 'fastify';
import { invalid } from '../core/errors.js';

/**
 * The boundary of a multipart/form-data request, checked before the multipart parser (busboy)
 * sees it. busboy takes almost any boundary and throws on one longer than 252 characters, which
 * came out as a 500; RFC 2046 allows 1 to 70 of its `bchars`, not ending in a space.
 *
 * The Content-Type is read with RFC 9110's strict grammar (`type/subtype *(OWS ";" OWS
 * [name=value])`, each value a token or a quoted-string). busboy's own reading is laxer (it
 * skips spaces anywhere, takes RFC 2231 `boundary*=` and a quote in the middle of a value), so
 * a header that the strict reading cannot take whole is refused rather than guessed at: the
 * boundary checked here is then the only one busboy could find.
 */

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** A quoted-string (qdtext and quoted-pairs). */
const QUOTED = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x21-\\x7e\\x80-\\xff])*"';
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}`, 'y');
const PARAMETER = new RegExp(`[ \\t]*;[ \\t]*(?:(${TOKEN})=(${TOKEN}|${QUOTED}))?`, 'y');
const TRAILING_SPACE = /[ \t]*$/y;
/** RFC 2046: `0*69<bchars> bcharsnospace`. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** The parameters of a Content-Type value, or null when it does not follow RFC 9110. */
function parameters(contentType: string): [string, string][] | null {
  MEDIA_TYPE.lastIndex = 0;
  if (!MEDIA_TYPE.test(contentType)) return null;
  const found: [string, string][] = [];
  let at = MEDIA_TYPE.lastIndex;
  for (;;) {
    PARAMETER.lastIndex = at;
    const m = PARAMETER.exec(contentType);
    if (!m || PARAMETER.lastIndex === at) break;
    if (m[1] !== undefined && m[2] !== undefined) found.push([m[1].toLowerCase(), m[2]]);
    at = PARAMETER.lastIndex;
  }
  TRAILING_SPACE.lastIndex = at;
  TRAILING_SPACE.test(contentType);
  return TRAILING_SPACE.lastIndex === contentType.length ? found : null;
}

/** What is wrong with the boundary of a multipart Content-Type, or null when it is a valid one. */
export function multipartBoundaryProblem(contentType: string | undefined): string | null {
  const params = parameters(contentType ?? '');
  if (params === null) return 'Content-Type is not a valid media type with parameters (RFC 9110).';
  // `boundary*` (RFC 2231) is a boundary to busboy too.
  const named = params.filter(([name]) => name.split('*')[0] === 'boundary');
  if (named.length === 0) return 'multipart/form-data needs a boundary parameter in Content-Type.';
  if (named.length > 1) return 'Content-Type names the multipart boundary more than once.';
  const [[name, raw]] = named as [[string, string]];
  if (name !== 'boundary') return 'The multipart boundary must be a plain boundary= parameter.';
  const value = raw.startsWith('"') ? raw.slice(1, -1) : raw;
  if (!BOUNDARY.test(value)) {
    return (
      "The multipart boundary must be 1 to 70 characters of letters, digits, space and '()+_,-./:=? " +
      '(RFC 2046), not ending in a space.'
    );
  }
  return null;
}

/**
 * A preValidation hook for every route of a listener that parses multipart: the body is not read
 * until a handler asks for its parts, so this runs before any part of it reaches the parser.
 */
export async function refuseInvalidBoundary(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  const problem = multipartBoundaryProblem(request.headers['content-type']);
  if (problem) throw invalid(problem);
}
