"""Retry rules of the transport.

A real Cairn server cannot be made to fail on demand, so these tests point the client at a tiny
loopback HTTP endpoint that answers a scripted series of statuses and counts attempts. They test
the client's retry policy only; every API behaviour is tested against the real server elsewhere.
"""

from __future__ import annotations

import http.server
import io
import json
import threading
import time
import unittest
from typing import List, Tuple

import _server  # noqa: F401

import cairn
from cairn import Cairn

ARTIFACT = {
    "artifact_id": "art_AAAAAAAAAAAAAAAA",
    "filename": "x.txt",
    "content_type": "text/plain",
    "size_bytes": 1,
    "content_hash": "0" * 64,
    "metadata": {},
    "session_id": None,
    "agent_id": None,
    "created_at": "2026-01-01T00:00:00.000Z",
    "expires_at": None,
    "page": None,
}


class Scripted(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script: List[Tuple[int, dict, dict]] = []
        self.hits: List[Tuple[str, str, dict, bytes]] = []


class Handler(http.server.BaseHTTPRequestHandler):
    server: Scripted

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.hits.append((self.command, self.path, dict(self.headers), body))
        status, payload, headers = self.server.script.pop(0) if self.server.script else (200, ARTIFACT, {})
        if status == 0:  # drop the connection without answering
            self.close_connection = True
            self.connection.close()
            return
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = do_PUT = _answer


def err(code: str, status: int, **extra: object) -> dict:
    return {"error": {"code": code, "message": code, "status": status, **extra}}


class RetryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.srv = Scripted()
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.thread.start()
        self.addCleanup(self.srv.server_close)
        self.addCleanup(self.srv.shutdown)
        self.client = Cairn(api_key="ak_live_" + "k" * 32, base_url=f"http://127.0.0.1:{self.srv.server_address[1]}", max_retries=3)
        self.sleeps: List[float] = []
        self.client._t._sleep = self.sleeps.append  # no real waiting

    def script(self, *steps: Tuple[int, dict, dict]) -> None:
        self.srv.script = list(steps)

    def test_get_retries_5xx_then_succeeds(self) -> None:
        self.script((503, err("server_error", 503), {}), (500, err("server_error", 500), {}))
        self.assertEqual(self.client.get("art_AAAAAAAAAAAAAAAA").artifact_id, ARTIFACT["artifact_id"])
        self.assertEqual(len(self.srv.hits), 3)
        self.assertEqual(len(self.sleeps), 2)
        self.assertLess(self.sleeps[0], self.sleeps[1] * 2)  # exponential backoff with jitter

    def test_gives_up_after_max_retries(self) -> None:
        self.script(*[(502, err("server_error", 502, request_id="r1"), {})] * 10)
        with self.assertRaises(cairn.ServerError) as ctx:
            self.client.delete("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(ctx.exception.status, 502)
        self.assertEqual(ctx.exception.request_id, "r1")
        self.assertEqual(len(self.srv.hits), 4)

    def test_429_honours_retry_after(self) -> None:
        self.script((429, err("rate_limited", 429, retry_after_seconds=2, retry_after=2), {"Retry-After": "2"}))
        self.client.get("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(self.sleeps, [2.0])

    def test_429_too_long_is_raised(self) -> None:
        self.script((429, err("rate_limited", 429, retry_after_seconds=3600), {"Retry-After": "3600"}))
        with self.assertRaises(cairn.RateLimitedError) as ctx:
            self.client.get("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(ctx.exception.retry_after, 3600)
        self.assertEqual(len(self.srv.hits), 1)

    def test_4xx_is_not_retried(self) -> None:
        self.script((404, err("artifact_not_found", 404), {}))
        with self.assertRaises(cairn.ArtifactNotFoundError):
            self.client.get("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(len(self.srv.hits), 1)

    def test_upload_without_key_not_retried_on_5xx(self) -> None:
        self.script((500, err("server_error", 500), {}))
        with self.assertRaises(cairn.ServerError):
            self.client.push(b"x", "x.txt")
        self.assertEqual(len(self.srv.hits), 1)
        self.assertNotIn("Idempotency-Key", self.srv.hits[0][2])

    def test_upload_without_key_retried_on_429(self) -> None:
        self.script((429, err("rate_limited", 429, retry_after_seconds=1), {"Retry-After": "1"}))
        self.client.push(b"x", "x.txt")
        self.assertEqual(len(self.srv.hits), 2)
        self.assertIn(b'name="file"', self.srv.hits[1][3])

    def test_upload_with_key_retried_and_body_replayed(self) -> None:
        self.script((503, err("server_error", 503), {}), (0, {}, {}))
        self.client.push(io.BytesIO(b"hello-body"), "x.txt", idempotency_key="k-1")
        self.assertEqual(len(self.srv.hits), 3)
        bodies = [h[3] for h in self.srv.hits]
        for h in self.srv.hits:
            self.assertEqual(h[2].get("Idempotency-Key"), "k-1")
            self.assertIn(b"hello-body", h[3])
        self.assertEqual(len({len(b) for b in bodies}), 1)

    def test_unreplayable_body_is_not_retried(self) -> None:
        import os

        r, w = os.pipe()
        os.write(w, b"once")
        os.close(w)
        self.script((503, err("server_error", 503), {}))
        with os.fdopen(r, "rb", buffering=0) as rf, self.assertRaises(cairn.ServerError):
            self.client.push(rf, "p.bin", idempotency_key="k-2")
        self.assertEqual(len(self.srv.hits), 1)

    def test_create_link_retried_on_429_only(self) -> None:
        self.script((429, err("rate_limited", 429, retry_after_seconds=1), {"Retry-After": "1"}))
        self.client.create_link("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(len(self.srv.hits), 2)
        self.assertEqual(self.sleeps, [1.0])
        self.srv.hits.clear()
        self.script((500, err("server_error", 500), {}))
        with self.assertRaises(cairn.ServerError):
            self.client.create_link("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(len(self.srv.hits), 1)
        self.srv.hits.clear()
        self.script((0, {}, {}))
        with self.assertRaises(cairn.CairnConnectionError) as ctx:
            self.client.create_link("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(len(self.srv.hits), 1)
        self.assertTrue(ctx.exception.ambiguous)
        self.assertIn("outcome is unknown", ctx.exception.message)

    def test_network_errors_on_get_are_retried(self) -> None:
        self.script((0, {}, {}), (0, {}, {}))
        self.client.get("art_AAAAAAAAAAAAAAAA")
        self.assertEqual(len(self.srv.hits), 3)

    def test_connection_refused(self) -> None:
        dead = Cairn(api_key="ak_live_" + "k" * 32, base_url=f"http://127.0.0.1:{_server.free_port()}", max_retries=2)
        waits: List[float] = []
        dead._t._sleep = waits.append
        with self.assertRaises(cairn.CairnConnectionError) as ctx:
            dead.whoami()
        self.assertEqual(ctx.exception.status, 0)
        self.assertEqual(len(waits), 2)
        self.assertFalse(ctx.exception.ambiguous)

    def test_signed_urls_get_no_api_key(self) -> None:
        base = f"http://127.0.0.1:{self.srv.server_address[1]}"
        self.script(
            (200, {"download_url": base + "/d/x?sig=1", "expires_in": 3600, "filename": "x", "content_type": "a/b", "size_bytes": 2}, {}),
        )
        # The scripted endpoint answers the second (signed) GET with ARTIFACT's JSON: check headers only.
        with self.assertRaises(cairn.CairnError):
            self.client.download("art_AAAAAAAAAAAAAAAA")  # size mismatch: body is not 2 bytes
        self.assertIn("Authorization", self.srv.hits[0][2])
        self.assertNotIn("Authorization", self.srv.hits[1][2])


if __name__ == "__main__":
    unittest.main()
