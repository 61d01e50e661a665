"""Session archives and session links through the Python SDK (standard library only), opened with
zipfile and tarfile and checked against the archive's manifest."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import tempfile
import unittest
import urllib.request
import uuid
import zipfile

import _server  # noqa: F401
from _server import ServerTestCase

import cairn


class ArchiveTest(ServerTestCase):
    def _session(self) -> str:
        session = f"py-{uuid.uuid4().hex[:8]}"
        self.pro.push(b"# Report\n", "report.md", session_id=session)
        self.pro.push(b"a,b\n1,2\n", "data.csv", session_id=session, agent_id="planner")
        self.pro.push(b"again", "report.md", session_id=session)
        return session

    def test_download_session_zip_and_tar(self) -> None:
        session = self._session()
        info = self.pro.session_archive_url(session)
        self.assertEqual((info.format, info.filename, info.artifact_count), ("zip", f"{session}.zip", 3))
        with tempfile.TemporaryDirectory() as tmp:
            path = self.pro.download_session(session, os.path.join(tmp, "run.zip"))
            with zipfile.ZipFile(path) as z:
                self.assertIsNone(z.testzip())
                manifest = json.loads(z.read("manifest.json"))
                self.assertEqual(len(manifest["entries"]), 3)
                for e in manifest["entries"]:
                    self.assertEqual(hashlib.sha256(z.read(e["path"])).hexdigest(), e["sha256"])
                names = [e["path"] for e in manifest["entries"]]
                self.assertEqual(names[0], "report.md")
                self.assertRegex(names[2], r"^report\.art_[A-Za-z0-9]{16}\.md$")
            tgz = self.pro.download_session(session, os.path.join(tmp, "run.tar.gz"), format="tar.gz")
            with tarfile.open(tgz, "r:gz") as t:
                manifest = json.loads(t.extractfile("manifest.json").read())  # type: ignore[union-attr]
                for e in manifest["entries"]:
                    data = t.extractfile(e["path"]).read()  # type: ignore[union-attr]
                    self.assertEqual(hashlib.sha256(data).hexdigest(), e["sha256"])
            self.assertEqual(sorted(os.listdir(tmp)), ["run.tar.gz", "run.zip"])  # no temp file left
        by_agent = self.pro.archive_url(session_id=session, agent_id="planner", format="tar.gz")
        self.assertEqual((by_agent.artifact_count, by_agent.format), (1, "tar.gz"))
        with self.assertRaises(cairn.NotFoundError):
            self.free.session_archive_url(session)  # another tenant's
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.session_archive_url(session, format="rar")

    def test_session_link(self) -> None:
        session = self._session()
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.create_session_link(session)  # not sealed yet
        self.pro.seal(session)
        link = self.pro.create_session_link(session, ttl="1d")
        self.assertEqual(link.session_id, session)
        self.assertTrue(link.url.endswith(f"/s/{link.link_id}"))
        with urllib.request.urlopen(link.url, timeout=30) as resp:
            page = resp.read().decode("utf-8")
        self.assertIn("3 files", page)
        self.assertIn(link.archive_url, page)
        with tempfile.TemporaryDirectory() as tmp:
            path = self.pro.download_archive(link.archive_url, os.path.join(tmp, "shared.zip"))
            with zipfile.ZipFile(path) as z:
                self.assertEqual(len(z.namelist()), 4)
        self.assertEqual([l.link_id for l in self.pro.session_links(session)], [link.link_id])
        self.assertTrue(self.pro.revoke_link(link.link_id).revoked)
        self.assertEqual(list(self.pro.session_links(session)), [])


if __name__ == "__main__":
    unittest.main()
