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
CLAUDE_MODELS = ("claude-sonnet-4-5-20250929", ["claude-opus-4-1-20250805", "claude-sonnet-4-5-20250929"])
# Its last assistant records are a subagent's (isSidechain) and a <synthetic> one.
SUBAGENT = FIXTURES / "claude-code-subagent-last.jsonl"
SUBAGENT_MODELS = ("claude-opus-4-5-20251101", ["claude-haiku-4-5-20251001", "claude-opus-4-5-20251101"])
SUBAGENT_METADATA = {
    "type": "transcript",
    "model": SUBAGENT_MODELS[0],
    "model_source": "transcript",
    "models_used": ",".join(SUBAGENT_MODELS[1]),
}


class ReadingTest(unittest.TestCase):
    def test_claude_code(self) -> None:
        text = CLAUDE.read_text()
        self.assertEqual(transcript_models(text), CLAUDE_MODELS)
        self.assertEqual(transcript_models(text.encode()), CLAUDE_MODELS)
        synthetic = json.dumps({"type": "assistant", "message": {"role": "assistant", "model": "<synthetic>"}})
        self.assertEqual(transcript_models(text + synthetic + "\n"), CLAUDE_MODELS)
        self.assertEqual(transcript_models_in_file(CLAUDE), CLAUDE_MODELS)

    def test_the_last_main_loop_model_and_models_sorted(self) -> None:
        self.assertEqual(transcript_models(SUBAGENT.read_text()), SUBAGENT_MODELS)
        self.assertEqual(transcript_models_in_file(SUBAGENT), SUBAGENT_MODELS)
        side = {"type": "assistant", "isSidechain": True, "message": {"role": "assistant", "model": "sub"}}
        self.assertEqual(transcript_models([side]), ("sub", ["sub"]))

    def test_openai_shapes(self) -> None:
        records = [json.loads(line) for line in OPENAI.read_text().splitlines()]
        expected = ("gpt-5", ["gpt-5", "gpt-5-mini"])
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
        self.assertEqual(read.metadata["models_used"], "gpt-5,gpt-5-mini")
        declared = self.pro.push_transcript(records, model="my-agent")
        self.assertEqual(declared.metadata, {"type": "transcript", "model": "my-agent", "models_used": "gpt-5,gpt-5-mini"})
        text = self.pro.push_transcript(OPENAI.read_text(), metadata={"models_used": "mine"})
        self.assertEqual(text.metadata["models_used"], "mine")
        self.assertEqual(text.metadata["model"], "gpt-5")


class WordsAndReservationsTest(ServerTestCase):
    """``transcript=True`` reads the models on every upload method; a presigned reservation is found
    again by its key and seen pending by its owner."""

    def test_push_push_resumable_and_push_large(self) -> None:
        text = SUBAGENT.read_text()
        self.assertEqual(self.pro.push(text, "a.jsonl", transcript=True).metadata, SUBAGENT_METADATA)
        self.assertEqual(self.pro.push(path=str(SUBAGENT), transcript=True).metadata, SUBAGENT_METADATA)
        self.assertEqual(self.pro.push(SUBAGENT, transcript=True).metadata, SUBAGENT_METADATA)
        self.assertEqual(self.pro.push_resumable(path=SUBAGENT, transcript=True).metadata, SUBAGENT_METADATA)
        self.assertEqual(self.pro.push_large(path=SUBAGENT, transcript=True).metadata, SUBAGENT_METADATA)
        declared = self.pro.push(text, "b.jsonl", transcript=True, model="mine")
        self.assertEqual(
            declared.metadata, {"type": "transcript", "model": "mine", "models_used": SUBAGENT_METADATA["models_used"]}
        )
        self.assertEqual(self.pro.push(text, "c.jsonl").metadata, {})

    def test_request_upload_url_with_a_key_and_the_pending_record(self) -> None:
        first = self.pro.request_upload_url("big.bin", 10, idempotency_key="py-reserve-1")
        again = self.pro.request_upload_url("big.bin", 10, idempotency_key="py-reserve-1")
        self.assertEqual(again.artifact_id, first.artifact_id)
        pending = self.pro.get(first.artifact_id)
        self.assertEqual(pending.status, "pending")
        self.assertTrue(pending.held_until)
        self.pro.upload_to_ticket(again, b"0123456789")
        done = self.pro.complete_upload(first.artifact_id)
        self.assertIsNone(done.status)
        self.assertIsNone(self.pro.get(first.artifact_id).held_until)


if __name__ == "__main__":
    unittest.main()
