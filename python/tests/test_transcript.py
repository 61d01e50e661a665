"""Transcripts: the models read from Claude Code and OpenAI-shaped transcripts, and
``push_transcript`` filling ``model``, ``model_source`` and ``models_used`` against a real server."""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
import unittest

import _server  # noqa: F401  (puts python/ on sys.path)
from _server import ServerTestCase

from cairn.transcript import transcript_models, transcript_models_in_file, with_transcript_models

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "test" / "fixtures"
CLAUDE = FIXTURES / "claude-code-session.jsonl"
OPENAI = FIXTURES / "openai-chat.jsonl"
CLAUDE_MODELS = ("claude-sonnet-4-5-20250929", ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"])


class ReadingTest(unittest.TestCase):
    def test_claude_code(self) -> None:
        text = CLAUDE.read_text()
        self.assertEqual(transcript_models(text), CLAUDE_MODELS)
        self.assertEqual(transcript_models(text.encode()), CLAUDE_MODELS)
        synthetic = json.dumps({"type": "assistant", "message": {"role": "assistant", "model": "<synthetic>"}})
        self.assertEqual(transcript_models(text + synthetic + "\n"), CLAUDE_MODELS)
        self.assertEqual(transcript_models_in_file(CLAUDE), CLAUDE_MODELS)

    def test_openai_shapes(self) -> None:
        records = [json.loads(line) for line in OPENAI.read_text().splitlines()]
        expected = ("gpt-5", ["gpt-5-mini", "gpt-5"])
        self.assertEqual(transcript_models(records), expected)
        self.assertEqual(transcript_models(json.dumps(records, indent=2)), expected)
        self.assertEqual(transcript_models(json.dumps({"messages": records})), expected)
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a.json")
            with open(p, "w") as f:
                json.dump(records, f, indent=2)
            self.assertEqual(transcript_models_in_file(p), expected)

    def test_nothing_recognised(self) -> None:
        self.assertEqual(transcript_models('not json\n{"event":"x","model":"m"}\n{"role":"assistant"'), (None, []))

    def test_metadata_rules(self) -> None:
        self.assertEqual(
            with_transcript_models({}, CLAUDE_MODELS),
            {"models_used": ",".join(CLAUDE_MODELS[1]), "model": CLAUDE_MODELS[0], "model_source": "transcript"},
        )
        self.assertEqual(
            with_transcript_models({"model": "declared"}, CLAUDE_MODELS),
            {"model": "declared", "models_used": ",".join(CLAUDE_MODELS[1])},
        )
        self.assertEqual(
            with_transcript_models({}, CLAUDE_MODELS, declared_model=True), {"models_used": ",".join(CLAUDE_MODELS[1])}
        )
        self.assertEqual(with_transcript_models({"a": 1}, (None, [])), {"a": 1})


class PushTranscriptTest(ServerTestCase):
    def test_a_path_fills_the_models(self) -> None:
        art = self.pro.push_transcript(CLAUDE, "session.jsonl", session_id="py-capture", capture="end")
        self.assertEqual(
            art.metadata,
            {
                "type": "transcript",
                "capture": "end",
                "model": CLAUDE_MODELS[0],
                "model_source": "transcript",
                "models_used": ",".join(CLAUDE_MODELS[1]),
            },
        )
        self.assertEqual(art.content_type, "application/x-ndjson")

    def test_records_and_a_declared_model(self) -> None:
        records = [json.loads(line) for line in OPENAI.read_text().splitlines()]
        read = self.pro.push_transcript(records)
        self.assertEqual(read.metadata["model"], "gpt-5")
        self.assertEqual(read.metadata["model_source"], "transcript")
        self.assertEqual(read.metadata["models_used"], "gpt-5-mini,gpt-5")
        declared = self.pro.push_transcript(records, model="my-agent")
        self.assertEqual(declared.metadata, {"type": "transcript", "model": "my-agent", "models_used": "gpt-5-mini,gpt-5"})
        text = self.pro.push_transcript(OPENAI.read_text(), metadata={"models_used": "mine"})
        self.assertEqual(text.metadata["models_used"], "mine")
        self.assertEqual(text.metadata["model"], "gpt-5")


if __name__ == "__main__":
    unittest.main()
