"""Records returned by the Cairn API, as dataclasses.

Timestamps stay as the RFC 3339 strings the API sends (``2026-11-22T08:00:00.000Z``); use
:func:`parse_time` for a timezone-aware :class:`datetime.datetime`. Every record keeps the
full decoded JSON in ``raw`` so fields added by later API versions are not lost.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Type, TypeVar

__all__ = [
    "parse_time",
    "PageSummary",
    "Artifact",
    "ArtifactPage",
    "DownloadUrl",
    "BatchDownloadUrl",
    "Link",
    "LinkPage",
    "RevokeLinkResult",
    "DeleteResult",
    "Session",
    "SessionPage",
    "SealResult",
    "ArchiveUrl",
    "SessionLink",
    "SessionLinkPage",
    "PublishResult",
    "UnpublishResult",
    "WhoAmI",
    "UploadTicket",
    "GateInfo",
    "UnlockResult",
    "RateLimit",
]

T = TypeVar("T", bound="_Record")


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """``"2026-11-22T08:00:00.000Z"`` → an aware UTC datetime; ``None`` stays ``None``."""
    if value is None:
        return None
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text) if "." not in text else _fromiso_fraction(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


def _fromiso_fraction(text: str) -> datetime:
    # Python 3.9/3.10 fromisoformat wants exactly 3 or 6 fraction digits.
    head, _, rest = text.partition(".")
    digits = ""
    while rest and rest[0].isdigit():
        digits, rest = digits + rest[0], rest[1:]
    return datetime.fromisoformat(f"{head}.{(digits + '000000')[:6]}{rest}")


class _Record:
    """Builds a dataclass from a JSON object, ignoring unknown keys (kept in ``raw``)."""

    @classmethod
    def from_dict(cls: Type[T], data: Mapping[str, Any]) -> T:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        kwargs = {k: v for k, v in data.items() if k in names and k != "raw"}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name not in kwargs and f.name != "raw" and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                kwargs[f.name] = None
        obj = cls(**kwargs)  # type: ignore[call-arg]
        object.__setattr__(obj, "raw", dict(data))
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """The record as the API sent it."""
        return dict(getattr(self, "raw", {}) or dataclasses.asdict(self))  # type: ignore[call-overload]


@dataclass
class PageSummary(_Record):
    """The live page of an artifact (only on :meth:`Cairn.get`)."""

    public_url: str
    visibility: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Artifact(_Record):
    artifact_id: str
    filename: str
    content_type: str
    size_bytes: int
    content_hash: str
    metadata: Dict[str, Any]
    session_id: Optional[str]
    agent_id: Optional[str]
    created_at: str
    expires_at: Optional[str]
    page: Optional[PageSummary] = None
    #: ``"pending"`` only on a presigned or resumable upload not completed yet (its owner's GET shows it); else None.
    status: Optional[str] = None
    #: With ``status="pending"``: when the reservation is released unless the upload is completed.
    held_until: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Artifact":
        obj = super().from_dict(data)
        if isinstance(data.get("page"), Mapping):
            obj.page = PageSummary.from_dict(data["page"])
        if obj.metadata is None:
            obj.metadata = {}
        return obj

    @property
    def created(self) -> Optional[datetime]:
        return parse_time(self.created_at)

    @property
    def expires(self) -> Optional[datetime]:
        return parse_time(self.expires_at)


@dataclass
class ArtifactPage(_Record):
    """One page of :meth:`Cairn.list`."""

    artifacts: List[Artifact]
    next_cursor: Optional[str]
    has_more: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ArtifactPage":
        obj = super().from_dict(data)
        obj.artifacts = [Artifact.from_dict(a) for a in (data.get("artifacts") or [])]
        obj.has_more = bool(obj.has_more)
        return obj

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.artifacts)

    def __len__(self) -> int:
        return len(self.artifacts)


@dataclass
class DownloadUrl(_Record):
    download_url: str
    expires_in: int
    filename: str
    content_type: str
    size_bytes: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class BatchDownloadUrl(_Record):
    """One item of :meth:`Cairn.download_urls`: the URL fields, or ``error``.

    ``error`` is ``{"code", "message", "status"}`` for an id that is unknown (or another
    tenant's), deleted or expired; the URL fields are then ``None``.
    """

    artifact_id: str
    download_url: Optional[str] = None
    expires_in: Optional[int] = None
    filename: Optional[str] = None
    content_type: Optional[str] = None
    size_bytes: Optional[int] = None
    error: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Link(_Record):
    """A shareable download link (``POST /v1/artifacts/{id}/links``)."""

    link_id: str
    url: str
    artifact_id: str
    expires_at: str
    created_at: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class LinkPage(_Record):
    """One page of :meth:`Cairn.links`: the artifact's live links, newest first."""

    links: List[Link]
    next_cursor: Optional[str]
    has_more: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def for_artifact(cls, data: Mapping[str, Any], artifact_id: str) -> "LinkPage":
        """The list is of one artifact, so its items carry no ``artifact_id``: it is filled in."""
        obj = cls.from_dict(data)
        obj.links = [Link.from_dict({"artifact_id": artifact_id, **item}) for item in (data.get("links") or [])]
        obj.has_more = bool(obj.has_more)
        return obj

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.links)


@dataclass
class RevokeLinkResult(_Record):
    """``DELETE /v1/links/{link_id}``: the same answer however often it is repeated."""

    link_id: str
    revoked: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class DeleteResult(_Record):
    """``deleted_at`` is None only with ``already_deleted`` (see :meth:`Cairn.delete`)."""

    artifact_id: str
    deleted: bool
    deleted_at: Optional[str]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    already_deleted: bool = False


@dataclass
class Session(_Record):
    session_id: str
    artifact_count: int
    is_sealed: bool
    sealed_at: Optional[str]
    first_artifact_at: str
    last_artifact_at: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class ArchiveUrl(_Record):
    """A signed URL (one hour, no key needed) of an archive: a session, or a list query's matches."""

    archive_url: str
    expires_in: int
    format: str
    filename: str
    artifact_count: int
    size_bytes: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class SessionLink(_Record):
    """A link to a sealed session: ``url`` is its viewer page, ``archive_url`` the archive itself."""

    link_id: str
    url: str
    archive_url: str
    expires_at: str
    created_at: str
    session_id: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class SessionLinkPage(_Record):
    """One page of :meth:`Cairn.session_links`: the session's live links, newest first."""

    links: List[SessionLink]
    next_cursor: Optional[str]
    has_more: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SessionLinkPage":
        obj = super().from_dict(data)
        obj.links = [SessionLink.from_dict(item) for item in (data.get("links") or [])]
        obj.has_more = bool(obj.has_more)
        return obj

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.links)


@dataclass
class SessionPage(_Record):
    """One page of :meth:`Cairn.sessions`."""

    sessions: List[Session]
    next_cursor: Optional[str]
    has_more: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SessionPage":
        obj = super().from_dict(data)
        obj.sessions = [Session.from_dict(s) for s in (data.get("sessions") or [])]
        obj.has_more = bool(obj.has_more)
        return obj

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.sessions)

    def __len__(self) -> int:
        return len(self.sessions)


@dataclass
class SealResult(_Record):
    session_id: str
    status: str
    sealed_at: str
    artifact_count: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class PublishResult(_Record):
    page_id: str
    public_url: str
    visibility: str
    access: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class UnpublishResult(_Record):
    page_id: str
    unpublished: bool
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class WhoAmI(_Record):
    tenant_name: str
    plan: str
    api_key_last_4: str
    usage_storage_bytes: int
    plan_storage_limit_bytes: int
    usage_requests_month: int
    plan_requests_limit_month: int
    active_links: int
    max_active_links: int
    rate_limit_sustained: int
    rate_limit_burst: int
    # Additive fields: None from servers that do not send them.
    usage_storage_bytes_remaining: Optional[int] = None
    usage_requests_remaining_month: Optional[int] = None
    requests_month_resets_at: Optional[str] = None
    rate_limit_unit: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class UploadTicket(_Record):
    """A presigned upload slot (``POST /v1/artifacts/upload-url``, Pro)."""

    artifact_id: str
    status: str
    upload_url: str
    upload_expires_at: str
    upload_method: str
    upload_headers: Dict[str, str]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "UploadTicket":
        obj = super().from_dict(data)
        obj.upload_headers = {str(k): str(v) for k, v in (data.get("upload_headers") or {}).items()}
        obj.upload_method = obj.upload_method or "PUT"
        return obj


@dataclass
class GateInfo(_Record):
    exists: bool
    access: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class UnlockResult(_Record):
    content_token: str
    expires_in: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class RateLimit:
    """The ``X-RateLimit-*`` headers of the last API answer, all about one sliding window.

    ``limit`` is what the window holds (the burst, 200), ``remaining`` how many of those are free
    now (never more than ``limit``), ``reset`` the Unix time when the oldest counted request leaves.
    """

    limit: Optional[int]
    remaining: Optional[int]
    reset: Optional[int]
