"""Publishing (pages, public page endpoints) and presigned uploads against the real server."""

from __future__ import annotations

import hashlib
import os
import tempfile
import unittest
import urllib.request
import uuid

import _server  # noqa: F401
from _server import ServerTestCase

import cairn


class PagesTest(ServerTestCase):
    def test_publish_get_unpublish_republish(self) -> None:
        art = self.pro.push(b"# Title\n\nbody", "page.md")
        pub = self.pro.publish(art.artifact_id, title="Report")
        self.assertRegex(pub.page_id, r"^pg_")
        self.assertEqual(pub.visibility, "unlisted")
        self.assertEqual(pub.access, "none")
        self.assertTrue(pub.public_url.endswith(f"/a/{pub.page_id}"))
        page = self.pro.get(art.artifact_id).page
        self.assertIsNotNone(page)
        assert page is not None
        self.assertEqual((page.public_url, page.visibility), (pub.public_url, "unlisted"))
        self.assertIsNone(self.pro.list(filename="page.md").artifacts[0].page)  # never in lists
        again = self.pro.publish(art.artifact_id, visibility="public")
        self.assertEqual((again.page_id, again.visibility), (pub.page_id, "public"))
        down = self.pro.unpublish(art.artifact_id)
        self.assertEqual((down.page_id, down.unpublished), (pub.page_id, True))
        self.assertIsNone(self.pro.get(art.artifact_id).page)
        self.assertEqual(self.pro.unpublish(pub.page_id).page_id, pub.page_id)  # by slug, idempotent
        self.assertEqual(self.pro.publish(art.artifact_id).page_id, pub.page_id)  # same slug again

    def test_publish_errors(self) -> None:
        art = self.pro.push(b"x", "x.txt")
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.publish(art.artifact_id, visibility="everyone")
        html = self.pro.push(b"<p>x</p>", "x.html")
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.publish(html.artifact_id, password="secret-pw")
        free_art = self.free.push(b"x", "x.txt")
        with self.assertRaises(cairn.QuotaExceededError):
            self.free.publish(free_art.artifact_id, password="secret-pw")
        with self.assertRaises(cairn.ArtifactNotFoundError):
            self.free.publish(art.artifact_id)  # another tenant's
        with self.assertRaises(cairn.ArtifactNotFoundError):
            self.pro.unpublish(art.artifact_id)  # never published
        self.pro.delete(art.artifact_id)
        with self.assertRaises(cairn.ArtifactAlreadyDeletedError):
            self.pro.publish(art.artifact_id)

    def test_password_page_gate_unlock_report(self) -> None:
        anon = cairn.Cairn(api_key="", base_url=self.server.base_url)
        art = self.pro.push(b"secret notes", "notes.txt")
        pub = self.pro.publish(art.artifact_id, password="correct horse")
        self.assertEqual(pub.access, "password")
        info = anon.page_gate_info(pub.page_id)
        self.assertEqual((info.exists, info.access), (True, "password"))
        with self.assertRaises(cairn.UnauthorizedError):
            anon.unlock_page(pub.page_id, "wrong")
        token = anon.unlock_page(pub.page_id, "correct horse")
        self.assertEqual(token.expires_in, 300)
        self.assertEqual(token.content_token.count("."), 2)  # a JWT
        page_url = f"http://127.0.0.1:{self.server.content_port}/c/{pub.page_id}?token={token.content_token}"
        # The page shows a text preview; download=1 gives the stored bytes.
        with urllib.request.urlopen(page_url) as resp:
            self.assertTrue(resp.headers["Content-Type"].startswith("text/html"))
            self.assertIn(b"secret notes", resp.read())
        with urllib.request.urlopen(page_url + "&download=1") as resp:
            self.assertEqual(resp.read(), b"secret notes")
        self.assertTrue(anon.report_page(pub.page_id, reason="spam", detail="test"))
        self.assertTrue(anon.report_page("pg_doesnotexist0000"))
        open_art = self.pro.push(b"open", "open.txt")
        open_pub = self.pro.publish(open_art.artifact_id)
        with self.assertRaises(cairn.ArtifactNotFoundError):
            anon.page_gate_info(open_pub.page_id)
        self.pro.unpublish(pub.page_id)
        with self.assertRaises(cairn.ArtifactNotFoundError):
            anon.page_gate_info(pub.page_id)


class PresignedTest(ServerTestCase):
    def test_push_large_from_path(self) -> None:
        data = os.urandom(3 * 1024 * 1024 + 1)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "huge.bin")
            with open(path, "wb") as fh:
                fh.write(data)
            session = "pre-" + uuid.uuid4().hex[:8]
            art = self.pro.push_large(path=path, session_id=session, metadata={"via": "presigned"}, model="m")
        self.assertEqual(art.size_bytes, len(data))
        self.assertEqual(art.content_hash, hashlib.sha256(data).hexdigest())
        self.assertEqual(art.filename, "huge.bin")
        self.assertEqual(art.session_id, session)
        self.assertEqual(art.metadata, {"via": "presigned", "model": "m"})
        self.assertEqual(self.pro.complete_upload(art.artifact_id), art)  # idempotent
        self.assertEqual(self.pro.download(art.artifact_id), data)

    def test_step_by_step_and_errors(self) -> None:
        ticket = self.pro.request_upload_url("step.txt", 5, content_type="text/plain")
        self.assertEqual(ticket.status, "pending")
        self.assertEqual(ticket.upload_method, "PUT")
        self.assertRegex(ticket.artifact_id, r"^art_")
        with self.assertRaises(cairn.UploadNotFoundError) as ctx:
            self.pro.complete_upload(ticket.artifact_id)  # bytes not sent yet
        self.assertEqual(ctx.exception.status, 409)
        self.pro.upload_to_ticket(ticket, b"12345")
        art = self.pro.complete_upload(ticket.artifact_id)
        self.assertEqual((art.size_bytes, art.content_type), (5, "text/plain"))
        with self.assertRaises(cairn.QuotaExceededError):
            self.free.request_upload_url("x.bin", 10)
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.request_upload_url("x.bin", 5 * 1024**3 + 1)


if __name__ == "__main__":
    unittest.main()
