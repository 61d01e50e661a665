"""Error classes: mapping of the wire envelope, and the codes a real server returns."""

from __future__ import annotations

import json
import unittest
import uuid

import _server  # noqa: F401
from _server import ServerTestCase

import cairn
from cairn import Cairn, CairnError
from cairn.errors import error_from_response

ALL_CODES = {
    "invalid_request": (cairn.InvalidRequestError, 400),
    "ttl_exceeds_plan_limit": (cairn.TtlExceedsPlanLimitError, 400),
    "unauthorized": (cairn.UnauthorizedError, 401),
    "quota_exceeded": (cairn.QuotaExceededError, 403),
    "insufficient_scope": (cairn.InsufficientScopeError, 403),
    "page_taken_down": (cairn.PageTakenDownError, 403),
    "artifact_not_found": (cairn.ArtifactNotFoundError, 404),
    "session_not_found": (cairn.SessionNotFoundError, 404),
    "not_found": (cairn.NotFoundError, 404),
    "session_sealed": (cairn.SessionSealedError, 409),
    "upload_not_found": (cairn.UploadNotFoundError, 409),
    "upload_offset_conflict": (cairn.UploadOffsetConflictError, 409),
    "checksum_mismatch": (cairn.ChecksumMismatchError, 460),
    "artifact_already_deleted": (cairn.ArtifactAlreadyDeletedError, 410),
    "artifact_expired": (cairn.ArtifactExpiredError, 410),
    "file_too_large": (cairn.FileTooLargeError, 413),
    "unsupported_media_type": (cairn.UnsupportedMediaTypeError, 415),
    "rate_limited": (cairn.RateLimitedError, 429),
    "server_error": (cairn.ServerError, 500),
}


def envelope(code: str, status: int, **extra: object) -> bytes:
    return json.dumps({"error": {"code": code, "message": f"m-{code}", "status": status, **extra}}).encode()


class ErrorMappingTest(unittest.TestCase):
    def test_one_class_per_code(self) -> None:
        classes = set()
        for code, (cls, status) in ALL_CODES.items():
            err = error_from_response(status, envelope(code, status), {})
            self.assertIs(type(err), cls, code)
            self.assertIsInstance(err, CairnError)
            self.assertEqual((err.code, err.status, err.message), (code, status, f"m-{code}"))
            self.assertIsNone(err.retry_after)
            classes.add(cls)
        self.assertEqual(len(classes), len(ALL_CODES))

    def test_a_suspension_is_unauthorized_naming_it(self) -> None:
        body = json.dumps(
            {"error": {"code": "unauthorized", "message": "This tenant is suspended; contact the operator.", "status": 401}}
        ).encode()
        err = error_from_response(401, body, {})
        self.assertIs(type(err), cairn.TenantSuspendedError)
        self.assertIsInstance(err, cairn.UnauthorizedError)
        self.assertEqual((err.code, err.status), ("unauthorized", 401))

    def test_retry_after_and_extras(self) -> None:
        err = error_from_response(429, envelope("rate_limited", 429, retry_after_seconds=3, retry_after=3), {})
        self.assertEqual(err.retry_after, 3)
        err = error_from_response(429, envelope("rate_limited", 429), {}, retry_after=7.0)
        self.assertEqual(err.retry_after, 7.0)
        err = error_from_response(403, envelope("quota_exceeded", 403, upgrade_url="https://x/up"), {})
        self.assertEqual(err.upgrade_url, "https://x/up")
        err = error_from_response(500, envelope("server_error", 500, request_id="req-9"), {})
        self.assertEqual(err.request_id, "req-9")

    def test_not_an_envelope(self) -> None:
        err = error_from_response(502, b"<html>Bad gateway</html>", {})
        self.assertIsInstance(err, cairn.ServerError)
        self.assertEqual(err.status, 502)
        self.assertIn("Bad gateway", err.message)
        self.assertIsInstance(error_from_response(429, b"", {}), cairn.RateLimitedError)
        unknown = error_from_response(418, envelope("teapot", 418), {})
        self.assertIs(type(unknown), CairnError)
        self.assertEqual(unknown.code, "teapot")
        self.assertIs(type(error_from_response(503, envelope("new_5xx", 503), {})), cairn.ServerError)

    def test_str(self) -> None:
        err = error_from_response(404, envelope("artifact_not_found", 404), {})
        self.assertEqual(str(err), "artifact_not_found: m-artifact_not_found (HTTP 404)")


class ServerErrorsTest(ServerTestCase):
    def test_unauthorized(self) -> None:
        bad = Cairn(api_key="ak_live_" + "x" * 28 + "WXYZ", base_url=self.server.base_url)
        with self.assertRaises(cairn.UnauthorizedError) as ctx:
            bad.whoami()
        self.assertEqual(ctx.exception.status, 401)
        self.assertIn("WXYZ", ctx.exception.message)  # key-suffix hint
        with self.assertRaises(cairn.UnauthorizedError):
            bad.push(b"x" * 1000, "x.txt")

    def test_missing_key_fails_before_sending(self) -> None:
        import os

        saved = {k: os.environ.pop(k, None) for k in ("CAIRN_API_KEY", "SERVICE_API_KEY")}
        try:
            with self.assertRaises(cairn.UnauthorizedError):
                Cairn(base_url=self.server.base_url).whoami()
        finally:
            for k, v in saved.items():
                if v is not None:
                    os.environ[k] = v

    def test_invalid_request(self) -> None:
        with self.assertRaises(cairn.InvalidRequestError) as ctx:
            self.pro.push(b"x", "x.txt", metadata={"bad.key": 1})
        self.assertEqual(ctx.exception.status, 400)
        self.assertEqual(ctx.exception.code, "invalid_request")
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.push(b"x", "x.txt", session_id="has space")
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.list(metadata={f"k{i}": "v" for i in range(9)})
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.push(b"x", "x.txt", ttl="soon")

    def test_not_found(self) -> None:
        with self.assertRaises(cairn.ArtifactNotFoundError) as ctx:
            self.pro.get("art_" + "A" * 16)
        self.assertEqual(ctx.exception.status, 404)
        self.assertIsInstance(ctx.exception, cairn.NotFoundError)
        with self.assertRaises(cairn.SessionNotFoundError):
            self.pro.seal("no-such-session-" + uuid.uuid4().hex[:8])

    def test_ttl_exceeds_plan_limit(self) -> None:
        with self.assertRaises(cairn.TtlExceedsPlanLimitError) as ctx:
            self.free.push(b"x", "x.txt", ttl="91d")
        self.assertEqual(ctx.exception.status, 400)
        self.assertIsInstance(ctx.exception, cairn.InvalidRequestError)
        self.assertEqual(self.pro.push(b"x", "x.txt", ttl="91d").size_bytes, 1)
        with self.assertRaises(cairn.TtlExceedsPlanLimitError):
            self.pro.push(b"x", "x.txt", ttl="366d")

    def test_already_deleted(self) -> None:
        art = self.pro.push(b"x", "x.txt")
        self.pro.delete(art.artifact_id)
        with self.assertRaises(cairn.ArtifactAlreadyDeletedError) as ctx:
            self.pro.create_link(art.artifact_id)
        self.assertEqual(ctx.exception.status, 410)

    def test_unknown_route_is_not_found(self) -> None:
        with self.assertRaises(cairn.NotFoundError) as ctx:
            self.pro._t.request("GET", "/v1/nothing-here")
        self.assertEqual(ctx.exception.code, "not_found")

    def test_rate_limited_raised_then_absorbed(self) -> None:
        """Burst past 200 requests: without retries a 429 surfaces with retry_after; with retries it is absorbed."""
        key = self.server.create_tenant("burst-" + uuid.uuid4().hex[:6], "free")
        no_retry = Cairn(api_key=key, base_url=self.server.base_url, max_retries=0)
        caught = None
        for _ in range(1000):
            try:
                no_retry.whoami()
            except cairn.RateLimitedError as err:
                caught = err
                break
        self.assertIsNotNone(caught, "no 429 after 1000 quick calls")
        assert caught is not None
        self.assertEqual(caught.status, 429)
        self.assertIsNotNone(caught.retry_after)
        self.assertGreaterEqual(caught.retry_after, 0)
        self.assertIn("retry-after", caught.headers)
        # The same burst through a retrying client: every call succeeds.
        patient = Cairn(api_key=key, base_url=self.server.base_url, max_retries=5)
        for _ in range(150):
            patient.whoami()


if __name__ == "__main__":
    unittest.main()
