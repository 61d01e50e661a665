"""Retry rules against the real server, through a proxy that injects failures (``_proxy.py``).

Where ``test_retries.py`` scripts every answer, these tests let the real server do the work and
only lose or replace answers, which is what makes the outcomes below observable.
"""

from __future__ import annotations

from typing import List

import _server
from _proxy import FaultProxy

import cairn
from cairn import Cairn


def envelope(code: str, status: int) -> dict:
    return {"error": {"code": code, "message": f"injected {code}", "status": status}}


RATE_LIMITED = {"status": 429, "headers": {"Retry-After": "2"}, "body": envelope("rate_limited", 429)}


class RetryThroughProxyTest(_server.ServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.proxy = FaultProxy(cls.server.base_url).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.proxy.close()
        super().tearDownClass()

    def setUp(self) -> None:
        self.client = Cairn(api_key=self.server.keys["py"], base_url=self.proxy.url, max_retries=3)
        self.sleeps: List[float] = []
        self.client._t._sleep = self.sleeps.append  # record the waits instead of sleeping them
        self.proxy.next()
        self.art = self.pro.push(b"retry target", "target.txt", session_id="proxy")

    def test_create_link_is_retried_after_429_honouring_retry_after(self) -> None:
        self.proxy.next(RATE_LIMITED)
        link = self.client.create_link(self.art.artifact_id)
        self.assertEqual(link.artifact_id, self.art.artifact_id)
        self.assertEqual(len(self.proxy.seen), 2)
        self.assertEqual(self.sleeps, [2.0])

    def test_create_link_is_not_retried_after_a_lost_answer(self) -> None:
        before = self.pro.whoami().active_links
        self.proxy.next({"forward_then": {"status": 502, "body": envelope("server_error", 502)}})
        with self.assertRaises(cairn.ServerError):
            self.client.create_link(self.art.artifact_id)
        self.assertEqual(len(self.proxy.seen), 1)
        # The server did make the link: a retry would have made a second one.
        self.assertEqual(self.pro.whoami().active_links, before + 1)

    def test_unlock_is_retried_after_429(self) -> None:
        page = self.pro.publish(self.art.artifact_id, password="open sesame")
        self.assertEqual(page.access, "password")
        self.proxy.next(RATE_LIMITED)
        token = self.client.unlock_page(page.page_id, "open sesame")
        self.assertTrue(token.content_token)
        self.assertEqual(len(self.proxy.seen), 2)

    def test_delete_whose_answer_was_lost_succeeds_as_already_deleted(self) -> None:
        for lost in ({"reset": True}, {"status": 502, "body": envelope("server_error", 502)}):
            art = self.pro.push(b"doomed", "doomed.txt")
            self.proxy.next({"forward_then": lost})
            result = self.client.delete(art.artifact_id)
            self.assertEqual(len(self.proxy.seen), 2)
            self.assertTrue(result.deleted)
            self.assertTrue(result.already_deleted)
            self.assertIsNone(result.deleted_at)
            self.assertEqual(result.artifact_id, art.artifact_id)
            self.assertEqual(result.to_dict()["already_deleted"], True)
            with self.assertRaises(cairn.ArtifactAlreadyDeletedError):
                self.pro.get(art.artifact_id)

    def test_a_plain_delete_is_not_marked(self) -> None:
        result = self.client.delete(self.art.artifact_id)
        self.assertFalse(result.already_deleted)
        self.assertIsNotNone(result.deleted_at)

    def test_deleting_twice_still_raises_even_after_a_429(self) -> None:
        self.pro.delete(self.art.artifact_id)
        with self.assertRaises(cairn.ArtifactAlreadyDeletedError):
            self.client.delete(self.art.artifact_id)
        # A 429 means the first attempt did nothing, so the 410 after it is the real answer.
        self.proxy.next(RATE_LIMITED)
        with self.assertRaises(cairn.ArtifactAlreadyDeletedError) as ctx:
            self.client.delete(self.art.artifact_id)
        self.assertEqual(len(self.proxy.seen), 2)
        self.assertFalse(ctx.exception.after_uncertain_attempt)


if __name__ == "__main__":
    import unittest

    unittest.main()
