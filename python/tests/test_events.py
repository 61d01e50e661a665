"""The change feed from Python against the real server: list, iterate, follow, webhooks, verify_webhook."""

from __future__ import annotations

import http.server
import os
import threading
import time
import unittest
from typing import Any, Dict, List

import _server  # noqa: F401
from _server import ServerTestCase

import cairn


class _Receiver(http.server.BaseHTTPRequestHandler):
    received: List[Dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        type(self).received.append({"headers": dict(self.headers.items()), "body": body})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class EventsTest(ServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # The receiver below is on loopback: the operator setting that lets webhooks reach it.
        os.environ["CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = "1"
        try:
            super().setUpClass()
        finally:
            del os.environ["CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"]

    def test_list_iterate_and_follow(self) -> None:
        before = self.pro.list_events(limit=200)
        after = before["events"][-1]["event_id"] if before["events"] else None
        got: List[Dict[str, Any]] = []
        stop = threading.Event()

        def follow() -> None:
            for event in self.pro.follow_events(session_id="py-feed", stop=stop):
                got.append(event)
                if len(got) == 2:
                    stop.set()

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        time.sleep(0.5)
        a = self.pro.push(b"one", "one.txt", session_id="py-feed")
        self.pro.push(b"other", "other.txt", session_id="py-other")
        self.pro.push(b"two", "two.txt", session_id="py-feed")
        thread.join(10)
        self.assertFalse(thread.is_alive())
        self.assertEqual([e["type"] for e in got], ["artifact.created", "artifact.created"])
        self.assertEqual(got[0]["data"]["artifact_id"], a.artifact_id)
        listed = self.pro.list_events(after=after, session_id="py-feed")["events"]
        self.assertEqual([e["event_id"] for e in listed], [e["event_id"] for e in got])
        every = list(self.pro.iter_events(after=after, limit=1))
        self.assertEqual(len(every), 3)
        self.assertEqual([e["type"] for e in self.pro.list_events(types=["session.*"])["events"]], [])

    def test_webhook_delivery_verifies(self) -> None:
        server = http.server.HTTPServer(("127.0.0.1", 0), _Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/hook"
            hook = self.free.create_webhook(url, types=["artifact.created"])
            self.assertTrue(hook["secret"].startswith("whsec_"))
            art = self.free.push(b"hooked", "hooked.txt")
            deadline = time.time() + 10
            while not _Receiver.received and time.time() < deadline:
                time.sleep(0.05)
            self.assertEqual(len(_Receiver.received), 1)
            delivery = _Receiver.received[0]
            event = cairn.verify_webhook(hook["secret"], delivery["headers"], delivery["body"])
            self.assertEqual(event["data"]["artifact_id"], art.artifact_id)
            with self.assertRaises(cairn.WebhookVerificationError):
                cairn.verify_webhook(hook["secret"], delivery["headers"], delivery["body"] + b" ")
            rotated = self.free.rotate_webhook_secret(hook["webhook_id"])
            with self.assertRaises(cairn.WebhookVerificationError):
                cairn.verify_webhook(rotated["secret"], delivery["headers"], delivery["body"])
            self.assertEqual(self.free.get_webhook(hook["webhook_id"])["status"], "active")
            self.assertEqual(len(self.free.list_webhooks()["webhooks"]), 1)
            deliveries = self.free.webhook_deliveries(hook["webhook_id"])["deliveries"]
            self.assertTrue(deliveries and deliveries[0]["delivered"])
            self.assertEqual(self.free.enable_webhook(hook["webhook_id"])["status"], "active")
            self.assertEqual(self.free.delete_webhook(hook["webhook_id"]), {"webhook_id": hook["webhook_id"], "deleted": True})
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    unittest.main()
