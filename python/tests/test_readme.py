"""The transcript example of python/README.md, run as a reader would copy it."""

from __future__ import annotations

import os
import re
import unittest
from unittest import mock

import _server

README = os.path.join(_server.PYTHON_DIR, "README.md")


def transcript_example() -> str:
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Capturing an agent transcript", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "no python block in the transcript section"
    return match.group(1)


class ReadmeTranscriptTest(_server.ServerTestCase):
    def test_the_example_stores_exactly_one_transcript_even_when_run_twice(self) -> None:
        code = transcript_example()
        env = {"CAIRN_API_KEY": self.server.keys["py"], "CAIRN_API_URL": self.server.base_url}
        with mock.patch.dict(os.environ, env):
            for _ in range(2):
                exec(compile(code, README, "exec"), {})
        stored = list(self.pro.iter_artifacts(session_id="run-2026-11-22-001"))
        self.assertEqual(len(stored), 1)
        self.assertEqual(stored[0].metadata["type"], "transcript")
        self.assertEqual(stored[0].metadata["capture"], "end")
        self.assertEqual(stored[0].content_type, "application/x-ndjson")
        self.assertTrue(self.pro.sessions().sessions[0].is_sealed)


if __name__ == "__main__":
    unittest.main()
