"""The Cairn client: one method per endpoint of the API."""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
import uuid
from typing import IO, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote

from . import events as _events
from . import resumable as _tus
from .errors import ArtifactAlreadyDeletedError, CairnError, NotFoundError, ServerError
from .models import (
    ArchiveUrl,
    Artifact,
    ArtifactPage,
    DeleteResult,
    BatchDownloadUrl,
    DownloadUrl,
    GateInfo,
    Link,
    LinkPage,
    PublishResult,
    RateLimit,
    RevokeLinkResult,
    SealResult,
    Session,
    SessionLink,
    SessionLinkPage,
    SessionPage,
    UnlockResult,
    UnpublishResult,
    UploadTicket,
    WhoAmI,
)
from .multipart import MultipartBody, RawBody, Source, make_source
from .transport import IDEMPOTENT, RATE_LIMIT_ONLY, Transport
from .transcript import transcript_models, transcript_models_in_file, with_transcript_models

__all__ = ["Cairn", "DEFAULT_BASE_URL"]

DEFAULT_BASE_URL = "http://127.0.0.1:8080"

PathLike = Union[str, "os.PathLike[str]"]
Content = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", IO[bytes], IO[str]]
TimeArg = Union[str, _dt.datetime, None]
TtlArg = Union[str, _dt.timedelta, None]


def _every_item(
    fetch: Callable[..., Any], items: Callable[[Any], List[Any]], page_size: Optional[int], filters: Dict[str, Any]
) -> Iterator[Any]:
    """Every item of a cursor-paginated listing, fetching page after page."""
    cursor = filters.pop("cursor", None)
    limit = filters.pop("limit", None) or page_size
    while True:
        page = fetch(limit=limit, cursor=cursor, **filters)
        yield from items(page)
        if not page.has_more or not page.next_cursor:
            return
        cursor = page.next_cursor


def _seg(value: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("an id must be a non-empty string")
    return quote(value, safe="")


def _time(value: TimeArg) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    value = value.astimezone(_dt.timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def _ttl(value: TtlArg) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    seconds = int(value.total_seconds())
    if seconds <= 0 or seconds % 3600:
        raise ValueError("a timedelta TTL must be a positive whole number of hours")
    hours = seconds // 3600
    return f"{hours // 24}d" if hours % 24 == 0 else f"{hours}h"


def _metadata_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)  # true/false/numbers as their JSON text, as the server compares


def _filters(
    session_id: Optional[str],
    agent_id: Optional[str],
    filename: Optional[str],
    content_type: Optional[str],
    created_after: TimeArg,
    created_before: TimeArg,
    transcript: Optional[bool],
    metadata: Optional[Mapping[str, Any]],
) -> List[Tuple[str, Any]]:
    """The list's filters as query pairs (``metadata`` as ``metadata.<key>`` pairs)."""
    query: List[Tuple[str, Any]] = [
        ("session_id", session_id),
        ("agent_id", agent_id),
        ("filename", filename),
        ("content_type", content_type),
        ("created_after", _time(created_after)),
        ("created_before", _time(created_before)),
        ("transcript", True if transcript else None),
    ]
    for key, value in (metadata or {}).items():
        query.append((f"metadata.{key}", _metadata_value(value)))
    return query


def _lifetime(expires_in: Optional[int], ttl: Optional[str]) -> Dict[str, Any]:
    """A link's lifetime as its request body: ``expires_in`` seconds or a ``ttl`` duration."""
    body: Dict[str, Any] = {}
    if expires_in is not None:
        body["expires_in"] = int(expires_in)
    if ttl is not None:
        body["ttl"] = ttl
    return body


def _upload_fields(
    name: str,
    *,
    content_type: Optional[str],
    session_id: Optional[str],
    agent_id: Optional[str],
    ttl: TtlArg,
    metadata: Optional[Mapping[str, Any]],
    model: Optional[str],
    transcript: bool,
) -> List[Tuple[str, str]]:
    """The record fields of an upload as (name, text) pairs: multipart fields or tus metadata."""
    meta: Dict[str, Any] = dict(metadata or {})
    if model is not None and "model" not in meta:
        meta["model"] = model
    fields: List[Tuple[str, str]] = [("filename", name)]
    if content_type:
        fields.append(("content_type", content_type))
    if session_id is not None:
        fields.append(("session_id", session_id))
    if agent_id is not None:
        fields.append(("agent_id", agent_id))
    ttl_text = _ttl(ttl)
    if ttl_text is not None:
        fields.append(("ttl", ttl_text))
    if meta:
        fields.append(("metadata", json.dumps(meta, separators=(",", ":"), ensure_ascii=False)))
    if transcript:
        fields.append(("transcript", "true"))
    return fields


def _with_models(
    content: Any, path: Any, metadata: Optional[Mapping[str, Any]], model: Optional[str]
) -> Optional[Dict[str, Any]]:
    """A transcript upload's metadata with the models it names filled in (``model``,
    ``model_source="transcript"``, ``models_used``), never over keys the caller set: the same on
    every upload method, as the CLI's ``push --transcript`` and the TypeScript SDK do it."""
    if path is not None:
        found = transcript_models_in_file(path)
    elif isinstance(content, (bytes, bytearray, str)):
        found = transcript_models(content)
    elif isinstance(content, os.PathLike):
        found = transcript_models_in_file(content)
    else:
        found = (None, [])  # a file object: read once, by the upload
    return with_transcript_models(metadata, found, declared_model=model is not None) or None


class _DownloadSink:
    """Streams download bytes to a file object, a temp file, or memory; restartable for retries."""

    def __init__(self, fileobj: Optional[IO[bytes]] = None) -> None:
        self.fileobj = fileobj
        self._start = fileobj.tell() if fileobj is not None and fileobj.seekable() else None
        self.buffer: Optional[bytearray] = bytearray() if fileobj is None else None
        self.count = 0

    def write(self, data: bytes) -> None:
        self.count += len(data)
        if self.buffer is not None:
            self.buffer += data
        else:
            assert self.fileobj is not None
            self.fileobj.write(data)

    def reset(self) -> None:
        if self.count and self.buffer is None and self._start is None:
            raise CairnError("download interrupted and the target file object cannot be rewound", code="network_error")
        self.count = 0
        if self.buffer is not None:
            self.buffer = bytearray()
        elif self.fileobj is not None and self._start is not None:
            self.fileobj.seek(self._start)
            self.fileobj.truncate()


class Cairn:
    """A client of one Cairn API.

    Args:
        api_key: ``ak_live_…``; default ``$CAIRN_API_KEY``, else ``$SERVICE_API_KEY``.
        base_url: the API origin; default ``$CAIRN_API_URL``, else ``http://127.0.0.1:8080``.
        timeout: socket timeout in seconds (per read/write, not for the whole call).
        max_retries: retries after the first attempt (see :mod:`cairn.transport` for which calls).
        max_retry_wait: a 429 whose ``Retry-After`` is longer than this is raised, not waited for.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        user_agent: Optional[str] = None,
    ) -> None:
        key = api_key or os.environ.get("CAIRN_API_KEY") or os.environ.get("SERVICE_API_KEY") or None
        url = base_url or os.environ.get("CAIRN_API_URL") or DEFAULT_BASE_URL
        self._t = Transport(
            url,
            key,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            user_agent=user_agent,
        )

    # -- housekeeping -------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return self._t.base_url

    @property
    def api_key(self) -> Optional[str]:
        return self._t.api_key

    @property
    def rate_limit(self) -> Optional[RateLimit]:
        """``X-RateLimit-*`` of the last API answer, or None before the first call."""
        return self._t.rate_limit

    def __repr__(self) -> str:
        hint = f"…{self._t.api_key[-4:]}" if self._t.api_key else "no key"
        return f"Cairn(base_url={self._t.base_url!r}, api_key={hint!r})"

    def __enter__(self) -> "Cairn":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release (one connection per call); present for ``with`` blocks."""

    # -- meta ---------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """``GET /health`` (no key needed): ``{"status": "ok"}``."""
        return self._t.request("GET", "/health", auth=False).json()

    def whoami(self) -> WhoAmI:
        """Verifies the key: tenant, plan, usage and limits."""
        return WhoAmI.from_dict(self._t.request("GET", "/v1/whoami").json())

    def openapi(self) -> Dict[str, Any]:
        """The OpenAPI 3.1 document of the API."""
        return self._t.request("GET", "/v1/openapi.json").json()

    # -- upload -------------------------------------------------------------------------

    def push(
        self,
        content: Optional[Content] = None,
        filename: Optional[str] = None,
        *,
        path: Optional[PathLike] = None,
        content_type: Optional[str] = None,
        session_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        ttl: TtlArg = None,
        metadata: Optional[Mapping[str, Any]] = None,
        model: Optional[str] = None,
        transcript: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> Artifact:
        """Uploads one artifact (multipart, streamed) and returns its record.

        ``content`` is bytes, a ``str`` (sent as UTF-8 text), a ``pathlib.Path`` or a binary file
        object; or give ``path=`` (a plain string path works there). Files are streamed in 1 MiB
        chunks with a computed ``Content-Length``, so memory use does not grow with the file.

        ``filename`` defaults to the path's or file object's name (required for bytes and str).
        ``model`` goes to ``metadata["model"]`` unless that key is set. ``transcript=True`` marks a
        session transcript (``metadata.type="transcript"``, NDJSON content type by default) and
        reads its models into the metadata as :meth:`push_transcript` does.
        With ``idempotency_key`` the upload is retried on 5xx and network errors, and the same key
        within 24 hours returns the original artifact instead of storing a second one.
        """
        source = make_source(content, path)
        name = filename or source.name
        if not name:
            raise ValueError("filename is required when uploading bytes, text or an unnamed file object")
        if transcript:
            metadata = _with_models(content, path, metadata, model)
        fields = _upload_fields(
            name,
            content_type=content_type,
            session_id=session_id,
            agent_id=agent_id,
            ttl=ttl,
            metadata=metadata,
            model=model,
            transcript=transcript,
        )
        body = MultipartBody(fields, source, name, part_content_type=content_type or "application/octet-stream")
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        resp = self._t.request(
            "POST",
            "/v1/artifacts",
            body=body,
            headers=headers,
            policy=IDEMPOTENT if idempotency_key else RATE_LIMIT_ONLY,
        )
        return Artifact.from_dict(resp.json())

    #: Same as :meth:`push`.
    store = push

    def push_transcript(
        self,
        events: Any,
        filename: str = "transcript.ndjson",
        *,
        session_id: Optional[str] = None,
        model: Optional[str] = None,
        models_used: Optional[List[str]] = None,
        capture: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        **kw: Any,
    ) -> Artifact:
        """Stores an agent transcript: a list of JSON-able events (written as NDJSON), or bytes/str/path.

        Sets the conventional metadata: ``type=transcript`` (server side), ``models_used``
        (comma-separated) and ``capture`` (e.g. ``"end"`` or ``"snapshot"``). When the transcript's
        format is recognised (Claude Code session JSONL, OpenAI-shaped messages) and the caller did
        not set them, ``model`` (the last main-loop model: not a subagent's, not ``<synthetic>``),
        ``model_source="transcript"`` and ``models_used`` (every distinct model, sorted) are read from it; a
        ``model`` given here or in ``metadata`` wins, and ``model_source`` is then left unset.
        The service does not redact secrets in transcripts.
        """
        content: Any = events
        if isinstance(events, (list, tuple)):
            content = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events)
        meta: Dict[str, Any] = dict(metadata or {})
        if models_used:
            meta.setdefault("models_used", ",".join(dict.fromkeys(models_used)))
        if capture:
            meta.setdefault("capture", capture)
        # push(transcript=True) reads the models.
        return self.push(content, filename, session_id=session_id, model=model, metadata=meta, transcript=True, **kw)

    # -- presigned upload (Pro) ---------------------------------------------------------

    def request_upload_url(
        self,
        filename: str,
        size_bytes: int,
        *,
        content_type: Optional[str] = None,
        session_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        ttl: TtlArg = None,
        transcript: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> UploadTicket:
        """``POST /v1/artifacts/upload-url``: a presigned PUT slot for up to 5 GiB (Pro only).

        The pending artifact is held 24 hours (``get_artifact`` shows ``status="pending"`` and
        ``held_until``). With ``idempotency_key`` the call is retried on 5xx and network errors, and
        a repeat with the same key within 24 hours answers the same reservation with a fresh URL.
        """
        body: Dict[str, Any] = {"filename": filename, "size_bytes": size_bytes}
        for key, value in (
            ("content_type", content_type),
            ("session_id", session_id),
            ("agent_id", agent_id),
            ("metadata", dict(metadata) if metadata is not None else None),
            ("ttl", _ttl(ttl)),
        ):
            if value is not None:
                body[key] = value
        if transcript:
            body["transcript"] = True
        resp = self._t.request(
            "POST",
            "/v1/artifacts/upload-url",
            json_body=body,
            headers={"Idempotency-Key": idempotency_key} if idempotency_key else None,
            policy=IDEMPOTENT if idempotency_key else RATE_LIMIT_ONLY,
        )
        return UploadTicket.from_dict(resp.json())

    def complete_upload(self, artifact_id: str) -> Artifact:
        """``POST /v1/artifacts/{id}/complete``: finalizes a presigned upload (idempotent)."""
        resp = self._t.request("POST", f"/v1/artifacts/{_seg(artifact_id)}/complete", policy=IDEMPOTENT)
        return Artifact.from_dict(resp.json())

    def push_large(
        self,
        content: Optional[Content] = None,
        filename: Optional[str] = None,
        *,
        path: Optional[PathLike] = None,
        content_type: Optional[str] = None,
        session_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        model: Optional[str] = None,
        ttl: TtlArg = None,
        transcript: bool = False,
    ) -> Artifact:
        """Presigned upload in one call: ``request_upload_url``, a streamed PUT, ``complete_upload``.

        For files above the 500 MiB (524,288,000 bytes) multipart limit (up to 5 GiB, Pro plan). The source must have
        a known size (bytes, a path, a seekable file).
        """
        source = make_source(content, path)
        name = filename or source.name
        if not name:
            raise ValueError("filename is required when uploading bytes, text or an unnamed file object")
        if source.length is None:
            raise ValueError("a presigned upload needs a source of known size (bytes, a path, a seekable file)")
        if transcript:
            metadata = _with_models(content, path, metadata, model)
        meta: Dict[str, Any] = dict(metadata or {})
        if model is not None and "model" not in meta:
            meta["model"] = model
        ticket = self.request_upload_url(
            name,
            source.length,
            content_type=content_type,
            session_id=session_id,
            agent_id=agent_id,
            metadata=meta or None,
            ttl=ttl,
            transcript=transcript,
        )
        self.upload_to_ticket(ticket, source)
        return self.complete_upload(ticket.artifact_id)

    def upload_to_ticket(self, ticket: UploadTicket, content: Union[Content, Source]) -> None:
        """Sends the bytes to a presigned ``upload_url`` (streamed; the API key is not sent)."""
        source = make_source(content)
        headers = dict(ticket.upload_headers)
        headers.pop("Content-Length", None)
        self._t.request(
            ticket.upload_method or "PUT",
            ticket.upload_url,
            body=RawBody(source),
            headers=headers,
            auth=False,
            policy=IDEMPOTENT,
        )

    # -- resumable upload (tus) -----------------------------------------------------------

    def push_resumable(
        self,
        content: Optional[Content] = None,
        filename: Optional[str] = None,
        *,
        path: Optional[PathLike] = None,
        content_type: Optional[str] = None,
        session_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        ttl: TtlArg = None,
        metadata: Optional[Mapping[str, Any]] = None,
        model: Optional[str] = None,
        transcript: bool = False,
        idempotency_key: Optional[str] = None,
        upload_url: Optional[str] = None,
        on_progress: Optional[Callable[[int, int], None]] = None,
        on_upload_url: Optional[Callable[[str], None]] = None,
        chunk_size: int = _tus.DEFAULT_CHUNK_SIZE,
        checksum: bool = False,
    ) -> Artifact:
        """Uploads one artifact over the tus endpoint, resuming after failures; returns its record.

        The source is what :meth:`push` takes, but it must be readable from any offset: bytes, a
        path (``path=`` or a ``pathlib.Path``) or a seekable binary file. The upload is created
        with ``POST /v1/uploads/tus``; ``on_upload_url(url)`` then gets its URL, to persist it.
        The bytes go in PATCHes of ``chunk_size`` (streamed in 1 MiB blocks: memory stays flat),
        and ``on_progress(offset, total)`` is called with the starting offset, then each time the
        server acknowledges more bytes. After a dropped connection, a 5xx, 409, 429 or 460 the
        server's offset is read again (HEAD) and the upload goes on from there, up to
        ``max_retries`` failures in a row (``Retry-After`` honoured). A 409 while another PATCH
        holds the upload (the offset unchanged) is waited out, once a second for up to 30 s since
        the last progress, without counting against ``max_retries``.

        ``upload_url=`` resumes an earlier upload (created by this method, another tus client, or
        a process that crashed) with the same bytes: only what the server lacks is sent; the
        record fields (``filename``, ``session_id``...) were set when it was created and are
        ignored. With ``idempotency_key``, calling again with the same key within 24 hours finds
        the same upload and resumes it too. ``checksum=True`` sends ``Upload-Checksum: sha256``
        with each PATCH (the server refuses a corrupted one, which is then sent again).
        """
        source = make_source(content, path)
        if source.length is None:
            raise ValueError("a resumable upload needs a source of known size (bytes, a path, a seekable file)")
        source.range_chunks(0, 0)  # raises at once for a source that cannot seek (a pipe)
        if chunk_size < 1:
            raise ValueError("chunk_size must be a positive number of bytes")
        total = source.length
        if upload_url is not None:
            target, artifact_id = _tus.upload_target(upload_url)
            offset, length = _tus.head(self._t, target)
            if length != total:
                raise ValueError(f"the upload at {upload_url} is {length} bytes long; this source has {total}")
        else:
            name = filename or source.name
            if not name:
                raise ValueError("filename is required when uploading bytes, text or an unnamed file object")
            if transcript:
                metadata = _with_models(content, path, metadata, model)
            fields = _upload_fields(
                name,
                content_type=content_type,
                session_id=session_id,
                agent_id=agent_id,
                ttl=ttl,
                metadata=metadata,
                model=model,
                transcript=transcript,
            )
            # A key of our own when the caller gives none: a creation whose answer was lost is
            # then retried safely (the retry finds the same upload instead of making a second).
            headers = _tus.tus_headers(
                **{
                    "Upload-Length": str(total),
                    "Upload-Metadata": _tus.encode_metadata(fields),
                    "Idempotency-Key": idempotency_key or f"tus-{uuid.uuid4().hex}",
                }
            )
            try:
                resp = self._t.request("POST", _tus.TUS_PATH, headers=headers, policy=IDEMPOTENT)
            except NotFoundError as err:
                # Only the server's answer for a route it does not have (an older Cairn) means no
                # tus endpoint; another 404 (an Idempotency-Key whose upload is gone) says itself.
                if err.code == "not_found" and err.status == 404 and err.message.startswith("No route"):
                    err.message += " (this Cairn server has no resumable upload endpoint: use push or push_large)"
                    err.args = (err.message,)
                raise
            location = resp.headers.get("location")
            if not location:
                raise ServerError("the upload was created without a Location header", status=resp.status)
            target, artifact_id = _tus.upload_target(location)
            if on_upload_url is not None:
                on_upload_url(location)
            if resp.headers.get("idempotent-replayed", "").lower() == "true":
                offset, _ = _tus.head(self._t, target)  # an earlier call's upload: where it stands
            else:
                offset = int(resp.headers.get("upload-offset") or 0)
        _tus.send(
            self._t,
            target,
            source,
            total,
            offset,
            chunk_size=chunk_size,
            checksum=checksum,
            on_progress=on_progress,
        )
        return self.get(artifact_id)

    def upload_resumable(self, path: PathLike, **options: Any) -> Artifact:
        """:meth:`push_resumable` of the file at ``path`` (a string is a path here, not text)."""
        return self.push_resumable(path=path, **options)

    def resumable_upload_support(self) -> Optional[Dict[str, Any]]:
        """``OPTIONS /v1/uploads/tus`` (no key needed): what the server's tus endpoint offers.

        ``{"version": "1.0.0", "extensions": [...], "max_size": int or None,
        "checksum_algorithms": [...]}``, or None for a server without one (an older Cairn).
        """
        try:
            resp = self._t.request("OPTIONS", _tus.TUS_PATH, headers=_tus.tus_headers(), auth=False)
        except NotFoundError:
            return None

        def listed(name: str) -> List[str]:
            return [v.strip() for v in resp.headers.get(name, "").split(",") if v.strip()]

        if "1.0.0" not in listed("tus-version"):
            return None  # it answers, but does not speak tus 1.0.0
        max_size = resp.headers.get("tus-max-size", "")
        return {
            "version": "1.0.0",
            "extensions": listed("tus-extension"),
            "max_size": int(max_size) if max_size.isdigit() and int(max_size) > 0 else None,
            "checksum_algorithms": listed("tus-checksum-algorithm"),
        }

    def terminate_resumable_upload(self, upload_url: str) -> None:
        """Abandons an unfinished resumable upload (tus ``DELETE``): its bytes go at once.

        ``upload_url`` is what ``on_upload_url`` was given; only its last path segment is used,
        on this client's own base URL. An upload already gone (finished, expired, terminated)
        is no error.
        """
        target, _ = _tus.upload_target(upload_url)
        try:
            self._t.request("DELETE", target, headers=_tus.tus_headers(), policy=IDEMPOTENT)
        except NotFoundError:
            pass

    # -- read ---------------------------------------------------------------------------

    def list(
        self,
        *,
        session_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        filename: Optional[str] = None,
        content_type: Optional[str] = None,
        created_after: TimeArg = None,
        created_before: TimeArg = None,
        transcript: Optional[bool] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> ArtifactPage:
        """One page of artifacts, newest first. ``metadata`` is up to 8 ``{key: value}`` exact matches,
        all of which must hold.

        Pass ``page.next_cursor`` as ``cursor`` for the next page, or use :meth:`iter_artifacts`.
        """
        query = [("cursor", cursor), ("limit", limit)] + _filters(
            session_id, agent_id, filename, content_type, created_after, created_before, transcript, metadata
        )
        return ArtifactPage.from_dict(self._t.request("GET", "/v1/artifacts", query=query).json())

    def iter_artifacts(self, *, page_size: Optional[int] = 200, **filters: Any) -> Iterator[Artifact]:
        """Every artifact matching the filters of :meth:`list`, fetching page after page."""
        return _every_item(self.list, lambda page: page.artifacts, page_size, filters)

    def get(self, artifact_id: str) -> Artifact:
        """One artifact record, with its live ``page`` (or None)."""
        return Artifact.from_dict(self._t.request("GET", f"/v1/artifacts/{_seg(artifact_id)}").json())

    def download_url(self, artifact_id: str) -> DownloadUrl:
        """A private signed URL (one hour) on the content origin; not meant for sharing."""
        resp = self._t.request("GET", f"/v1/artifacts/{_seg(artifact_id)}/download-url")
        return DownloadUrl.from_dict(resp.json())

    def download_urls(self, artifact_ids: Sequence[str]) -> List[BatchDownloadUrl]:
        """Private signed URLs for 1-20 artifacts in one call, one item per id in request order.

        An id that is unknown, deleted or expired gets an item with ``error`` instead of failing
        the call. The call counts as one request against the rate limit and the monthly quota.
        """
        resp = self._t.request(
            "POST",
            "/v1/artifacts/batch/download-urls",
            json_body={"artifact_ids": list(artifact_ids)},
            policy=IDEMPOTENT,
        )
        return [BatchDownloadUrl.from_dict(item) for item in resp.json()["download_urls"]]

    def download(
        self,
        artifact_id: str,
        dest: Union[PathLike, IO[bytes], None] = None,
    ) -> Union[bytes, str, IO[bytes]]:
        """Downloads the bytes, streamed in 1 MiB chunks.

        * ``dest=None``: returns the bytes (keeps them in memory: use a path for large files).
        * ``dest`` a directory: writes ``<dir>/<artifact filename>`` and returns that path.
        * ``dest`` a file path: writes it (via a temp file, renamed at the end) and returns it.
        * ``dest`` a binary file object: writes into it and returns it.
        """
        info = self.download_url(artifact_id)
        if dest is None:
            sink = _DownloadSink()
            self._fetch(info, sink)
            assert sink.buffer is not None
            return bytes(sink.buffer)
        if hasattr(dest, "write"):
            sink = _DownloadSink(dest)  # type: ignore[arg-type]
            self._fetch(info, sink)
            return dest  # type: ignore[return-value]
        target = os.fspath(dest)  # type: ignore[arg-type]
        if os.path.isdir(target):
            safe = os.path.basename(info.filename.replace("\\", "/")) or artifact_id
            if safe in (".", ".."):
                safe = artifact_id
            target = os.path.join(target, safe)
        folder = os.path.dirname(os.path.abspath(target))
        fd, tmp = tempfile.mkstemp(prefix=".cairn-", suffix=".part", dir=folder)
        try:
            with os.fdopen(fd, "w+b") as fh:
                self._fetch(info, _DownloadSink(fh))
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return target

    def _fetch(self, info: DownloadUrl, sink: _DownloadSink) -> None:
        self._t.request("GET", info.download_url, auth=False, sink=sink)
        if info.size_bytes is not None and sink.count != info.size_bytes:
            raise CairnError(
                f"download of {info.filename} returned {sink.count} bytes, expected {info.size_bytes}",
                code="network_error",
            )

    # -- write ---------------------------------------------------------------------------

    def delete(self, artifact_id: str) -> DeleteResult:
        """Soft-deletes; a second delete raises :class:`ArtifactAlreadyDeletedError`.

        A DELETE is retried after a 5xx or network error; when the retry finds the artifact already
        deleted (most likely by the attempt whose answer was lost), that is this call's success:
        it returns ``DeleteResult(artifact_id, deleted=True, deleted_at=None, already_deleted=True)``.
        """
        try:
            resp = self._t.request("DELETE", f"/v1/artifacts/{_seg(artifact_id)}")
        except ArtifactAlreadyDeletedError as err:
            if not err.after_uncertain_attempt:
                raise
            body = {"artifact_id": artifact_id, "deleted": True, "deleted_at": None, "already_deleted": True}
            return DeleteResult(artifact_id=artifact_id, deleted=True, deleted_at=None, raw=body, already_deleted=True)
        return DeleteResult.from_dict(resp.json())

    def create_link(
        self, artifact_id: str, expires_in: Optional[int] = None, *, ttl: Optional[str] = None
    ) -> Link:
        """A shareable unauthenticated download link (default 7 days, at most 30 days).

        The lifetime is ``expires_in`` seconds or a ``ttl`` duration such as ``"3d"`` (not both).
        Retried only on 429 (refused before anything happened): after a 5xx or network error the
        link may or may not exist, so that is raised.
        """
        body = _lifetime(expires_in, ttl)
        resp = self._t.request(
            "POST", f"/v1/artifacts/{_seg(artifact_id)}/links", json_body=body, policy=RATE_LIMIT_ONLY
        )
        return Link.from_dict(resp.json())

    def links(self, artifact_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> LinkPage:
        """One page of the artifact's live share links, newest first."""
        query = [("cursor", cursor), ("limit", limit)]
        resp = self._t.request("GET", f"/v1/artifacts/{_seg(artifact_id)}/links", query=query)
        return LinkPage.for_artifact(resp.json(), artifact_id)

    def iter_links(self, artifact_id: str, *, page_size: Optional[int] = 200, **filters: Any) -> Iterator[Link]:
        """Every live link of the artifact, fetching page after page."""
        return _every_item(
            lambda **kw: self.links(artifact_id, **kw), lambda page: page.links, page_size, filters
        )

    def revoke_link(self, link_id: str) -> RevokeLinkResult:
        """Revokes a share link: its URL stops working at once. Idempotent (safe to retry)."""
        resp = self._t.request("DELETE", f"/v1/links/{_seg(link_id)}", policy=IDEMPOTENT)
        return RevokeLinkResult.from_dict(resp.json())

    def publish(
        self,
        artifact_id: str,
        *,
        visibility: str = "unlisted",
        access: Optional[str] = None,
        title: Optional[str] = None,
        password: Optional[str] = None,
    ) -> PublishResult:
        """Publishes (or updates) the artifact's public page; safe to repeat."""
        body: Dict[str, Any] = {"visibility": visibility}
        if access is not None:
            body["access"] = access
        elif password is not None:
            body["access"] = "password"
        if title is not None:
            body["title"] = title
        if password is not None:
            body["password"] = password
        resp = self._t.request("POST", f"/v1/artifacts/{_seg(artifact_id)}/publish", json_body=body)
        return PublishResult.from_dict(resp.json())

    def unpublish(self, artifact_or_page_id: str) -> UnpublishResult:
        """Takes the page down (``art_…`` or ``pg_…``); safe to repeat."""
        resp = self._t.request("DELETE", f"/v1/artifacts/{_seg(artifact_or_page_id)}/publish")
        return UnpublishResult.from_dict(resp.json())

    # -- sessions -------------------------------------------------------------------------

    def sessions(
        self,
        *,
        created_after: TimeArg = None,
        created_before: TimeArg = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> SessionPage:
        """One page of sessions, most recently active first."""
        query = [
            ("cursor", cursor),
            ("limit", limit),
            ("created_after", _time(created_after)),
            ("created_before", _time(created_before)),
        ]
        return SessionPage.from_dict(self._t.request("GET", "/v1/sessions", query=query).json())

    def iter_sessions(self, *, page_size: Optional[int] = 200, **filters: Any) -> Iterator[Session]:
        """Every session, fetching page after page."""
        return _every_item(self.sessions, lambda page: page.sessions, page_size, filters)

    # -- archives and session links -----------------------------------------------------

    def session_archive_url(self, session_id: str, *, format: str = "zip") -> ArchiveUrl:
        """A signed URL (one hour, no key needed) of the session's live artifacts as one archive.

        ``format`` is ``"zip"`` (entries stored, exact length) or ``"tar.gz"``; the archive's first
        entry, ``manifest.json``, lists each file's artifact id, name, type, size and SHA-256. The
        call counts as one request; fetching the URL counts none.
        """
        resp = self._t.request(
            "GET", f"/v1/sessions/{_seg(session_id)}/archive", query=[("format", format)], see_other=True
        )
        return ArchiveUrl.from_dict(resp.json())

    def archive_url(
        self,
        *,
        format: str = "zip",
        session_id: Optional[str] = None,
        agent_id: Optional[str] = None,
        filename: Optional[str] = None,
        content_type: Optional[str] = None,
        created_after: TimeArg = None,
        created_before: TimeArg = None,
        transcript: Optional[bool] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> ArchiveUrl:
        """The same for every artifact the filters of :meth:`list` match (at most 10,000)."""
        query = [("format", format)] + _filters(
            session_id, agent_id, filename, content_type, created_after, created_before, transcript, metadata
        )
        return ArchiveUrl.from_dict(self._t.request("GET", "/v1/artifacts/archive", query=query, see_other=True).json())

    def download_session(self, session_id: str, dest: PathLike, *, format: str = "zip") -> str:
        """Streams the session's archive to the file ``dest`` (via a temp file renamed at the end,
        so a failed download leaves nothing) and returns its path. Memory stays flat."""
        return self.download_archive(self.session_archive_url(session_id, format=format).archive_url, dest)

    def download_archive(self, url: str, dest: PathLike) -> str:
        """Streams an archive URL (:meth:`archive_url`, :meth:`session_archive_url` or a session
        link's ``archive_url``) to the file ``dest`` and returns its path."""
        target = os.fspath(dest)
        folder = os.path.dirname(os.path.abspath(target))
        fd, tmp = tempfile.mkstemp(prefix=".cairn-", suffix=".part", dir=folder)
        try:
            with os.fdopen(fd, "w+b") as fh:
                sink = _DownloadSink(fh)
                resp = self._t.request("GET", url, auth=False, sink=sink)
                length = resp.headers.get("content-length")
                if length is not None and sink.count != int(length):
                    raise CairnError(f"archive download ended after {sink.count} of {length} bytes", code="network_error")
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return target

    def create_session_link(
        self, session_id: str, expires_in: Optional[int] = None, *, ttl: Optional[str] = None
    ) -> SessionLink:
        """A link anyone can open to a *sealed* session: ``url`` is a page listing its files with
        a "download all" button, ``archive_url`` the archive. Lifetime, the plan's cap and
        :meth:`revoke_link` as for :meth:`create_link`; retried only on 429."""
        body = _lifetime(expires_in, ttl)
        resp = self._t.request(
            "POST", f"/v1/sessions/{_seg(session_id)}/links", json_body=body, policy=RATE_LIMIT_ONLY
        )
        return SessionLink.from_dict(resp.json())

    def session_links(
        self, session_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> SessionLinkPage:
        """One page of the session's live share links, newest first."""
        query = [("cursor", cursor), ("limit", limit)]
        resp = self._t.request("GET", f"/v1/sessions/{_seg(session_id)}/links", query=query)
        return SessionLinkPage.from_dict(resp.json())

    def seal(self, session_id: str) -> SealResult:
        """Seals a session (irreversible); later uploads naming it raise :class:`SessionSealedError`."""
        resp = self._t.request("POST", f"/v1/sessions/{_seg(session_id)}/seal", policy=IDEMPOTENT)
        return SealResult.from_dict(resp.json())

    # -- the change feed ----------------------------------------------------------------------

    def list_events(
        self,
        *,
        after: Optional[str] = None,
        types: Optional[Sequence[str]] = None,
        session_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One page of events, oldest first: ``{"events": [...], "next_cursor", "has_more"}``.

        Poll by passing the last ``event_id`` you saw as ``after``; ``types`` takes prefixes such
        as ``"artifact.*"``.
        """
        query = [
            ("after", after),
            ("cursor", cursor),
            ("limit", limit),
            ("types", ",".join(types) if types else None),
            ("session_id", session_id),
        ]
        return self._t.request("GET", "/v1/events", query=query).json()

    def iter_events(self, **filters: Any) -> Iterator[Dict[str, Any]]:
        """Every event kept that matches, oldest first, page after page."""
        page = self.list_events(**filters)
        while True:
            yield from page["events"]
            if not page.get("has_more") or not page.get("next_cursor"):
                return
            rest = {k: v for k, v in filters.items() if k != "after"}
            page = self.list_events(**rest, cursor=page["next_cursor"])

    def follow_events(
        self,
        *,
        after: Optional[str] = None,
        types: Optional[Sequence[str]] = None,
        session_id: Optional[str] = None,
        stop: Any = None,
    ) -> Iterator[Dict[str, Any]]:
        """Events as they happen (``GET /v1/events/stream``), for as long as you iterate.

        Reconnects by itself with ``Last-Event-ID``, so none is missed or repeated. ``stop``: a
        ``threading.Event`` that ends the iteration at the next message or heartbeat.
        """
        return _events.follow_events(
            self._t, after=after, types=list(types) if types else None, session_id=session_id, stop=stop
        )

    # -- webhooks ------------------------------------------------------------------------------

    def create_webhook(
        self, url: str, *, types: Optional[Sequence[str]] = None, session_id: Optional[str] = None
    ) -> Dict[str, Any]:
        """Creates a webhook; the answer's ``secret`` (``whsec_…``) is shown only now: keep it for :func:`verify_webhook`."""
        body: Dict[str, Any] = {"url": url}
        if types:
            body["types"] = list(types)
        if session_id is not None:
            body["session_id"] = session_id
        return self._t.request("POST", "/v1/webhooks", json_body=body, policy=RATE_LIMIT_ONLY).json()

    def list_webhooks(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        """This account's webhooks, oldest first (never their secrets)."""
        return self._t.request("GET", "/v1/webhooks", query=[("cursor", cursor), ("limit", limit)]).json()

    def get_webhook(self, webhook_id: str) -> Dict[str, Any]:
        return self._t.request("GET", f"/v1/webhooks/{_seg(webhook_id)}").json()

    def delete_webhook(self, webhook_id: str) -> Dict[str, Any]:
        return self._t.request("DELETE", f"/v1/webhooks/{_seg(webhook_id)}").json()

    def rotate_webhook_secret(self, webhook_id: str) -> Dict[str, Any]:
        """A new secret; deliveries carry the old one's signature too for 24 hours."""
        return self._t.request("POST", f"/v1/webhooks/{_seg(webhook_id)}/rotate-secret", policy=RATE_LIMIT_ONLY).json()

    def enable_webhook(self, webhook_id: str) -> Dict[str, Any]:
        """Makes a disabled webhook active again, from the event it stopped at."""
        return self._t.request("POST", f"/v1/webhooks/{_seg(webhook_id)}/enable", policy=IDEMPOTENT).json()

    def webhook_deliveries(
        self, webhook_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Dict[str, Any]:
        """The webhook's delivery attempts, newest first."""
        query = [("cursor", cursor), ("limit", limit)]
        return self._t.request("GET", f"/v1/webhooks/{_seg(webhook_id)}/deliveries", query=query).json()

    # -- public page endpoints (no key) ------------------------------------------------------

    def page_gate_info(self, slug: str) -> GateInfo:
        """``GET /v1/public/pages/{slug}/gate-info``: 200 only for a live password page."""
        resp = self._t.request("GET", f"/v1/public/pages/{_seg(slug)}/gate-info", auth=False)
        return GateInfo.from_dict(resp.json())

    def unlock_page(self, slug: str, password: str) -> UnlockResult:
        """Exchanges a page password for a 5-minute content token."""
        resp = self._t.request(
            "POST",
            f"/v1/public/pages/{_seg(slug)}/unlock",
            json_body={"password": password},
            auth=False,
            policy=RATE_LIMIT_ONLY,
        )
        return UnlockResult.from_dict(resp.json())

    def report_page(self, slug: str, reason: Optional[str] = None, detail: Optional[str] = None) -> bool:
        """Reports abuse on a page; True when the report was received."""
        body: Dict[str, Any] = {}
        if reason is not None:
            body["reason"] = reason
        if detail is not None:
            body["detail"] = detail
        resp = self._t.request(
            "POST", f"/v1/public/pages/{_seg(slug)}/report", json_body=body, auth=False, policy=RATE_LIMIT_ONLY
        )
        return bool((resp.json() or {}).get("received"))
