"""A real HTTP proxy in front of the real test server that injects failures on demand.

The Python twin of ``test/client/proxy.ts``. Each queued fault replaces what happens to one request:

* ``{"status": 429, "headers": {...}, "body": {...}}``: answered by the proxy; the server never
  sees the request (as when a rate limiter refuses it).
* ``{"reset": True}``: the connection is dropped; the server never sees the request.
* ``{"forward_then": {"status": 502}}`` or ``{"forward_then": {"reset": True}}``: the request
  reaches the server and is processed, then its answer is lost and replaced (a gateway failing
  after the work was done).
* ``{"corrupt": True}``: one byte of the body is flipped on the way to the server.
* ``{"forward_partial": n}`` (a tus PATCH): only the first ``n`` bytes of the body reach the
  server before both connections are cut; the proxy then waits until a HEAD shows the server
  kept them, so the client's next HEAD sees them too.
* ``{}``: forwarded unchanged (a placeholder to aim a later fault at a later request).

Requests without a queued fault are forwarded unchanged. ``seen`` lists ``"METHOD path"`` of each
request; ``requests`` the same with the request headers and the body size.
"""

from __future__ import annotations

import http.client
import http.server
import json
import socket
import threading
import time
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

def _port() -> int:
    from _server import free_port  # the test port range, when one is set

    return free_port()


_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class FaultProxy:
    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.target: Tuple[str, int] = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.faults: List[Dict[str, Any]] = []
        self.seen: List[str] = []
        self.requests: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                body = self._read_body()
                with proxy._lock:
                    proxy.seen.append(f"{self.command} {self.path}")
                    proxy.requests.append(
                        {"method": self.command, "path": self.path, "headers": dict(self.headers.items()), "size": len(body)}
                    )
                    fault = proxy.faults.pop(0) if proxy.faults else None
                if fault is not None and fault.get("reset"):
                    self._drop()
                    return
                if fault is not None and "forward_partial" in fault:
                    self._forward_partial(body, fault["forward_partial"])
                    self._drop()
                    return
                if fault is not None and fault.get("corrupt") and body:
                    middle = len(body) // 2
                    body = body[:middle] + bytes([body[middle] ^ 0xFF]) + body[middle + 1 :]
                if fault is not None and "status" in fault:
                    self._answer(fault["status"], fault.get("headers", {}), fault.get("body"))
                    return
                status, headers, payload = self._forward(body)
                after = fault.get("forward_then") if fault is not None else None
                if after is None:
                    self._relay(status, headers, payload)
                elif after.get("reset"):
                    self._drop()
                else:
                    self._answer(after["status"], after.get("headers", {}), after.get("body"))

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle

            def _read_body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def _forward(self, body: bytes) -> Tuple[int, List[Tuple[str, str]], bytes]:
                conn = http.client.HTTPConnection(*proxy.target, timeout=30)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                    no_body = self.command in ("GET", "HEAD", "OPTIONS") and not body
                    conn.request(self.command, self.path, body=None if no_body else body, headers=headers)
                    resp = conn.getresponse()
                    return resp.status, resp.getheaders(), resp.read()
                finally:
                    conn.close()

            def _forward_partial(self, body: bytes, keep: int) -> None:
                headers = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP)
                head = (
                    f"{self.command} {self.path} HTTP/1.1\r\nHost: {proxy.target[0]}:{proxy.target[1]}\r\n{headers}"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                )
                with socket.create_connection(proxy.target, timeout=30) as upstream:
                    upstream.sendall(head.encode("latin-1") + body[:keep])
                    time.sleep(0.2)  # the bytes arrive before the cut, not with it
                want = int(self.headers.get("Upload-Offset") or 0) + keep
                probe = {"Authorization": self.headers.get("Authorization", ""), "Tus-Resumable": "1.0.0"}
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    conn = http.client.HTTPConnection(*proxy.target, timeout=10)
                    try:
                        conn.request("HEAD", self.path, headers=probe)
                        resp = conn.getresponse()
                        resp.read()
                        if resp.getheader("Upload-Offset") == str(want):
                            return
                    finally:
                        conn.close()
                    time.sleep(0.05)

            def _relay(self, status: int, headers: List[Tuple[str, str]], payload: bytes) -> None:
                self.send_response(status)
                for k, v in headers:
                    if k.lower() not in _HOP_BY_HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)
                self.close_connection = True

            def _answer(self, status: int, headers: Dict[str, str], body: Optional[Any]) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self._relay(status, [("Content-Type", "application/json"), *headers.items()], data)

            def _drop(self) -> None:
                self.close_connection = True
                self.connection.close()

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", _port()), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> "FaultProxy":
        self._thread.start()
        return self

    def next(self, *faults: Dict[str, Any]) -> None:
        """Queues faults for the next requests and forgets what was seen so far."""
        with self._lock:
            self.faults = list(faults)
            self.seen = []
            self.requests = []

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
