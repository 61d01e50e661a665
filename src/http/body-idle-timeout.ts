import type { preParsingHookHandler, RouteOptions } from 'fastify';
import { CairnError } from '../core/errors.js';

/** Methods whose requests take no body here: their routes get no hook, so GETs pay nothing for it. */
const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * An `onRoute` hook: every route that takes a body (any method but GET, HEAD and OPTIONS) gets
 * `hook`, bodyIdleTimeout's `preParsing` hook (none when that is off). On the API that is the
 * uploads (multipart and JSON, Cairn's presigned PUT, the hosted MCP endpoint) and the small JSON
 * and form posts beside them (links, pages, the dashboard's and OAuth's forms); on the viewer, the
 * page password and report forms. The smaller bodies are cut for the same reason: without it, a
 * client that sends a request head and then nothing holds a connection for as long as it likes,
 * and the forms among them need no key to reach. installErrorHandling installs it on every
 * listener, with the same hook on the 404 route.
 */
export function cutStalledBodies(hook: preParsingHookHandler | undefined): (route: RouteOptions) => void {
  return (route) => {
    if (!hook || !takesBody(route)) return;
    const own = route.preParsing;
    route.preParsing = own === undefined ? hook : [...(Array.isArray(own) ? own : [own]), hook];
  };
}

/** Whether a route takes a request body: any method but GET, HEAD and OPTIONS. */
export function takesBody(route: RouteOptions): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return !methods.every((m) => BODILESS.has(m.toUpperCase()));
}

/**
 * A route's `preParsing` hook that closes the connection of a request whose body stops arriving
 * for `seconds` (none when 0; the setting is CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS).
 *
 * Why: neither Node nor Fastify puts a limit on a request body's pauses here (Fastify sets no
 * request or connection timeout), so a client that goes silent mid-upload used to hold its
 * connection, its staging file and its buffers (up to about 12 MiB for a large upload) until it
 * left. Closing the connection is the same as that client hanging up: the upload path drops
 * whatever was staged, and the error handler logs it as "client aborted".
 *
 * The clock is the socket's own inactivity timer, which Node restarts on every read from the
 * connection, so a slow upload that keeps sending is never cut, however long it takes. It runs
 * only while the body arrives: once it has all arrived the timer is switched off again, so the
 * time the server then spends storing the upload (or the keep-alive wait Node sets after the
 * answer) is not counted. While the body arrives, a server that stops reading it for that long
 * (a disk stalled for a minute holds the upload back) looks the same as a silent client and cuts
 * the upload too: the timer cannot tell the two apart. A per-route hook rather than a global one:
 * requests without a body (the GET path) pay nothing for it.
 */
export function bodyIdleTimeout(seconds: number): preParsingHookHandler | undefined {
  if (seconds <= 0) return undefined;
  const ms = seconds * 1000;
  return (request, reply, payload, done) => {
    const req = request.raw;
    const res = reply.raw;
    if (req.complete) return done(null, payload);
    const socket = req.socket;
    let watching = true;
    const stop = (clearTimer: boolean) => {
      if (!watching) return;
      watching = false;
      res.removeListener('timeout', onTimeout);
      if (clearTimer && socket.timeout === ms) socket.setTimeout(0);
    };
    // Node emits 'timeout' on the socket's current response; with a listener there it leaves the
    // socket alone, so the decision is ours: the body has all arrived (the server is busy with it),
    // or the client has gone silent.
    function onTimeout() {
      if (req.complete) return stop(true);
      stop(false);
      request.log.info({ reqId: request.id, idleSeconds: seconds }, 'request body stalled: connection closed');
      socket.destroy(new CairnError('invalid_request', `No bytes of the request body arrived for ${seconds} s.`));
    }
    socket.setTimeout(ms);
    res.on('timeout', onTimeout);
    req.once('end', () => stop(true));
    // Once answered (an idempotent replay answers before reading the body), Node's own timers take
    // over: it discards the rest of such a body, and a client that stalls there is closed after its
    // keep-alive timeout (72 s here; measured: 73 s), with nothing of it kept.
    res.once('finish', () => stop(false));
    res.once('close', () => stop(false));
    done(null, payload);
  };
}
