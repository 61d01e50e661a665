"""A real HTTP proxy in front of the real test server that injects failures on demand.

The Python twin of ``test/client/proxy.ts``. Each queued fault replaces what happens to one request:

* ``{"status": 429, "headers": {...}, "body": {...}}``: answered by the proxy; the server never
  sees the request (as when a rate limiter refuses it).
* ``{"reset": True}``: the connection is dropped; the server never sees the request.
* ``{"forward_then": {"status": 502}}`` or ``{"forward_then": {"reset": True}}``: the request
  reaches the server and is processed, then its answer is lost and replaced (a gateway failing
  after the work was done).

Requests without a queued fault are forwarded unchanged.
"""

from __future__ import annotations

import http.client
import http.server
import json
import threading
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class FaultProxy:
    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.target: Tuple[str, int] = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.faults: List[Dict[str, Any]] = []
        self.seen: List[str] = []
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
                    fault = proxy.faults.pop(0) if proxy.faults else None
                if fault is not None and fault.get("reset"):
                    self._drop()
                    return
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

            do_GET = do_POST = do_PUT = do_DELETE = _handle

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
                    conn.request(self.command, self.path, body=body if body or self.command != "GET" else None, headers=headers)
                    resp = conn.getresponse()
                    return resp.status, resp.getheaders(), resp.read()
                finally:
                    conn.close()

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

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
