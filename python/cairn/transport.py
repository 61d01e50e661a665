"""HTTP transport: one request over ``http.client``, with the SDK's retry rules.

Retry policies (chosen per call by the client):

* ``IDEMPOTENT``: retries 429 (after ``Retry-After``), 5xx and network errors. Used for GET,
  DELETE, PUT, and POSTs that are safe to repeat (an upload that carries an ``Idempotency-Key``,
  seal, publish, complete).
* ``NEVER``: no retry at all; the caller has its own recovery (a tus PATCH: after a failure the
  server's offset must be read again before anything is resent).
* ``RATE_LIMIT_ONLY``: retries 429 only (the server refused the call before doing anything, so
  that is safe for every call); a 5xx or network error is raised at once. Used for every call that
  must not run twice: an upload without ``Idempotency-Key``, ``request_upload_url``,
  ``create_link``, ``unlock_page``, ``report_page``.

A body is retried only if it can be read again (bytes, a path, a seekable file).

An error raised after a retry that followed a 5xx or network error carries
``after_uncertain_attempt = True``: the earlier attempt may have done the work (see
:meth:`cairn.Cairn.delete`).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import select
import socket
import ssl
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Tuple, Union
from urllib.parse import urlencode, urlsplit

from . import __version__ as _version
from .errors import CairnConnectionError, CairnError, UnauthorizedError, error_from_response
from .models import RateLimit
from .multipart import CHUNK_SIZE

IDEMPOTENT = "idempotent"
RATE_LIMIT_ONLY = "rate_limit_only"
NEVER = "never"

USER_AGENT = f"cairn-python/{_version}"

Query = Union[Mapping[str, Any], List[Tuple[str, Any]], None]


_SEND_PIECE = 256 * 1024


class _EarlyAnswer(Exception):
    """The server answered while the body was still being sent."""


def _wait(sock: Any, timeout: Optional[float]) -> Tuple[bool, bool]:
    """(readable, writable) of a socket, waiting up to ``timeout`` seconds for either."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLOUT)
        events = 0
        for _, ev in poller.poll(None if timeout is None else int(timeout * 1000)):
            events |= ev
        readable = bool(events & (select.POLLIN | select.POLLHUP | select.POLLERR))
        return readable, bool(events & select.POLLOUT) and not events & select.POLLERR
    r, w, _ = select.select([sock], [sock], [], timeout)  # pragma: no cover - Windows
    return bool(r), bool(w)


class Sink(Protocol):
    """Where a streamed download goes."""

    def write(self, data: bytes) -> Any: ...

    def reset(self) -> None: ...


class Response:
    """A finished answer: status, headers (lower-cased names) and the body bytes."""

    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


def _parse_retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _int_or_none(value: Optional[str]) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _encode_query(query: Query) -> str:
    if not query:
        return ""
    items = query.items() if isinstance(query, Mapping) else query
    pairs = []
    for key, value in items:
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        pairs.append((key, str(value)))
    return urlencode(pairs) if pairs else ""


class Transport:
    def __init__(
        self,
        base_url: str,
        api_key: Optional[str],
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_wait: float = 60.0,
        user_agent: Optional[str] = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._prefix = parts.path
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_wait = max_retry_wait
        self.user_agent = user_agent or USER_AGENT
        self._sleep = sleep
        self.rate_limit: Optional[RateLimit] = None

    # -- public entry point -------------------------------------------------------------

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        query: Query = None,
        json_body: Any = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        auth: bool = True,
        policy: str = IDEMPOTENT,
        sink: Optional["Sink"] = None,
        see_other: bool = False,
    ) -> Response:
        """Sends one call, retrying per ``policy``; raises a :class:`CairnError` on failure.

        ``path_or_url`` is an API path (``/v1/...``) or an absolute URL (a signed URL on another
        origin: sent without the API key). With ``sink``, a 2xx body is streamed to
        ``sink.write`` in 1 MiB chunks instead of being kept in memory; ``sink.reset()`` is called
        before each retry. With ``see_other``, a ``303 See Other`` is the answer (the archive calls).
        """
        absolute = path_or_url.startswith(("http://", "https://"))
        url = path_or_url if absolute else self.base_url + path_or_url
        q = _encode_query(query)
        if q:
            url += ("&" if "?" in url else "?") + q
        hdrs: Dict[str, str] = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if auth and not absolute:
            if not self.api_key:
                raise UnauthorizedError(
                    "No API key: pass Cairn(api_key=...) or set CAIRN_API_KEY (or SERVICE_API_KEY).", status=401
                )
            hdrs["Authorization"] = f"Bearer {self.api_key}"
        payload: Any = None
        if json_body is not None:
            payload = json.dumps(json_body, separators=(",", ":")).encode("utf-8")
            hdrs["Content-Type"] = "application/json"
        elif body is not None:
            if getattr(body, "content_type", None):
                hdrs["Content-Type"] = body.content_type
            payload = body
        elif method in ("POST", "PUT", "PATCH"):
            payload = b""
        if headers:
            hdrs.update(headers)
        replayable = payload is None or isinstance(payload, bytes) or bool(getattr(payload, "replayable", False))

        attempt = 0
        # Set once an attempt failed in a way that leaves its outcome unknown (5xx, network error).
        uncertain = False
        while True:
            if sink is not None and attempt:
                sink.reset()
            try:
                resp = self._once(method, url, hdrs, payload, sink)
            except CairnConnectionError as err:
                retry = policy == IDEMPOTENT and replayable and attempt < self.max_retries
                if not retry:
                    if policy == RATE_LIMIT_ONLY and err.ambiguous:
                        err.message += (
                            " The request may have reached the server: its outcome is unknown."
                            " Check the current state before trying again."
                        )
                        err.args = (err.message,)
                    err.after_uncertain_attempt = uncertain
                    raise
                uncertain = True
                self._sleep(self._backoff(attempt))
                attempt += 1
                continue
            if not absolute:
                self._note_rate_limit(resp.headers)
            if 200 <= resp.status < 300 or (see_other and resp.status == 303):
                return resp
            retry_after = _parse_retry_after(resp.headers.get("retry-after"))
            err = error_from_response(resp.status, resp.body, resp.headers, retry_after)
            err.after_uncertain_attempt = uncertain
            if err.code == "unauthorized" and auth and not absolute and self.api_key:
                err.message += f" (API key ending in …{self.api_key[-4:]})"
                err.args = (err.message,)
            if attempt >= self.max_retries or not replayable or policy == NEVER:
                raise err
            if resp.status == 429:
                wait = err.retry_after if err.retry_after is not None else self._backoff(attempt)
                if wait > self.max_retry_wait:
                    raise err
            elif resp.status >= 500 and policy == IDEMPOTENT:
                uncertain = True
                wait = self._backoff(attempt)
            else:
                raise err
            self._sleep(wait)
            attempt += 1

    # -- internals ----------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        base = min(self.max_backoff, self.backoff * (2 ** attempt))
        return base * (0.5 + random.random() / 2)

    def _note_rate_limit(self, headers: Mapping[str, str]) -> None:
        if "x-ratelimit-limit" in headers:
            self.rate_limit = RateLimit(
                limit=_int_or_none(headers.get("x-ratelimit-limit")),
                remaining=_int_or_none(headers.get("x-ratelimit-remaining")),
                reset=_int_or_none(headers.get("x-ratelimit-reset")),
            )

    def _connect(self, url: str) -> Tuple[http.client.HTTPConnection, str]:
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                parts.hostname or "", parts.port, timeout=self.timeout, context=ssl.create_default_context()
            )
        elif parts.scheme == "http":
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=self.timeout)
        else:
            raise CairnConnectionError(f"unsupported URL scheme in {url!r}")
        return conn, target

    def _once(
        self,
        method: str,
        url: str,
        headers: Dict[str, str],
        payload: Any,
        sink: Optional["Sink"],
    ) -> Response:
        conn, target = self._connect(url)
        sent_anything = False
        try:
            try:
                conn.putrequest(method, target, skip_accept_encoding=True)
                hdrs = dict(headers)
                length: Optional[int]
                if payload is None:
                    length = None
                elif isinstance(payload, bytes):
                    length = len(payload)
                else:
                    length = payload.length
                if length is not None:
                    hdrs["Content-Length"] = str(length)
                elif payload is not None:
                    hdrs["Transfer-Encoding"] = "chunked"
                for k, v in hdrs.items():
                    conn.putheader(k, v)
                conn.endheaders()
                sent_anything = True
                if isinstance(payload, bytes):
                    if payload:
                        self._send(conn, payload)
                elif payload is not None:
                    for block in payload.chunks():
                        if not block:
                            continue
                        if length is None:
                            block = f"{len(block):X}\r\n".encode("ascii") + block + b"\r\n"
                        self._send(conn, block)
                    if length is None:
                        self._send(conn, b"0\r\n\r\n")
            except _EarlyAnswer:
                # The server answered before reading the whole body (a sealed session, a bad
                # key, a size limit) and stopped reading: its answer is the result.
                return self._read(conn.getresponse(), None)
            except (BrokenPipeError, ConnectionResetError) as send_err:
                # The server may have answered early (e.g. a sealed session, a refused key) and
                # stopped reading: its answer is more useful than the broken pipe.
                try:
                    raw = conn.getresponse()
                except (OSError, http.client.HTTPException):
                    raise CairnConnectionError(
                        f"connection lost while sending {method} {url}: {send_err}", ambiguous=sent_anything
                    ) from send_err
                return self._read(raw, None)
            raw = conn.getresponse()
            return self._read(raw, sink)
        except CairnConnectionError:
            raise
        except CairnError:
            raise
        except (OSError, http.client.HTTPException, ssl.SSLError) as err:
            raise CairnConnectionError(
                f"{method} {url} failed: {type(err).__name__}: {err}", ambiguous=sent_anything
            ) from err
        finally:
            conn.close()

    def _send(self, conn: http.client.HTTPConnection, data: bytes) -> None:
        """``sendall`` that notices when the server stops reading because it already answered."""
        sock = conn.sock
        if sock is None:  # pragma: no cover - endheaders always connects
            conn.send(data)
            return
        view = memoryview(data)
        while view:
            readable, writable = _wait(sock, self.timeout)
            # Readable first: nothing is due from the server before the body ends, so data here is
            # its answer (an idempotent replay, a refusal). Sending on would feed a server that may
            # still drain what it no longer needs: a replayed 64 MiB push sent a third of it.
            if readable:
                raise _EarlyAnswer()
            if writable:
                view = view[sock.send(view[:_SEND_PIECE]) :]
            else:
                raise socket.timeout("timed out while sending the request body")

    @staticmethod
    def _read(raw: http.client.HTTPResponse, sink: Optional["Sink"]) -> Response:
        headers = {k.lower(): v for k, v in raw.getheaders()}
        if sink is not None and 200 <= raw.status < 300:
            while True:
                block = raw.read(CHUNK_SIZE)
                if not block:
                    break
                sink.write(block)
            return Response(raw.status, headers, b"")
        return Response(raw.status, headers, raw.read())

