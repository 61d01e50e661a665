"""Drives Cairn's main calls with nothing but Python's standard urllib.request, the way a script
written for the hosted service would: Content-Type: application/json on every call, bodyless
POSTs sent as data=b"" (Content-Length: 0), DELETEs with no body at all.

Reads CAIRN_API_URL and CAIRN_API_KEY; prints one JSON object: each step's status and body.
"""

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

API = os.environ["CAIRN_API_URL"]
KEY = os.environ["CAIRN_API_KEY"]
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json", "Accept": "application/json"}


def call(method, path, body=None, data=None, headers=None):
    if body is not None:
        data = json.dumps(body).encode("utf-8")
    req = urllib.request.Request(API + path, data=data, method=method, headers={**HEADERS, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return {"status": resp.status, "body": json.loads(resp.read() or b"null")}
    except urllib.error.HTTPError as err:
        return {"status": err.code, "body": json.loads(err.read() or b"null")}


def fetch(url, method="GET", data=None, headers=None):
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, resp.read()


out = {}
out["whoami"] = call("GET", "/v1/whoami")
up = call(
    "POST",
    "/v1/artifacts",
    {"filename": "py.txt", "content": "aGVsbG8gZnJvbSB1cmxsaWI=", "session_id": "py-run", "metadata": {"source": "py", "run": 1}},
    headers={"Idempotency-Key": "py-" + "k" * 253},
)
out["upload"] = up
art = up["body"]["artifact_id"]
query = urllib.parse.urlencode([("metadata.source", "py"), ("metadata.run", "1"), ("limit", "10")])
out["list"] = call("GET", "/v1/artifacts?" + query)
out["get"] = call("GET", f"/v1/artifacts/{art}")
url = call("GET", f"/v1/artifacts/{art}/download-url")
out["download_url"] = url
status, data = fetch(url["body"]["download_url"])
out["download"] = {"status": status, "text": data.decode("utf-8")}
out["batch"] = call("POST", "/v1/artifacts/batch/download-urls", {"artifact_ids": [art, "art_0000000000000000"]})
out["link"] = call("POST", f"/v1/artifacts/{art}/links", data=b"")
out["link_ttl"] = call("POST", f"/v1/artifacts/{art}/links", {"ttl": "3d"})
out["filename_as_id"] = call("GET", "/v1/artifacts/py.txt")
ticket = call("POST", "/v1/artifacts/upload-url", {"filename": "py-big.bin", "size_bytes": 5})
out["upload_url"] = ticket
status, _ = fetch(ticket["body"]["upload_url"], "PUT", b"12345", ticket["body"]["upload_headers"])
out["put"] = {"status": status}
out["complete"] = call("POST", f"/v1/artifacts/{ticket['body']['artifact_id']}/complete", data=b"")
out["sessions"] = call("GET", "/v1/sessions?limit=200")
out["seal"] = call("POST", "/v1/sessions/py-run/seal", data=b"")
md = call("POST", "/v1/artifacts", {"filename": "py.md", "content": "IyBweQ=="})
out["publish"] = call("POST", f"/v1/artifacts/{md['body']['artifact_id']}/publish", {"visibility": "unlisted"})
out["unpublish"] = call("DELETE", f"/v1/artifacts/{md['body']['artifact_id']}/publish")
out["delete"] = call("DELETE", f"/v1/artifacts/{art}")
out["delete_again"] = call("DELETE", f"/v1/artifacts/{art}")
out["missing"] = call("GET", "/v1/artifacts/art_0000000000000000")
json.dump(out, sys.stdout)
