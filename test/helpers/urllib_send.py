"""Sends one request with Python's standard urllib.request, which writes the whole body before it
reads the answer (as many scripts do), and prints what it got as JSON: {"status", "body"}, or
{"error"} when it got no answer (a reset connection, a broken pipe).

Reads the request from stdin as JSON: {"method", "url", "headers", "body_file"}.
"""

import json
import sys
import urllib.error
import urllib.request

spec = json.load(sys.stdin)
with open(spec["body_file"], "rb") as f:
    data = f.read()
req = urllib.request.Request(spec["url"], data=data, method=spec["method"], headers=spec.get("headers", {}))
try:
    with urllib.request.urlopen(req, timeout=60) as resp:
        out = {"status": resp.status, "body": resp.read().decode("utf-8", "replace")}
except urllib.error.HTTPError as err:
    out = {"status": err.code, "body": err.read().decode("utf-8", "replace")}
except Exception as err:  # noqa: BLE001 - the failure is the result
    reason = getattr(err, "reason", err)
    out = {"error": f"{type(reason).__name__}: {reason}"}
json.dump(out, sys.stdout)
