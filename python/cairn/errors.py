"""Errors raised by the Cairn SDK.

Every non-2xx answer of the API is ``{"error": {"code", "message", "status", ...}}``. The SDK
raises one exception class per ``code``, all subclasses of :class:`CairnError`. Match on the
class (or on ``err.code``), never on ``err.message``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Type

__all__ = [
    "CairnError",
    "InvalidRequestError",
    "TtlExceedsPlanLimitError",
    "UnauthorizedError",
    "QuotaExceededError",
    "TenantSuspendedError",
    "InsufficientScopeError",
    "PageTakenDownError",
    "ArtifactNotFoundError",
    "SessionNotFoundError",
    "NotFoundError",
    "SessionSealedError",
    "UploadNotFoundError",
    "UploadOffsetConflictError",
    "ChecksumMismatchError",
    "ArtifactAlreadyDeletedError",
    "ArtifactExpiredError",
    "FileTooLargeError",
    "UnsupportedMediaTypeError",
    "RateLimitedError",
    "ServerError",
    "CairnConnectionError",
    "error_from_response",
]


class CairnError(Exception):
    """Base class of every error the SDK raises for a failed call.

    Attributes:
        code: the stable error code of the API (``"artifact_not_found"``, ...).
        status: the HTTP status (0 when no response was received).
        message: human-readable text; may change, do not parse it.
        retry_after: seconds after which a retry may succeed (429 only), else ``None``.
        upgrade_url: where the tenant can lift a plan limit, when the server gives one.
        request_id: the server's request id (every error answer has one), for support.
        body: the decoded error object (``{"code", "message", "status", ...}``) or ``None``.
        after_uncertain_attempt: True when this answered a retry that followed a 5xx or network
            error, i.e. an earlier attempt of the same call may have done the work.
    """

    code: str = "error"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        status: int = 0,
        retry_after: Optional[float] = None,
        upgrade_url: Optional[str] = None,
        request_id: Optional[str] = None,
        body: Optional[Dict[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.upgrade_url = upgrade_url
        self.request_id = request_id
        self.body = body
        self.headers = dict(headers or {})
        self.after_uncertain_attempt = False

    def __str__(self) -> str:
        where = f" (HTTP {self.status})" if self.status else ""
        return f"{self.code}: {self.message}{where}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, message={self.message!r})"


class InvalidRequestError(CairnError):
    code = "invalid_request"


class TtlExceedsPlanLimitError(InvalidRequestError):
    """A TTL longer than the plan allows (a kind of invalid request, status 400)."""

    code = "ttl_exceeds_plan_limit"


class UnauthorizedError(CairnError):
    code = "unauthorized"


class QuotaExceededError(CairnError):
    code = "quota_exceeded"


class TenantSuspendedError(UnauthorizedError):
    """The account is suspended: ``401 unauthorized`` whose message says so (the hosted
    service's convention). The key itself is fine; ask the operator."""

    code = "unauthorized"


class InsufficientScopeError(CairnError):
    code = "insufficient_scope"


class PageTakenDownError(CairnError):
    """Publishing a page an operator took down (refused until the operator restores it)."""

    code = "page_taken_down"


class NotFoundError(CairnError):
    """Base of the 404 errors; raised as is for an unknown route."""

    code = "not_found"


class ArtifactNotFoundError(NotFoundError):
    code = "artifact_not_found"


class SessionNotFoundError(NotFoundError):
    code = "session_not_found"


class SessionSealedError(CairnError):
    code = "session_sealed"


class UploadNotFoundError(CairnError):
    code = "upload_not_found"


class UploadOffsetConflictError(CairnError):
    """A tus PATCH whose ``Upload-Offset`` is not the server's, or while another PATCH of the same
    upload is in flight (409). :meth:`cairn.Cairn.push_resumable` reads the offset again and goes on."""

    code = "upload_offset_conflict"


class ChecksumMismatchError(CairnError):
    """A tus PATCH whose body does not match its ``Upload-Checksum`` (460): nothing of it was kept."""

    code = "checksum_mismatch"


class ArtifactAlreadyDeletedError(CairnError):
    code = "artifact_already_deleted"


class ArtifactExpiredError(CairnError):
    code = "artifact_expired"


class FileTooLargeError(CairnError):
    code = "file_too_large"


class UnsupportedMediaTypeError(CairnError):
    code = "unsupported_media_type"


class RateLimitedError(CairnError):
    code = "rate_limited"


class ServerError(CairnError):
    code = "server_error"


class CairnConnectionError(CairnError):
    """No usable answer: connection refused or reset, timeout, TLS failure.

    ``ambiguous`` is True when the request may have reached the server (so a non-idempotent
    call such as ``create_link`` may or may not have taken effect: check state, do not blindly retry).
    """

    code = "network_error"

    def __init__(self, message: str, *, ambiguous: bool = False, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.ambiguous = ambiguous


_BY_CODE: Dict[str, Type[CairnError]] = {
    cls.code: cls
    for cls in (
        InvalidRequestError,
        TtlExceedsPlanLimitError,
        UnauthorizedError,
        QuotaExceededError,
        InsufficientScopeError,
        PageTakenDownError,
        NotFoundError,
        ArtifactNotFoundError,
        SessionNotFoundError,
        SessionSealedError,
        UploadNotFoundError,
        UploadOffsetConflictError,
        ChecksumMismatchError,
        ArtifactAlreadyDeletedError,
        ArtifactExpiredError,
        FileTooLargeError,
        UnsupportedMediaTypeError,
        RateLimitedError,
        ServerError,
    )
}

# When a body is not the Cairn envelope (a proxy's HTML page, an empty 502...).
_BY_STATUS = {
    400: "invalid_request",
    401: "unauthorized",
    403: "quota_exceeded",
    404: "not_found",
    413: "file_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def error_from_response(
    status: int,
    raw: bytes,
    headers: Mapping[str, str],
    retry_after: Optional[float] = None,
) -> CairnError:
    """Builds the exception for a non-2xx answer (any body, even not JSON)."""
    obj: Optional[Dict[str, Any]] = None
    try:
        decoded = json.loads(raw.decode("utf-8")) if raw else None
        if isinstance(decoded, dict) and isinstance(decoded.get("error"), dict):
            obj = decoded["error"]
    except (ValueError, UnicodeDecodeError):
        obj = None

    if obj is not None and isinstance(obj.get("code"), str):
        code = obj["code"]
        message = str(obj.get("message") or code)
    else:
        code = "server_error" if status >= 500 else _BY_STATUS.get(status, "error")
        text = raw[:200].decode("utf-8", "replace").strip() if raw else ""
        message = f"HTTP {status}" + (f": {text}" if text else "")

    if retry_after is None and obj is not None:
        retry_after = _number(obj.get("retry_after_seconds"))
        if retry_after is None:
            retry_after = _number(obj.get("retry_after"))

    cls = _BY_CODE.get(code)
    if cls is UnauthorizedError and "suspended" in message.lower():
        cls = TenantSuspendedError
    if cls is None:
        cls = ServerError if status >= 500 else CairnError
    return cls(
        message,
        code=code,
        status=status,
        retry_after=retry_after,
        upgrade_url=(obj or {}).get("upgrade_url"),
        request_id=(obj or {}).get("request_id"),
        body=obj,
        headers=headers,
    )
