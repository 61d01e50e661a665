"""A streamed upload (and download) of a 64 MiB file, with memory measured in a fresh process."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import uuid
from typing import Any

import _server
from _peak import PEAK_SOURCE
from _server import ServerTestCase

import cairn

MIB = 1024 * 1024
FILE_SIZE = 64 * MIB + 12345  # not a multiple of the chunk size
# Peak RSS growth allowed during the transfer: a quarter of the file.
MAX_GROWTH = FILE_SIZE // 4

CHILD = PEAK_SOURCE + textwrap.dedent(
    """
    import json, os, resource, sys
    sys.path.insert(0, sys.argv[1])
    from cairn import Cairn


    base_url, key, path, out_path, session = sys.argv[2:7]
    client = Cairn(api_key=key, base_url=base_url)
    client.push(b"warm-up", "warm.txt")          # imports, sockets, buffers all touched once
    client.download(client.push(b"w2", "w2.txt").artifact_id)
    before = peak()
    art = client.push(path=path, session_id=session, metadata={"kind": "big"}, idempotency_key=session)
    after_upload = peak()
    client.download(art.artifact_id, out_path)
    after_download = peak()
    # Control: loading the file into memory must show up in the same measure.
    with open(path, "rb") as fh:
        blob = fh.read()
    after_control = peak()
    print(json.dumps({
        "artifact": art.to_dict(),
        "upload_growth": after_upload - before,
        "download_growth": after_download - after_upload,
        "control_growth": after_control - after_download,
        "blob_len": len(blob),
    }))
    """
)


class _CountingReader(io.RawIOBase):
    """A binary file that counts the bytes read from it."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.name = raw.name
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def readinto(self, buf: Any) -> int:
        n = self.raw.readinto(buf)
        self.read_bytes += n
        return n


class LargeUploadTest(ServerTestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.name, "big.bin")
        digest = hashlib.sha256()
        block = os.urandom(MIB)
        with open(self.path, "wb") as fh:
            written = 0
            i = 0
            while written < FILE_SIZE:
                chunk = (block[i % 251 :] + block[: i % 251])[: min(MIB, FILE_SIZE - written)]
                fh.write(chunk)
                digest.update(chunk)
                written += len(chunk)
                i += 1
        self.sha256 = digest.hexdigest()
        self.assertEqual(os.path.getsize(self.path), FILE_SIZE)

    def test_streamed_upload_and_download_memory_stays_flat(self) -> None:
        out_path = os.path.join(self.tmp.name, "back.bin")
        session = "big-" + uuid.uuid4().hex[:10]
        child = subprocess.run(
            [sys.executable, "-c", CHILD, _server.PYTHON_DIR, self.server.base_url, self.server.keys["py"], self.path, out_path, session],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=300,
        )
        self.assertEqual(child.returncode, 0, child.stderr.decode())
        result = json.loads(child.stdout.decode().strip().splitlines()[-1])
        art = result["artifact"]
        self.assertEqual(art["size_bytes"], FILE_SIZE)
        self.assertEqual(art["content_hash"], self.sha256)
        self.assertEqual(art["filename"], "big.bin")
        self.assertEqual(art["session_id"], session)
        self.assertLess(result["upload_growth"], MAX_GROWTH, f"upload grew peak RSS by {result['upload_growth']} bytes")
        self.assertLess(result["download_growth"], MAX_GROWTH, f"download grew peak RSS by {result['download_growth']} bytes")
        # The measure is able to see a file-sized allocation.
        self.assertGreater(result["control_growth"], FILE_SIZE * 0.8)
        digest = hashlib.sha256()
        with open(out_path, "rb") as fh:
            for block in iter(lambda: fh.read(MIB), b""):
                digest.update(block)
        self.assertEqual(digest.hexdigest(), self.sha256)
        got = self.pro.get(art["artifact_id"])
        self.assertEqual(got.metadata, {"kind": "big"})

    def test_replayed_push_ends_at_the_answer(self) -> None:
        """A replay is answered from the Idempotency-Key alone: the rest of the file is not sent."""
        key = "replay-" + uuid.uuid4().hex[:10]
        first = self.pro.push(path=self.path, idempotency_key=key)
        with open(self.path, "rb") as raw:
            source = _CountingReader(raw)
            started = time.monotonic()
            again = self.pro.push(source, "big.bin", idempotency_key=key)
            took = time.monotonic() - started
        self.assertEqual(again.artifact_id, first.artifact_id)
        self.assertLess(took, 10)
        # What the socket buffers took before the answer, not the file.
        self.assertLess(source.read_bytes, FILE_SIZE // 4, f"read {source.read_bytes} bytes")

    def test_large_upload_refused_early_gives_the_real_error(self) -> None:
        session = "sealed-" + uuid.uuid4().hex[:10]
        self.pro.push(b"x", "x.txt", session_id=session)
        self.pro.seal(session)
        started = time.monotonic()
        with self.assertRaises(cairn.SessionSealedError):
            self.pro.push(path=self.path, session_id=session)
        bad = cairn.Cairn(api_key="ak_live_" + "0" * 32, base_url=self.server.base_url)
        with self.assertRaises(cairn.UnauthorizedError):
            bad.push(path=self.path)
        self.assertLess(time.monotonic() - started, 60)
        self.assertEqual(list(self.pro.iter_artifacts(session_id=session))[0].filename, "x.txt")


if __name__ == "__main__":
    unittest.main()
