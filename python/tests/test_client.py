"""Every client method against a real Cairn server."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import pathlib
import tempfile
import unittest
import urllib.request
import uuid

import _server  # noqa: F401  (puts python/ on sys.path)
from _server import ServerTestCase

import cairn
from cairn import (
    Artifact,
    ArtifactAlreadyDeletedError,
    ArtifactNotFoundError,
    Cairn,
    CairnError,
    SessionSealedError,
)


def sid(prefix: str = "s") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class ClientTest(ServerTestCase):
    # -- meta ------------------------------------------------------------------------

    def test_health_needs_no_key(self) -> None:
        self.assertEqual(Cairn(api_key="", base_url=self.server.base_url).health(), {"status": "ok"})

    def test_whoami(self) -> None:
        me = self.pro.whoami()
        self.assertEqual(me.tenant_name, "py")
        self.assertEqual(me.plan, "pro")
        self.assertEqual(me.api_key_last_4, self.server.keys["py"][-4:])
        for name in (
            "usage_storage_bytes",
            "plan_storage_limit_bytes",
            "usage_requests_month",
            "plan_requests_limit_month",
            "active_links",
            "max_active_links",
            "rate_limit_sustained",
            "rate_limit_burst",
            "usage_storage_bytes_remaining",
            "usage_requests_remaining_month",
        ):
            self.assertIsInstance(getattr(me, name), int, name)
        # The spec's eleven and four additive ones: what is left, when the month resets, the rate unit.
        self.assertEqual(len(me.raw), 15)
        self.assertEqual(me.usage_storage_bytes_remaining, me.plan_storage_limit_bytes - me.usage_storage_bytes)
        self.assertRegex(me.requests_month_resets_at or "", r"^\d{4}-\d{2}-01T00:00:00\.000Z$")
        self.assertEqual(me.rate_limit_unit, "requests_per_second")
        self.assertEqual(self.free.whoami().plan, "free")
        self.assertIsNotNone(self.pro.rate_limit)
        # One window: Limit is what it holds (the 200 burst), Remaining never above it.
        self.assertEqual(self.pro.rate_limit.limit, 200)
        self.assertLessEqual(self.pro.rate_limit.remaining, self.pro.rate_limit.limit)

    def test_openapi(self) -> None:
        doc = self.pro.openapi()
        self.assertTrue(doc["openapi"].startswith("3.1"))
        self.assertIn("/v1/artifacts", doc["paths"])

    def test_env_configuration(self) -> None:
        saved = {k: os.environ.get(k) for k in ("CAIRN_API_KEY", "CAIRN_API_URL", "SERVICE_API_KEY")}
        try:
            os.environ.pop("CAIRN_API_KEY", None)
            os.environ["SERVICE_API_KEY"] = self.server.keys["pyfree"]
            os.environ["CAIRN_API_URL"] = self.server.base_url
            self.assertEqual(Cairn().whoami().tenant_name, "pyfree")
            os.environ["CAIRN_API_KEY"] = self.server.keys["py"]
            self.assertEqual(Cairn().whoami().tenant_name, "py")
            # Explicit arguments win over the environment.
            self.assertEqual(Cairn(api_key=self.server.keys["pyfree"]).whoami().tenant_name, "pyfree")
            del os.environ["CAIRN_API_URL"]
            self.assertEqual(Cairn().base_url, cairn.DEFAULT_BASE_URL)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    # -- push ------------------------------------------------------------------------

    def test_push_bytes_with_all_fields(self) -> None:
        data = b"\x00\x01binary\xff" * 10
        session = sid()
        art = self.pro.push(
            data,
            "blob.bin",
            session_id=session,
            agent_id="agent.one",
            ttl="7d",
            metadata={"run": 7, "ok": True, "label": "x"},
            model="claude-test",
        )
        self.assertIsInstance(art, Artifact)
        self.assertRegex(art.artifact_id, r"^art_[A-Za-z0-9]{16}$")
        self.assertEqual(art.filename, "blob.bin")
        self.assertEqual(art.size_bytes, len(data))
        self.assertEqual(art.content_hash, hashlib.sha256(data).hexdigest())
        self.assertEqual(art.content_type, "application/octet-stream")
        self.assertEqual(art.session_id, session)
        self.assertEqual(art.agent_id, "agent.one")
        self.assertEqual(art.metadata, {"run": 7, "ok": True, "label": "x", "model": "claude-test"})
        self.assertIsNone(art.page)
        lifetime = art.expires - art.created
        self.assertEqual(lifetime, dt.timedelta(days=7))
        self.assertEqual(self.pro.download(art.artifact_id), data)

    def test_push_str_is_utf8_text(self) -> None:
        art = self.pro.push("héllo ✓\n", "note.md")
        self.assertEqual(art.content_type, "text/markdown")
        self.assertEqual(self.pro.download(art.artifact_id), "héllo ✓\n".encode("utf-8"))

    def test_push_path_and_pathlib(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            p = pathlib.Path(tmp) / "data.csv"
            p.write_text("a,b\n1,2\n")
            a1 = self.pro.push(p)
            a2 = self.pro.push(path=str(p), filename="renamed.csv")
        self.assertEqual(a1.filename, "data.csv")
        self.assertEqual(a1.content_type, "text/csv")
        self.assertEqual(a2.filename, "renamed.csv")
        self.assertEqual(a1.content_hash, a2.content_hash)
        self.assertNotEqual(a1.artifact_id, a2.artifact_id)

    def test_push_file_objects(self) -> None:
        buf = io.BytesIO(b"skip-me|payload")
        buf.seek(8)  # uploads from the current position
        art = self.pro.push(buf, "part.txt")
        self.assertEqual(self.pro.download(art.artifact_id), b"payload")
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
            fh.write(b'{"a": 1}')
        try:
            with open(fh.name, "rb") as f:
                art2 = self.pro.push(f)  # name and type from the file object
            self.assertEqual(art2.filename, os.path.basename(fh.name))
            self.assertEqual(art2.content_type, "application/json")
        finally:
            os.unlink(fh.name)

    def test_push_non_seekable_stream_is_chunked(self) -> None:
        r, w = os.pipe()
        payload = os.urandom(3 * 1024 * 1024 + 17)
        with os.fdopen(w, "wb") as wf:
            import threading

            t = threading.Thread(target=lambda: (wf.write(payload), wf.close()))
            t.start()
            with os.fdopen(r, "rb", buffering=0) as rf:
                art = self.pro.push(rf, "piped.bin")
            t.join()
        self.assertEqual(art.size_bytes, len(payload))
        self.assertEqual(art.content_hash, hashlib.sha256(payload).hexdigest())

    def test_store_is_push(self) -> None:
        art = self.pro.store(b"x", "x.txt")
        self.assertEqual(art.filename, "x.txt")

    def test_push_content_type_declared_and_transcript(self) -> None:
        art = self.pro.push(b"<b>x</b>", "page.bin", content_type="text/html")
        self.assertEqual(art.content_type, "text/html")
        tr = self.pro.push(b'{"a":1}\n', "t.log", transcript=True)
        self.assertEqual(tr.content_type, "application/x-ndjson")
        self.assertEqual(tr.metadata.get("type"), "transcript")

    def test_push_requires_filename_for_bytes(self) -> None:
        with self.assertRaises(ValueError):
            self.pro.push(b"x")
        with self.assertRaises(TypeError):
            self.pro.push(12345, "x")  # type: ignore[arg-type]

    def test_push_ttl_timedelta_and_never(self) -> None:
        art = self.pro.push(b"x", "x.txt", ttl=dt.timedelta(hours=5))
        self.assertEqual(art.expires - art.created, dt.timedelta(hours=5))
        forever = self.pro.push(b"y", "y.txt", ttl="never")
        # `never` means the longest the plan allows (or no expiry at all).
        if forever.expires_at is not None:
            self.assertGreaterEqual(forever.expires - forever.created, dt.timedelta(days=365))

    def test_idempotency_key_returns_original(self) -> None:
        key = uuid.uuid4().hex
        a = self.pro.push(b"first", "i.txt", idempotency_key=key)
        b = self.pro.push(b"second, different", "j.txt", idempotency_key=key)
        self.assertEqual(a.artifact_id, b.artifact_id)
        self.assertEqual(b.filename, "i.txt")
        c = self.pro.push(b"first", "i.txt", idempotency_key=uuid.uuid4().hex)
        self.assertNotEqual(a.artifact_id, c.artifact_id)

    def test_push_transcript_helper(self) -> None:
        session = sid("run")
        events = [
            {"type": "user", "content": "summarise the logs"},
            {"type": "assistant", "model": "claude-sonnet-4", "content": "ok"},
        ]
        art = self.pro.push_transcript(
            events,
            session_id=session,
            model="claude-sonnet-4",
            models_used=["claude-sonnet-4", "claude-haiku-4", "claude-sonnet-4"],
            capture="end",
            metadata={"model_source": "transcript"},
        )
        self.assertEqual(art.content_type, "application/x-ndjson")
        self.assertEqual(art.metadata["type"], "transcript")
        self.assertEqual(art.metadata["model"], "claude-sonnet-4")
        self.assertEqual(art.metadata["models_used"], "claude-sonnet-4,claude-haiku-4")
        self.assertEqual(art.metadata["capture"], "end")
        lines = self.pro.download(art.artifact_id).decode().splitlines()
        self.assertEqual([json.loads(l) for l in lines], events)
        found = list(self.pro.iter_artifacts(session_id=session, transcript=True))
        self.assertEqual([a.artifact_id for a in found], [art.artifact_id])

    # -- read ------------------------------------------------------------------------

    def test_get(self) -> None:
        art = self.pro.push(b"g", "g.txt", metadata={"a": "b"})
        got = self.pro.get(art.artifact_id)
        self.assertEqual(got, art)
        self.assertIsNone(got.page)
        self.assertEqual(got.to_dict()["artifact_id"], art.artifact_id)

    def test_list_filters(self) -> None:
        session = sid()
        a = self.pro.push(b"1", "one.txt", session_id=session, agent_id="lister", metadata={"n": 1, "flag": True})
        b = self.pro.push(b"2", "two.md", session_id=session, metadata={"n": 2, "tag": "x"})
        c = self.pro.push(b"3", "three.txt", session_id=session, transcript=True)
        ids = lambda page: [x.artifact_id for x in page.artifacts]  # noqa: E731
        self.assertEqual(ids(self.pro.list(session_id=session)), [c.artifact_id, b.artifact_id, a.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, agent_id="lister")), [a.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, filename="two.md")), [b.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, content_type="text/markdown")), [b.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, transcript=True)), [c.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, metadata={"n": 2})), [b.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, metadata={"flag": True})), [a.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, metadata={"tag": "x"})), [b.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, metadata={"n": 2, "tag": "x"})), [b.artifact_id])
        self.assertEqual(ids(self.pro.list(session_id=session, metadata={"n": 1, "tag": "x"})), [])
        # Time filters accept datetimes and strings.
        self.assertEqual(ids(self.pro.list(session_id=session, created_after=b.created_at)), [c.artifact_id])
        before = b.created + dt.timedelta(microseconds=1000)
        self.assertIn(a.artifact_id, ids(self.pro.list(session_id=session, created_before=before)))
        self.assertNotIn(c.artifact_id, ids(self.pro.list(session_id=session, created_before=b.created)))
        for art in self.pro.list(session_id=session):
            self.assertIsNone(art.page)

    def test_pagination_and_iterator(self) -> None:
        session = sid("page")
        made = [self.pro.push(f"{i}".encode(), f"p{i}.txt", session_id=session).artifact_id for i in range(7)]
        newest_first = list(reversed(made))
        first = self.pro.list(session_id=session, limit=3)
        self.assertEqual(len(first), 3)
        self.assertTrue(first.has_more)
        self.assertIsNotNone(first.next_cursor)
        seen = [a.artifact_id for a in first]
        cursor = first.next_cursor
        while cursor:
            page = self.pro.list(session_id=session, limit=3, cursor=cursor)
            seen += [a.artifact_id for a in page]
            cursor = page.next_cursor
            if not page.has_more:
                self.assertIsNone(page.next_cursor)
        self.assertEqual(seen, newest_first)
        self.assertEqual([a.artifact_id for a in self.pro.iter_artifacts(session_id=session, page_size=2)], newest_first)
        self.assertEqual([a.artifact_id for a in self.pro.iter_artifacts(session_id=session)], newest_first)
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.list(cursor="not-a-cursor!!")
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.list(limit=201)

    def test_download_url_and_download_targets(self) -> None:
        data = os.urandom(2 * 1024 * 1024 + 5)
        art = self.pro.push(data, "dl.bin")
        info = self.pro.download_url(art.artifact_id)
        self.assertEqual(info.expires_in, 3600)
        self.assertEqual(info.size_bytes, len(data))
        self.assertEqual(info.filename, "dl.bin")
        self.assertTrue(info.download_url.startswith(f"http://127.0.0.1:{self.server.content_port}/"))
        # The signed URL works without a key.
        with urllib.request.urlopen(info.download_url) as resp:
            self.assertEqual(resp.read(), data)
        with tempfile.TemporaryDirectory() as tmp:
            into_dir = self.pro.download(art.artifact_id, tmp)
            self.assertEqual(into_dir, os.path.join(tmp, "dl.bin"))
            self.assertEqual(pathlib.Path(into_dir).read_bytes(), data)
            target = pathlib.Path(tmp) / "other.bin"
            self.assertEqual(self.pro.download(art.artifact_id, target), str(target))
            self.assertEqual(target.read_bytes(), data)
            self.assertEqual([n for n in os.listdir(tmp) if n.endswith(".part")], [])
        buf = io.BytesIO()
        self.assertIs(self.pro.download(art.artifact_id, buf), buf)
        self.assertEqual(buf.getvalue(), data)

    def test_download_urls_batch(self) -> None:
        a = self.pro.push(b"batch a", "ba.txt")
        b = self.pro.push(b"batch b", "bb.txt")
        gone = self.pro.push(b"batch gone", "bg.txt")
        self.pro.delete(gone.artifact_id)
        unknown = "art_0000000000000000"
        items = self.pro.download_urls([b.artifact_id, unknown, a.artifact_id, gone.artifact_id])
        self.assertEqual([i.artifact_id for i in items], [b.artifact_id, unknown, a.artifact_id, gone.artifact_id])
        self.assertEqual([i.ok for i in items], [True, False, True, False])
        self.assertEqual(items[0].filename, "bb.txt")
        self.assertEqual(items[0].expires_in, 3600)
        self.assertEqual(items[1].error["code"], "artifact_not_found")
        self.assertEqual(items[3].error, {"code": "artifact_already_deleted", "message": items[3].error["message"], "status": 410})
        with urllib.request.urlopen(items[2].download_url) as resp:
            self.assertEqual(resp.read(), b"batch a")
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.download_urls([])
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.download_urls([a.artifact_id] * 21)

    # -- write -----------------------------------------------------------------------

    def test_delete_and_again(self) -> None:
        art = self.pro.push(b"d", "d.txt")
        res = self.pro.delete(art.artifact_id)
        self.assertEqual(res.artifact_id, art.artifact_id)
        self.assertTrue(res.deleted)
        self.assertIsNotNone(res.deleted_at)
        with self.assertRaises(ArtifactAlreadyDeletedError) as ctx:
            self.pro.delete(art.artifact_id)
        self.assertEqual(ctx.exception.status, 410)
        with self.assertRaises(ArtifactAlreadyDeletedError):
            self.pro.get(art.artifact_id)
        with self.assertRaises(ArtifactAlreadyDeletedError):
            self.pro.download(art.artifact_id)

    def test_create_link(self) -> None:
        art = self.pro.push(b"linked bytes", "l.txt")
        link = self.pro.create_link(art.artifact_id)
        self.assertRegex(link.link_id, r"^lnk_[A-Za-z0-9]{20}$")
        self.assertEqual(link.artifact_id, art.artifact_id)
        from cairn.models import parse_time

        self.assertEqual(parse_time(link.expires_at) - parse_time(link.created_at), dt.timedelta(days=7))
        with urllib.request.urlopen(link.url) as resp:
            self.assertEqual(resp.read(), b"linked bytes")
        short = self.pro.create_link(art.artifact_id, expires_in=3600)
        self.assertEqual(parse_time(short.expires_at) - parse_time(short.created_at), dt.timedelta(hours=1))
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.create_link(art.artifact_id, expires_in=2_592_001)
        days = self.pro.create_link(art.artifact_id, ttl="3d")
        self.assertEqual(parse_time(days.expires_at) - parse_time(days.created_at), dt.timedelta(days=3))
        with self.assertRaises(cairn.InvalidRequestError):
            self.pro.create_link(art.artifact_id, ttl="31d")

    def test_links_and_revoke_link(self) -> None:
        art = self.pro.push(b"revocable bytes", "rv.txt")
        made = [self.pro.create_link(art.artifact_id, expires_in=3600) for _ in range(3)]
        page = self.pro.links(art.artifact_id, limit=2)
        self.assertEqual(len(page.links), 2)
        self.assertTrue(page.has_more)
        self.assertEqual(page.links[0].artifact_id, art.artifact_id)
        every = list(self.pro.iter_links(art.artifact_id, page_size=2))
        self.assertEqual(sorted(l.link_id for l in every), sorted(l.link_id for l in made))
        target = made[1]
        res = self.pro.revoke_link(target.link_id)
        self.assertEqual((res.link_id, res.revoked), (target.link_id, True))
        # Python's own urllib, as a person's download would: the URL is dead at once.
        with self.assertRaises(urllib.error.HTTPError) as ctx:
            urllib.request.urlopen(target.url)
        self.assertEqual(ctx.exception.code, 404)
        self.assertTrue(self.pro.revoke_link(target.link_id).revoked)
        left = {l.link_id for l in self.pro.iter_links(art.artifact_id)}
        self.assertEqual(left, {made[0].link_id, made[2].link_id})
        with urllib.request.urlopen(made[0].url) as resp:
            self.assertEqual(resp.read(), b"revocable bytes")

    # -- sessions --------------------------------------------------------------------

    def test_sessions_and_seal(self) -> None:
        s1, s2 = sid("sess"), sid("sess")
        self.pro.push(b"a", "a.txt", session_id=s1)
        self.pro.push(b"b", "b.txt", session_id=s1)
        self.pro.push(b"c", "c.txt", session_id=s2)
        page = self.pro.sessions(limit=200)
        by_id = {s.session_id: s for s in page}
        self.assertEqual(by_id[s1].artifact_count, 2)
        self.assertFalse(by_id[s1].is_sealed)
        self.assertIsNone(by_id[s1].sealed_at)
        # Most recently active first.
        order = [s.session_id for s in page]
        self.assertLess(order.index(s2), order.index(s1))
        sealed = self.pro.seal(s1)
        self.assertEqual(sealed.session_id, s1)
        self.assertEqual(sealed.status, "sealed")
        self.assertEqual(sealed.artifact_count, 2)
        self.assertEqual(self.pro.seal(s1).sealed_at, sealed.sealed_at)
        with self.assertRaises(SessionSealedError) as ctx:
            self.pro.push(b"late", "late.txt", session_id=s1)
        self.assertEqual(ctx.exception.status, 409)
        again = {s.session_id: s for s in self.pro.iter_sessions(page_size=1)}
        self.assertTrue(again[s1].is_sealed)
        self.assertEqual(again[s1].sealed_at, sealed.sealed_at)
        self.assertIn(s2, again)
        with self.assertRaises(cairn.SessionNotFoundError):
            self.pro.seal(sid("never-used"))

    def test_sessions_pagination(self) -> None:
        made = [sid("pg") for _ in range(4)]
        for s in made:
            self.pro.push(b"x", "x.txt", session_id=s)
        first = self.pro.sessions(limit=2)
        self.assertTrue(first.has_more)
        second = self.pro.sessions(limit=2, cursor=first.next_cursor)
        self.assertEqual([s.session_id for s in first] + [s.session_id for s in second], list(reversed(made)))

    # -- isolation -------------------------------------------------------------------

    def test_other_tenant_sees_nothing(self) -> None:
        session = sid("iso")
        art = self.pro.push(b"private", "p.txt", session_id=session)
        for call in (
            lambda: self.free.get(art.artifact_id),
            lambda: self.free.download_url(art.artifact_id),
            lambda: self.free.download(art.artifact_id),
            lambda: self.free.delete(art.artifact_id),
            lambda: self.free.create_link(art.artifact_id),
        ):
            with self.assertRaises(ArtifactNotFoundError):
                call()
        self.assertEqual(list(self.free.iter_artifacts(session_id=session)), [])
        self.assertNotIn(session, [s.session_id for s in self.free.iter_sessions()])
        self.assertEqual(self.pro.get(art.artifact_id).artifact_id, art.artifact_id)


if __name__ == "__main__":
    unittest.main()
