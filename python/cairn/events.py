"""The change feed from Python: following ``GET /v1/events/stream`` and verifying webhook deliveries.

Standard library only, like the rest of the package."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Union

from .transport import _encode_query as encode_query
from .errors import CairnConnectionError, CairnError, error_from_response


class WebhookVerificationError(CairnError):
    """A webhook delivery whose signature or timestamp does not check out."""


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: Union[str, bytes],
    *,
    tolerance_seconds: int = 300,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """Checks a delivery as the Standard Webhooks specification says and returns its event.

    One of the ``webhook-signature`` entries must be ``v1,`` + base64 HMAC-SHA256 of
    ``{webhook-id}.{webhook-timestamp}.{body}`` keyed with the secret's bytes, and the timestamp
    within ``tolerance_seconds`` of now. Pass the body exactly as received.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id = lower.get("webhook-id", "")
    stamp = lower.get("webhook-timestamp", "")
    signatures = lower.get("webhook-signature", "")
    if not msg_id or not stamp.isdigit() or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature", code="invalid_signature")
    current = time.time() if now is None else now
    if abs(current - int(stamp)) > tolerance_seconds:
        raise WebhookVerificationError("the webhook timestamp is too old or too new", code="invalid_signature")
    text = body if isinstance(body, str) else body.decode("utf-8")
    key = base64.b64decode(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
    expected = hmac.new(key, f"{msg_id}.{stamp}.{text}".encode("utf-8"), hashlib.sha256).digest()
    for entry in signatures.split(" "):
        version, _, value = entry.partition(",")
        if version == "v1" and value:
            try:
                given = base64.b64decode(value)
            except ValueError:
                continue
            if hmac.compare_digest(given, expected):
                return json.loads(text)
    raise WebhookVerificationError("no signature matches this secret", code="invalid_signature")


def _messages(raw: Any) -> Iterator[Dict[str, Optional[str]]]:
    """The messages of a text/event-stream response: each id, with its data when it has any."""
    data: List[str] = []
    msg_id: Optional[str] = None
    while True:
        line_bytes = raw.readline()
        if not line_bytes:
            return
        line = line_bytes.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data or msg_id is not None:
                yield {"id": msg_id, "data": "\n".join(data) if data else None}
            data, msg_id = [], None
        elif line.startswith("data:"):
            data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
        elif line.startswith("id:"):
            msg_id = line[3:].strip()


def follow_events(
    transport: Any,
    *,
    after: Optional[str] = None,
    types: Optional[List[str]] = None,
    session_id: Optional[str] = None,
    stop: Optional[Any] = None,
) -> Iterator[Dict[str, Any]]:
    """Yields events as they happen, reconnecting with ``Last-Event-ID`` after a dropped stream.

    ``stop``: an object with ``is_set()`` (a ``threading.Event``) checked between messages.
    """
    last = after
    failures = 0
    while not (stop is not None and stop.is_set()):
        query = [("types", ",".join(types) if types else None), ("session_id", session_id), ("after", last)]
        url = transport.base_url + "/v1/events/stream"
        q = encode_query(query)
        if q:
            url += "?" + q
        conn, target = transport._connect(url)
        try:
            headers = {
                "User-Agent": transport.user_agent,
                "Accept": "text/event-stream",
                "Authorization": f"Bearer {transport.api_key}",
            }
            if last:
                headers["Last-Event-ID"] = last
            conn.request("GET", target, headers=headers)
            resp = conn.getresponse()
            if resp.status != 200:
                err = error_from_response(resp.status, resp.read(), dict(resp.getheaders()))
                if 400 <= resp.status < 500 and resp.status != 429:
                    raise err
                failures += 1
            else:
                failures = 0
                for message in _messages(resp):
                    if message["id"]:
                        last = message["id"]
                    if message["data"] is not None:
                        yield json.loads(message["data"])
                    if stop is not None and stop.is_set():
                        return
        except (OSError, CairnConnectionError):
            failures += 1
        finally:
            conn.close()
        if stop is not None and stop.is_set():
            return
        time.sleep(0.5 if failures == 0 else min(30.0, 0.5 * 2**failures))
