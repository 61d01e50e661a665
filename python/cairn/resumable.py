"""Resumable uploads over Cairn's tus 1.0.0 endpoint (``/v1/uploads/tus``).

The upload is created with one POST (its ``Location`` is the upload URL, whose last segment is the
artifact id), then the file goes in PATCHes of ``chunk_size`` bytes, each streamed from the source
in 1 MiB blocks: memory does not grow with the file or the chunk. After a failure (a dropped
connection, 5xx, 409, 429, 460) the server's offset is read again with HEAD and the upload goes on
from there, so bytes the server kept are not sent again. A 409 while another PATCH holds the upload
(perhaps one cut off by a server crash, whose hold lapses within seconds) is waited out.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Callable, Dict, Iterator, Optional, Sequence, Tuple
from urllib.parse import quote, unquote, urlsplit

from .errors import CairnConnectionError, CairnError, ServerError
from .multipart import Source
from .transport import IDEMPOTENT, NEVER, Transport

TUS_VERSION = "1.0.0"
TUS_PATH = "/v1/uploads/tus"
#: Bytes per PATCH. Each PATCH is streamed, so this bounds the bytes resent after a failure the
#: server could not keep, and how often progress is reported, not memory.
DEFAULT_CHUNK_SIZE = 64 * 1024 * 1024

ProgressFn = Callable[[int, int], None]


def encode_metadata(pairs: Sequence[Tuple[str, str]]) -> str:
    """tus ``Upload-Metadata``: comma-separated ``key base64(UTF-8 value)`` pairs."""
    out = []
    for key, value in pairs:
        encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
        out.append(f"{key} {encoded}" if encoded else key)
    return ",".join(out)


def upload_target(upload_url: str) -> Tuple[str, str]:
    """(API path, artifact id) of an upload URL; the id is the URL's last path segment.

    The upload is addressed on the client's own API origin with that path, so the API key never
    goes to an origin the client was not configured with (a ``Location`` naming a public origin
    while the client talks to an internal one still works).
    """
    path = urlsplit(upload_url).path.rstrip("/")
    head, _, segment = path.rpartition("/")
    upload_id = unquote(segment)
    if not upload_id or not head.endswith(TUS_PATH):
        raise ValueError(f"not a Cairn upload URL (…{TUS_PATH}/<id>): {upload_url!r}")
    return f"{TUS_PATH}/{quote(upload_id, safe='')}", upload_id


class _RangeBody:
    """A PATCH body: ``length`` bytes of the source from ``offset``, read again on each send."""

    content_type = "application/offset+octet-stream"
    replayable = True

    def __init__(self, source: Source, offset: int, length: int) -> None:
        self.source = source
        self.offset = offset
        self.length = length

    def chunks(self) -> Iterator[bytes]:
        return self.source.range_chunks(self.offset, self.length)


def _sha256_b64(source: Source, offset: int, length: int) -> str:
    digest = hashlib.sha256()
    for block in source.range_chunks(offset, length):
        digest.update(block)
    return base64.b64encode(digest.digest()).decode("ascii")


def _header_int(headers: Dict[str, str], name: str, status: int) -> int:
    try:
        return int(headers[name])
    except (KeyError, ValueError):
        raise ServerError(f"the upload answer (HTTP {status}) has no valid {name} header", status=status) from None


def tus_headers(**extra: str) -> Dict[str, str]:
    return {"Tus-Resumable": TUS_VERSION, **extra}


def head(t: Transport, path: str) -> Tuple[int, int]:
    """(offset, length) of an upload as the server has it."""
    resp = t.request("HEAD", path, headers=tus_headers(), policy=IDEMPOTENT)
    return _header_int(resp.headers, "upload-offset", resp.status), _header_int(resp.headers, "upload-length", resp.status)


#: How long a 409 ``upload_offset_conflict`` at the server's own offset is waited out, in seconds
#: since the last progress, and how often it is tried meanwhile. Such a 409 means another PATCH
#: holds the upload: the server renews a live PATCH's hold every 2 s and lets a dead one's (a
#: server that crashed mid-PATCH) lapse after 8 s. The TypeScript SDK's rule, with its numbers.
MAX_HELD_WAIT = 30.0
HELD_RETRY = 1.0


def _held(err: CairnError) -> bool:
    """A 409 that may only mean another PATCH holds the upload (if the offset has not moved)."""
    return err.status == 409 and err.code == "upload_offset_conflict"


def _recoverable(err: CairnError) -> bool:
    """Whether a failed PATCH may go on after reading the offset again."""
    if isinstance(err, CairnConnectionError):
        return True
    # 409: another PATCH in flight or an offset that moved (a lost answer); 460: nothing was kept.
    return err.status >= 500 or err.status in (409, 429, 460)


def send(
    t: Transport,
    path: str,
    source: Source,
    total: int,
    offset: int,
    *,
    chunk_size: int,
    checksum: bool,
    on_progress: Optional[ProgressFn],
) -> None:
    """PATCHes the source from ``offset`` until the server has ``total`` bytes.

    A failure is retried at most ``t.max_retries`` times in a row without the offset moving on
    (backoff with jitter, or ``Retry-After`` on 429 and 503); then the last error is raised. A 409
    ``upload_offset_conflict`` after which HEAD shows the same offset (another PATCH holds the
    upload) is tried again every ``HELD_RETRY`` seconds, up to ``MAX_HELD_WAIT`` seconds since the
    last progress, without counting against ``max_retries``.
    """
    if on_progress is not None:
        on_progress(offset, total)
    reported = offset
    failures = 0
    held_for = 0.0  # seconds spent waiting out another PATCH's hold since the last progress
    while offset < total:
        size = min(chunk_size, total - offset)
        headers = tus_headers(**{"Upload-Offset": str(offset)})
        if checksum:
            headers["Upload-Checksum"] = "sha256 " + _sha256_b64(source, offset, size)
        try:
            resp = t.request("PATCH", path, body=_RangeBody(source, offset, size), headers=headers, policy=NEVER)
            new_offset = _header_int(resp.headers, "upload-offset", resp.status)
            if new_offset <= offset:
                raise ServerError(f"the server acknowledged no bytes at offset {offset}", status=resp.status)
        except CairnError as err:
            if not _recoverable(err):
                raise
            held = _held(err) and held_for < MAX_HELD_WAIT
            if not held and failures >= t.max_retries:
                raise
            if held:
                wait = HELD_RETRY
            else:
                wait = err.retry_after if err.retry_after is not None and err.status in (429, 503) else None
                if wait is None:
                    wait = t._backoff(failures)
                elif wait > t.max_retry_wait:
                    raise
            t._sleep(wait)
            new_offset, _ = head(t, path)
            if new_offset > offset:
                failures, held_for = 0, 0.0  # progress: the budgets are for failures in a row
            elif held and new_offset == offset:
                held_for += wait  # still held: waited out, not counted
            else:
                failures += 1
        else:
            failures, held_for = 0, 0.0
        offset = new_offset
        if on_progress is not None and offset > reported:
            reported = offset
            on_progress(offset, total)
