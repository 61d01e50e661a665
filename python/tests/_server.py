"""Starts a real Cairn server (``node bin/cairn.js serve``) on loopback for the tests.

Each test class that needs a server calls :func:`start` in ``setUpClass`` and ``stop`` in
``tearDownClass``. The server gets its own temp data folder and three free ports; two tenants
are created first with ``cairn admin tenant create`` (a Pro one and a Free one).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO_ROOT = os.path.dirname(PYTHON_DIR)
CLI = os.path.join(REPO_ROOT, "bin", "cairn.js")

# The package under test is python/cairn, whatever is installed in site-packages.
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)


def _port_range() -> Optional[range]:
    """``CAIRN_TEST_PORTS=18650-18699``: the ports the tests may take (else any free one)."""
    spec = os.environ.get("CAIRN_TEST_PORTS", "").strip()
    if not spec:
        return None
    low, _, high = spec.partition("-")
    return range(int(low), int(high or low) + 1)


_next_in_range = 0


def free_port() -> int:
    global _next_in_range
    ports = _port_range()
    if ports is None:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    # Round robin through the range, so a port just released (maybe in TIME_WAIT) is not reused.
    for _ in range(len(ports)):
        port = ports[_next_in_range % len(ports)]
        _next_in_range += 1
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in CAIRN_TEST_PORTS={os.environ['CAIRN_TEST_PORTS']}")


def _node() -> str:
    node = shutil.which("node")
    if not node:
        raise unittest.SkipTest("node is not installed")  # pragma: no cover
    return node


class CairnServer:
    def __init__(self) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="cairn-py-test-")
        self.api_port = free_port()
        self.viewer_port = free_port()
        self.content_port = free_port()
        self.base_url = f"http://127.0.0.1:{self.api_port}"
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = os.path.join(self.data_dir, "server.log")
        self._log = None
        self.keys: Dict[str, str] = {}

    @property
    def env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env["CAIRN_DATA_DIR"] = self.data_dir
        for name in ("CAIRN_API_ORIGIN", "CAIRN_VIEWER_ORIGIN", "CAIRN_CONTENT_ORIGIN", "CAIRN_DOWNLOAD_ORIGIN"):
            env.pop(name, None)
        return env

    def admin(self, *args: str) -> str:
        if not os.path.exists(os.path.join(REPO_ROOT, "dist", "cli", "main.js")):
            raise RuntimeError("The server is not built: run `npm run build` at the repo root first.")
        out = subprocess.run(
            [_node(), CLI, "admin", *args],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=60,
        )
        if out.returncode != 0:
            raise RuntimeError(f"cairn admin {' '.join(args)} failed ({out.returncode}): {out.stderr.decode()}")
        return out.stdout.decode()

    def create_tenant(self, name: str, plan: str) -> str:
        text = self.admin("tenant", "create", name, "--plan", plan, "--json")
        line = [l for l in text.splitlines() if l.strip().startswith("{")][-1]
        record = json.loads(line)
        self.keys[name] = record["api_key"]
        return record["api_key"]

    def start(self, tenants: Optional[List[tuple]] = None) -> "CairnServer":
        for name, plan in tenants or [("py", "pro"), ("pyfree", "free")]:
            self.create_tenant(name, plan)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [
                _node(),
                CLI,
                "serve",
                "--api-port",
                str(self.api_port),
                "--viewer-port",
                str(self.viewer_port),
                "--content-port",
                str(self.content_port),
                "--log-level",
                "warn",
            ],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"cairn serve exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=2) as resp:
                    if json.loads(resp.read().decode()) == {"status": "ok"}:
                        return self
            except (OSError, urllib.error.URLError, ValueError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"cairn serve did not become healthy in 30 s:\n{self.log()}")
            time.sleep(0.1)

    def log(self) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                return fh.read().decode("utf-8", "replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        shutil.rmtree(self.data_dir, ignore_errors=True)


class ServerTestCase(unittest.TestCase):
    """A test class with its own server, a Pro client ``cls.pro`` and a Free client ``cls.free``."""

    server: CairnServer

    @classmethod
    def setUpClass(cls) -> None:
        from cairn import Cairn

        cls.server = CairnServer().start()
        cls.pro = Cairn(api_key=cls.server.keys["py"], base_url=cls.server.base_url)
        cls.free = Cairn(api_key=cls.server.keys["pyfree"], base_url=cls.server.base_url)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
