"""The models a transcript names, for the conventional metadata (``model``, ``model_source``,
``models_used``); the same reading as the CLI's ``push --transcript`` and the TypeScript SDK.

Recognised: Claude Code session JSONL (``message.model`` of assistant records; its
``<synthetic>`` placeholder is not a model, and records with ``isSidechain: true`` are a
subagent's) and OpenAI-shaped records (``model`` on an assistant message or a chat completion
response). Lines that are not JSON are skipped.

``model`` is the model of the last main-loop record (a subagent's do not count; when every record
is a subagent's, the last of those) and ``models_used`` every distinct model, sorted: the rule of
the hosted service's capture hook.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

__all__ = ["model_of_record", "transcript_models", "transcript_models_in_file", "with_transcript_models"]

# A whole-document JSON transcript (an array, or {"messages": [...]}) is parsed whole up to this size.
_WHOLE_JSON_MAX_BYTES = 32 * 1024 * 1024


def _name(v: Any) -> Optional[str]:
    if isinstance(v, str) and v.strip() and v != "<synthetic>" and len(v) <= 200:
        return v.strip()
    return None


def model_of_record(r: Any) -> Optional[str]:
    """The model one record names, or None."""
    if not isinstance(r, dict):
        return None
    message = r.get("message")
    if isinstance(message, dict) and (r.get("type") == "assistant" or message.get("role") == "assistant"):
        return _name(message.get("model"))
    if r.get("role") == "assistant" or isinstance(r.get("choices"), list) or r.get("object") == "chat.completion":
        return _name(r.get("model"))
    response = r.get("response")
    if isinstance(response, dict):
        return _name(response.get("model"))
    return None


class _Scanner:
    def __init__(self) -> None:
        self.seen: Dict[str, None] = {}
        self.last_main: Optional[str] = None
        self.last_side: Optional[str] = None

    def record(self, r: Any) -> None:
        m = model_of_record(r)
        if m is None:
            return
        self.seen.setdefault(m, None)
        if isinstance(r, dict) and r.get("isSidechain") is True:
            self.last_side = m
        else:
            self.last_main = m

    def line(self, line: str) -> None:
        t = line.strip()
        if not t.startswith("{"):
            return
        try:
            self.record(json.loads(t))
        except ValueError:
            pass  # not a JSON line: it names no model

    def result(self) -> Tuple[Optional[str], List[str]]:
        return (self.last_main if self.last_main is not None else self.last_side), sorted(self.seen)


def _whole(text: str) -> Optional[List[Any]]:
    t = text.strip()
    if not (t.startswith("[") or t.startswith("{")):
        return None
    try:
        v = json.loads(t)
    except ValueError:
        return None
    if isinstance(v, list):
        return v
    if isinstance(v, dict) and isinstance(v.get("messages"), list):
        return v["messages"]
    return None


def transcript_models(content: Any) -> Tuple[Optional[str], List[str]]:
    """``(last main-loop model, every distinct model sorted)`` of a transcript given as
    records (a list of dicts), NDJSON text or bytes, or a JSON array / ``{"messages": [...]}``."""
    s = _Scanner()
    if isinstance(content, (list, tuple)):
        for r in content:
            s.record(r)
        return s.result()
    text = content.decode("utf-8", "replace") if isinstance(content, (bytes, bytearray)) else str(content)
    records = _whole(text)
    if records is not None:
        for r in records:
            s.record(r)
    else:
        for line in text.split("\n"):
            s.line(line)
    return s.result()


def transcript_models_in_file(path: "os.PathLike[str] | str") -> Tuple[Optional[str], List[str]]:
    """The same, reading a file line by line (memory does not grow with the file)."""
    s = _Scanner()
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            s.line(line)
    found = s.result()
    if found[1] or os.path.getsize(path) > _WHOLE_JSON_MAX_BYTES:
        return found
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        return transcript_models(f.read())


def with_transcript_models(
    metadata: Optional[Mapping[str, Any]], found: Tuple[Optional[str], Iterable[str]], *, declared_model: bool = False
) -> Dict[str, Any]:
    """The metadata with what the transcript says filled in, never over keys the caller set:
    ``models_used`` unless set; ``model`` and ``model_source="transcript"`` unless a model is set
    (a declared model wins and is then not marked as captured)."""
    out: Dict[str, Any] = dict(metadata or {})
    last, used = found[0], list(found[1])
    if last is None or not used:
        return out
    out.setdefault("models_used", ",".join(used))
    if not declared_model and "model" not in out:
        out["model"] = last
        out.setdefault("model_source", "transcript")
    return out
