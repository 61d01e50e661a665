"""Resumable uploads (tus 1.0.0, ``push_resumable``) against the real server.

Most calls go through the fault proxy (``_proxy.py``), which records each request (method, path,
headers, body size) and can cut a PATCH part-way, lose its answer or refuse it. The server's
``Location`` names the server's own origin, not the proxy's, so every request the proxy sees also
shows that the SDK addresses the upload on its configured API origin.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import uuid
from typing import Any, Dict, List, Tuple
from urllib.parse import urlsplit

import _server
from _peak import PEAK_SOURCE
from _proxy import FaultProxy

import cairn
from cairn import Cairn

MIB = 1024 * 1024


def envelope(code: str, status: int) -> Dict[str, Any]:
    return {"error": {"code": code, "message": f"injected {code}", "status": status}}


def write_random(path: str, size: int) -> str:
    """Writes ``size`` random bytes; returns their sha256 (hex)."""
    digest = hashlib.sha256()
    left = size
    with open(path, "wb") as fh:
        while left:
            block = os.urandom(min(MIB, left))
            fh.write(block)
            digest.update(block)
            left -= len(block)
    return digest.hexdigest()


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class ResumableUploadTest(_server.ServerTestCase):
    SIZE = 3 * MIB + 12345  # four PATCHes of 1 MiB, the last one short

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.proxy = FaultProxy(cls.server.base_url).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.proxy.close()
        super().tearDownClass()

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.path = os.path.join(tmp.name, "big.bin")
        self.sha256 = write_random(self.path, self.SIZE)
        self.client = Cairn(api_key=self.server.keys["py"], base_url=self.proxy.url, max_retries=3)
        self.sleeps: List[float] = []
        self.client._t._sleep = self.sleeps.append  # record the waits instead of sleeping them
        self.proxy.next()

    # -- helpers ------------------------------------------------------------------------------

    def stored_sha256(self, artifact_id: str) -> str:
        return hashlib.sha256(self.pro.download(artifact_id)).hexdigest()

    def methods(self) -> List[str]:
        return [r["method"] for r in self.proxy.requests]

    def patches(self) -> List[Dict[str, Any]]:
        return [r for r in self.proxy.requests if r["method"] == "PATCH"]

    def patch_offsets(self) -> List[int]:
        return [int(r["headers"]["Upload-Offset"]) for r in self.patches()]

    def raw(self, method: str, path: str, headers: Dict[str, str], body: bytes = b"") -> http.client.HTTPResponse:
        """One request straight to the server (not through the proxy or the SDK)."""
        url = urlsplit(self.server.base_url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        self.addCleanup(conn.close)
        hdrs = {"Authorization": f"Bearer {self.server.keys['py']}", "Tus-Resumable": "1.0.0", **headers}
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        resp.read()
        return resp

    # -- tests --------------------------------------------------------------------------------

    def test_upload_is_byte_identical_with_monotone_progress(self) -> None:
        progress: List[Tuple[int, int]] = []
        urls: List[str] = []
        session = "tus-" + uuid.uuid4().hex[:10]
        art = self.client.push_resumable(
            path=self.path,
            session_id=session,
            agent_id="uploader",
            metadata={"kind": "tus", "n": 3, "note": "héllo, wörld"},
            ttl="7d",
            chunk_size=MIB,
            on_progress=lambda done, total: progress.append((done, total)),
            on_upload_url=urls.append,
        )
        self.assertIsInstance(art, cairn.Artifact)
        self.assertEqual(art.size_bytes, self.SIZE)
        self.assertEqual(art.content_hash, self.sha256)
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        self.assertEqual((art.filename, art.session_id, art.agent_id), ("big.bin", session, "uploader"))
        self.assertEqual(art.metadata, {"kind": "tus", "n": 3, "note": "héllo, wörld"})
        self.assertIsNotNone(art.expires_at)
        # Progress: from 0 to the size, growing at each acknowledged PATCH.
        self.assertEqual(progress, [(0, self.SIZE), (MIB, self.SIZE), (2 * MIB, self.SIZE), (3 * MIB, self.SIZE), (self.SIZE, self.SIZE)])
        # The URL is handed over once, before the bytes; its last segment is the artifact id.
        self.assertEqual(len(urls), 1)
        self.assertTrue(urls[0].endswith("/v1/uploads/tus/" + art.artifact_id), urls[0])
        self.assertEqual(self.methods(), ["POST", "PATCH", "PATCH", "PATCH", "PATCH", "GET"])
        self.assertEqual(self.patch_offsets(), [0, MIB, 2 * MIB, 3 * MIB])
        self.assertEqual([p["size"] for p in self.patches()], [MIB, MIB, MIB, 12345])
        post = self.proxy.requests[0]["headers"]
        self.assertEqual(post["Upload-Length"], str(self.SIZE))
        self.assertEqual(post["Tus-Resumable"], "1.0.0")
        for p in self.patches():
            self.assertEqual(p["headers"]["Content-Type"], "application/offset+octet-stream")
            self.assertNotIn("Upload-Checksum", p["headers"])
        self.assertEqual(self.sleeps, [])

    def test_bytes_and_file_objects_upload_too(self) -> None:
        data = os.urandom(100_000)
        art = self.client.push_resumable(data, "small.bin", chunk_size=40_000)
        self.assertEqual(self.pro.download(art.artifact_id), data)
        self.assertEqual(self.patch_offsets(), [0, 40_000, 80_000])
        with open(self.path, "rb") as fh:
            fh.seek(1000)  # from its current position, as push does
            art = self.client.push_resumable(fh)
        self.assertEqual(art.filename, "big.bin")
        self.assertEqual(art.size_bytes, self.SIZE - 1000)
        with open(self.path, "rb") as fh:
            fh.seek(1000)
            self.assertEqual(self.pro.download(art.artifact_id), fh.read())

    def test_resuming_an_upload_begun_elsewhere_sends_only_the_rest(self) -> None:
        part = MIB + 1000
        created = self.raw(
            "POST",
            "/v1/uploads/tus",
            {"Upload-Length": str(self.SIZE), "Upload-Metadata": f"filename {b64('begun.bin')},session_id {b64('tus-raw')}"},
        )
        self.assertEqual(created.status, 201)
        url = created.getheader("Location")
        with open(self.path, "rb") as fh:
            first = fh.read(part)
        patched = self.raw(
            "PATCH",
            urlsplit(url).path,
            {"Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"},
            first,
        )
        self.assertEqual((patched.status, patched.getheader("Upload-Offset")), (204, str(part)))

        progress: List[Tuple[int, int]] = []
        urls: List[str] = []
        art = self.client.upload_resumable(
            self.path, upload_url=url, chunk_size=MIB, on_progress=lambda d, t: progress.append((d, t)), on_upload_url=urls.append
        )
        self.assertEqual(art.artifact_id, url.rstrip("/").rsplit("/", 1)[1])
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        # The record is the one the creation described, not the local file's name.
        self.assertEqual((art.filename, art.session_id), ("begun.bin", "tus-raw"))
        self.assertEqual(self.methods()[0], "HEAD")
        self.assertEqual(self.patch_offsets(), [part, part + MIB, part + 2 * MIB])
        self.assertEqual(sum(p["size"] for p in self.patches()), self.SIZE - part)
        self.assertEqual(progress[0], (part, self.SIZE))
        self.assertEqual(progress[-1], (self.SIZE, self.SIZE))
        self.assertEqual(urls, [])  # no new upload was created

    def test_a_connection_cut_mid_patch_resumes_at_the_offset_the_server_kept(self) -> None:
        kept = 300_000
        self.proxy.next({}, {}, {"forward_partial": kept})  # POST, PATCH 0, then PATCH 1 MiB is cut
        art = self.client.push_resumable(path=self.path, chunk_size=MIB)
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        self.assertEqual(self.methods(), ["POST", "PATCH", "PATCH", "HEAD", "PATCH", "PATCH", "GET"])
        # Sent again from where the server's bytes end, not from the start of the cut PATCH.
        self.assertEqual(self.patch_offsets(), [0, MIB, MIB + kept, 2 * MIB + kept])
        self.assertEqual(len(self.sleeps), 1)

    def test_lost_answers_and_refusals_are_recovered_from_the_servers_offset(self) -> None:
        self.proxy.next(
            {},  # POST
            {"forward_then": {"reset": True}},  # PATCH 0 is stored, its answer lost
            {},  # HEAD: 1 MiB
            {"status": 429, "headers": {"Retry-After": "2"}, "body": envelope("rate_limited", 429)},
            {},  # HEAD
            {"status": 503, "headers": {"Retry-After": "1"}, "body": envelope("unavailable", 503)},
            {},  # HEAD
            {"forward_then": {"status": 502, "body": envelope("server_error", 502)}},  # stored, answer replaced
            {},  # HEAD: 2 MiB
            {"status": 409, "body": envelope("upload_offset_conflict", 409)},
        )
        progress: List[int] = []
        art = self.client.push_resumable(path=self.path, chunk_size=MIB, on_progress=lambda d, t: progress.append(d))
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        self.assertEqual(
            self.methods(),
            ["POST", "PATCH", "HEAD", "PATCH", "HEAD", "PATCH", "HEAD", "PATCH", "HEAD", "PATCH", "HEAD", "PATCH", "PATCH", "GET"],
        )
        self.assertEqual(self.patch_offsets(), [0, MIB, MIB, MIB, 2 * MIB, 2 * MIB, 3 * MIB])
        self.assertEqual(len(self.sleeps), 5)
        self.assertEqual(self.sleeps[1:3], [2.0, 1.0])  # Retry-After of the 429 and the 503
        self.assertEqual(progress, sorted(set(progress)))
        self.assertEqual((progress[0], progress[-1]), (0, self.SIZE))

    def test_failures_in_a_row_are_bounded_and_the_same_key_resumes(self) -> None:
        unavailable = {"status": 503, "body": envelope("server_error", 503)}
        key = "tus-key-" + uuid.uuid4().hex[:10]
        urls: List[str] = []
        self.proxy.next({}, {}, unavailable, {}, unavailable, {}, unavailable, {}, unavailable)
        with self.assertRaises(cairn.ServerError) as ctx:
            self.client.push_resumable(path=self.path, chunk_size=MIB, idempotency_key=key, on_upload_url=urls.append)
        self.assertEqual(ctx.exception.status, 503)
        self.assertEqual(self.patch_offsets(), [0, MIB, MIB, MIB, MIB])  # the first try and 3 retries
        self.assertEqual(len(self.sleeps), 3)
        self.assertEqual(self.proxy.requests[0]["headers"]["Idempotency-Key"], key)

        # Called again with the same key (a new process after a crash): the same upload, resumed.
        self.proxy.next()
        progress: List[int] = []
        art = self.client.push_resumable(
            path=self.path, chunk_size=MIB, idempotency_key=key, on_upload_url=urls.append, on_progress=lambda d, t: progress.append(d)
        )
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        self.assertEqual(urls[0], urls[1])
        self.assertEqual(self.methods(), ["POST", "HEAD", "PATCH", "PATCH", "PATCH", "GET"])
        self.assertEqual(self.patch_offsets(), [MIB, 2 * MIB, 3 * MIB])
        self.assertEqual(progress[0], MIB)

        # Once more: the upload is finished, so nothing is sent and the same artifact comes back.
        self.proxy.next()
        again = self.client.push_resumable(path=self.path, chunk_size=MIB, idempotency_key=key)
        self.assertEqual(again.artifact_id, art.artifact_id)
        self.assertEqual(self.methods(), ["POST", "HEAD", "GET"])

    def test_a_409_while_another_patch_holds_the_upload_is_waited_out_beyond_max_retries(self) -> None:
        # A server that crashed mid-PATCH holds the upload for up to 8 s: many 409s in a row at
        # the same offset, more than max_retries (3), each waited out a second, none counted.
        conflict = {"status": 409, "body": envelope("upload_offset_conflict", 409)}
        held = [fault for _ in range(6) for fault in (conflict, {})]  # PATCH 409, HEAD: same offset
        self.proxy.next({}, *held)
        art = self.client.push_resumable(path=self.path, chunk_size=MIB)
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        self.assertEqual(self.methods(), ["POST", *["PATCH", "HEAD"] * 6, "PATCH", "PATCH", "PATCH", "PATCH", "GET"])
        self.assertEqual(self.patch_offsets(), [0] * 7 + [MIB, 2 * MIB, 3 * MIB])
        self.assertEqual(self.sleeps, [1.0] * 6)

        # The 30 s are counted since the last progress: 25 s held at 0, then 25 s held at 1 MiB.
        self.proxy.next({}, *[conflict, {}] * 25, {}, *[conflict, {}] * 25)
        self.sleeps.clear()
        art = self.client.push_resumable(path=self.path, chunk_size=MIB)
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        self.assertEqual(self.sleeps, [1.0] * 50)

    def test_a_409_held_beyond_30_seconds_since_progress_counts_as_a_failure(self) -> None:
        conflict = {"status": 409, "body": envelope("upload_offset_conflict", 409)}
        self.proxy.next({}, *[conflict, {}] * 40)
        with self.assertRaises(cairn.UploadOffsetConflictError) as ctx:
            self.client.push_resumable(path=self.path, chunk_size=MIB)
        self.assertEqual(ctx.exception.status, 409)
        # 30 waits of a second, then the ordinary budget: max_retries (3) retries with backoff.
        self.assertEqual(len(self.patches()), 1 + 30 + 3)
        self.assertEqual(self.patch_offsets(), [0] * 34)
        self.assertEqual(self.sleeps[:30], [1.0] * 30)
        self.assertEqual(len(self.sleeps), 33)

    def test_a_creation_whose_answer_was_lost_is_retried_without_a_second_upload(self) -> None:
        self.proxy.next({"forward_then": {"reset": True}})
        art = self.client.push_resumable(path=self.path, chunk_size=2 * MIB)
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        # The HEAD shows the retry was answered as a replay (Idempotent-Replayed) of the first POST.
        self.assertEqual(self.methods(), ["POST", "POST", "HEAD", "PATCH", "PATCH", "GET"])
        keys = {r["headers"].get("Idempotency-Key") for r in self.proxy.requests if r["method"] == "POST"}
        self.assertEqual(len(keys), 1)  # the SDK's own key, the same on the retry
        self.assertIsNotNone(keys.pop())

    def test_checksum_makes_the_server_refuse_a_corrupted_patch_which_is_sent_again(self) -> None:
        # Control: without a checksum, the corruption is stored.
        self.proxy.next({}, {"corrupt": True})
        plain = self.client.push_resumable(path=self.path, chunk_size=2 * MIB)
        self.assertNotEqual(self.stored_sha256(plain.artifact_id), self.sha256)

        self.proxy.next({}, {"corrupt": True})
        art = self.client.push_resumable(path=self.path, chunk_size=2 * MIB, checksum=True)
        self.assertEqual(self.stored_sha256(art.artifact_id), self.sha256)
        self.assertEqual(self.methods(), ["POST", "PATCH", "HEAD", "PATCH", "PATCH", "GET"])
        self.assertEqual(self.patch_offsets(), [0, 0, 2 * MIB])
        with open(self.path, "rb") as fh:
            for p in self.patches():
                fh.seek(int(p["headers"]["Upload-Offset"]))
                want = base64.b64encode(hashlib.sha256(fh.read(p["size"])).digest()).decode()
                self.assertEqual(p["headers"]["Upload-Checksum"], "sha256 " + want)

    def test_a_bad_field_is_refused_before_any_byte_with_invalid_request(self) -> None:
        with self.assertRaises(cairn.InvalidRequestError) as ctx:
            self.client.push_resumable(path=self.path, ttl="forever-and-a-day")
        self.assertEqual((ctx.exception.code, ctx.exception.status), ("invalid_request", 400))
        self.assertEqual(self.methods(), ["POST"])

    def test_a_sealed_session_is_refused_before_any_byte(self) -> None:
        session = "tus-sealed-" + uuid.uuid4().hex[:8]
        self.pro.push(b"x", "x.txt", session_id=session)
        self.pro.seal(session)
        self.proxy.next()
        with self.assertRaises(cairn.SessionSealedError):
            self.client.push_resumable(path=self.path, session_id=session)
        self.assertEqual(self.methods(), ["POST"])

    def test_a_file_above_the_plan_limit_is_refused_before_any_byte(self) -> None:
        sparse = self.path + ".sparse"
        with open(sparse, "wb") as fh:
            fh.truncate(524_288_001)  # one byte above the Free plan's limit (500 MiB), no disk used
        free = Cairn(api_key=self.server.keys["pyfree"], base_url=self.proxy.url)
        with self.assertRaises(cairn.FileTooLargeError) as ctx:
            free.push_resumable(path=sparse)
        self.assertEqual(ctx.exception.status, 413)
        self.assertEqual(self.methods(), ["POST"])

    def test_a_server_without_the_tus_route_is_named_as_such(self) -> None:
        # An older Cairn: its answer for a route it does not have.
        no_route = {"error": {"code": "not_found", "message": "No route POST /v1/uploads/tus.", "status": 404}}
        self.proxy.next({"status": 404, "body": no_route})
        with self.assertRaises(cairn.NotFoundError) as ctx:
            self.client.push_resumable(path=self.path)
        self.assertEqual((ctx.exception.code, ctx.exception.status), ("not_found", 404))
        self.assertIn("has no resumable upload endpoint", ctx.exception.message)
        self.assertIn("has no resumable upload endpoint", str(ctx.exception))

    def test_an_idempotency_key_whose_upload_is_gone_is_not_called_a_missing_endpoint(self) -> None:
        key = "tus-gone-" + uuid.uuid4().hex[:10]
        created = self.raw(
            "POST",
            "/v1/uploads/tus",
            {"Upload-Length": str(self.SIZE), "Upload-Metadata": f"filename {b64('gone.bin')}", "Idempotency-Key": key},
        )
        self.assertEqual(created.status, 201)
        self.assertEqual(self.raw("DELETE", urlsplit(created.getheader("Location")).path, {}).status, 204)
        with self.assertRaises(cairn.NotFoundError) as ctx:
            self.client.push_resumable(path=self.path, idempotency_key=key)
        self.assertEqual((ctx.exception.code, ctx.exception.status), ("not_found", 404))
        self.assertIn("Idempotency-Key created is gone", ctx.exception.message)
        self.assertNotIn("resumable upload endpoint", ctx.exception.message)
        self.assertNotIn("resumable upload endpoint", str(ctx.exception))

    def test_support_says_what_the_endpoint_offers_and_none_without_one(self) -> None:
        offered = self.client.resumable_upload_support()
        assert offered is not None
        self.assertEqual(offered["version"], "1.0.0")
        self.assertIn("creation", offered["extensions"])
        self.assertIn("termination", offered["extensions"])
        self.assertIn("sha256", offered["checksum_algorithms"])
        self.assertIsInstance(offered["max_size"], int)
        no_route = {"error": {"code": "not_found", "message": "No route OPTIONS /v1/uploads/tus.", "status": 404}}
        self.proxy.next({"status": 404, "body": no_route})
        self.assertIsNone(self.client.resumable_upload_support())

    def test_terminate_removes_an_unfinished_upload_and_repeats_quietly(self) -> None:
        created = self.raw(
            "POST",
            "/v1/uploads/tus",
            {"Upload-Length": str(self.SIZE), "Upload-Metadata": f"filename {b64('dropped.bin')}"},
        )
        self.assertEqual(created.status, 201)
        url = created.getheader("Location")
        path = urlsplit(url).path
        self.assertEqual(self.raw("HEAD", path, {}).status, 200)
        self.client.terminate_resumable_upload(url)
        self.assertEqual(self.raw("HEAD", path, {}).status, 404)
        self.client.terminate_resumable_upload(url)  # already gone: no error
        self.assertEqual(self.methods(), ["DELETE", "DELETE"])

    def test_an_unknown_upload_url_is_not_found(self) -> None:
        unknown = f"{self.server.base_url}/v1/uploads/tus/art_0000000000000000"
        with self.assertRaises(cairn.NotFoundError) as ctx:
            self.client.push_resumable(path=self.path, upload_url=unknown)
        self.assertEqual((ctx.exception.code, ctx.exception.status), ("not_found", 404))
        self.assertEqual(self.methods(), ["HEAD"])
        with self.assertRaises(ValueError):
            self.client.push_resumable(path=self.path, upload_url=f"{self.server.base_url}/v1/artifacts/art_0000000000000000")

    def test_resuming_with_a_file_of_another_size_is_refused(self) -> None:
        urls: List[str] = []
        self.proxy.next({}, {"status": 503, "body": envelope("server_error", 503)})
        self.client._t.max_retries = 0
        with self.assertRaises(cairn.ServerError):
            self.client.push_resumable(path=self.path, on_upload_url=urls.append)
        with self.assertRaises(ValueError):
            self.client.push_resumable(b"shorter", "x.bin", upload_url=urls[0])


CHILD = PEAK_SOURCE + textwrap.dedent(
    """
    import json, resource, sys
    sys.path.insert(0, sys.argv[1])
    from cairn import Cairn

    base_url, key, path = sys.argv[2:5]
    client = Cairn(api_key=key, base_url=base_url)
    client.push_resumable(b"warm-up", "warm.txt", checksum=True)  # imports, sockets, buffers
    before = peak()
    art = client.push_resumable(path=path, chunk_size=32 * 1024 * 1024, checksum=True)
    after = peak()
    with open(path, "rb") as fh:
        blob = fh.read()
    # Control, from the same baseline: a file-sized read shows up in this measure.
    print(json.dumps({"artifact": art.to_dict(), "growth": after - before, "control": peak() - before}))
    """
)


class ResumableMemoryTest(_server.ServerTestCase):
    SIZE = 64 * MIB + 4321

    def test_memory_does_not_grow_with_the_file_or_the_chunk(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "big.bin")
            sha256 = write_random(path, self.SIZE)
            child = subprocess.run(
                [sys.executable, "-c", CHILD, _server.PYTHON_DIR, self.server.base_url, self.server.keys["py"], path],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                timeout=300,
            )
        self.assertEqual(child.returncode, 0, child.stderr.decode())
        result = json.loads(child.stdout.decode().strip().splitlines()[-1])
        self.assertEqual(result["artifact"]["content_hash"], sha256)
        self.assertLess(result["growth"], 16 * MIB, f"the upload grew peak RSS by {result['growth']} bytes")
        self.assertGreater(result["control"], self.SIZE * 0.8, result)  # the measure sees a file-sized read


if __name__ == "__main__":
    unittest.main()
