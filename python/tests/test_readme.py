"""The examples of python/README.md, run as a reader would copy them."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pathlib
import re
import tempfile
import unittest
from unittest import mock

import _server

README = os.path.join(_server.PYTHON_DIR, "README.md")


def example(heading: str) -> str:
    """The first python block after ``heading``."""
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    section = text.split(heading, 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block in the section {heading!r}"
    return match.group(1)


def transcript_example() -> str:
    return example("## Capturing an agent transcript")


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


class ReadmeResumableTest(_server.ServerTestCase):
    def run_example(self, folder: str) -> str:
        code = example("## Resumable uploads")
        env = {"CAIRN_API_KEY": self.server.keys["py"], "CAIRN_API_URL": self.server.base_url}
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            with mock.patch.dict(os.environ, env), contextlib.redirect_stdout(io.StringIO()) as out:
                exec(compile(code, README, "exec"), {})
        finally:
            os.chdir(cwd)
        return out.getvalue()

    def test_the_example_uploads_and_resumes_what_a_crashed_run_began(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            data = os.urandom(3 * 1024 * 1024 + 17)
            with open(os.path.join(folder, "dataset.tar.gz"), "wb") as fh:
                fh.write(data)
            # A first run that "crashed" after persisting the URL and sending the first 1000 bytes.
            from cairn import Cairn

            crashed = Cairn(api_key=self.server.keys["py"], base_url=self.server.base_url)
            state = os.path.join(folder, "dataset.upload-url")

            def crash(done: int, total: int) -> None:
                if done:
                    raise KeyboardInterrupt

            with self.assertRaises(KeyboardInterrupt):
                crashed.push_resumable(
                    data,
                    "dataset.tar.gz",
                    chunk_size=1000,
                    on_upload_url=pathlib.Path(state).write_text,
                    on_progress=crash,
                )
            url = pathlib.Path(state).read_text()
            out = self.run_example(folder)
            artifact_id, size = out.strip().splitlines()[-1].rsplit(" ", 2)[-2:]
            self.assertTrue(url.endswith("/" + artifact_id))  # the crashed run's upload, finished
            self.assertEqual(int(size), len(data))
            self.assertEqual(hashlib.sha256(self.pro.download(artifact_id)).hexdigest(), hashlib.sha256(data).hexdigest())
            self.assertIn(f"1000/{len(data)} bytes", out.splitlines()[0])  # it began where the crash left off
            self.assertIn(f"{len(data)}/{len(data)} bytes", out)
            self.assertFalse(os.path.exists(state))

            # Again, with nothing saved: a new upload.
            out = self.run_example(folder)
            second = out.strip().splitlines()[-1].rsplit(" ", 2)[-2]
            self.assertNotEqual(second, artifact_id)
            self.assertEqual(self.pro.get(second).metadata, {"kind": "dataset"})


if __name__ == "__main__":
    unittest.main()
