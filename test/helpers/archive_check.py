"""Opens a Cairn archive with Python's own zipfile or tarfile (clients no one at Cairn wrote) and
checks it against its manifest.json: every entry's bytes hash to the manifest's sha256 and size,
the archive holds exactly the manifest's entries, and every name is one plain, safe file name.
Then it extracts the archive into a fresh folder (tarfile with the 'data' filter) and checks that
only those files, and nothing outside, were written.

Usage: archive_check.py ARCHIVE zip|tar.gz OUT_DIR. Prints one JSON object; exits 1 on a failure.
"""

import hashlib
import json
import os
import sys
import tarfile
import unicodedata
import zipfile

path, fmt, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
problems = []


def unsafe(name):
    if name in ("", ".", "..") or "/" in name or "\\" in name or name.startswith((".", " ")):
        return "path"
    if name.endswith((".", " ")):
        return "trailing dot or space"
    for ch in name:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Zl", "Zp"):
            return "control or format character U+%04X" % ord(ch)
        if ch in '<>:"|?*':
            return "reserved character %r" % ch
    if len(name.encode("utf-8")) > 255:
        return "longer than 255 bytes"
    return None


entries = {}
if fmt == "zip":
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        if bad is not None:
            problems.append("zipfile CRC check failed at %s" % bad)
        infos = z.infolist()
        order = [i.filename for i in infos]
        for i in infos:
            entries[i.filename] = {"data": z.read(i), "time": list(i.date_time)}
        z.extractall(out_dir)
else:
    with tarfile.open(path, "r:gz") as t:
        members = t.getmembers()
        order = [m.name for m in members]
        for m in members:
            if not m.isfile():
                problems.append("%s is not a regular file" % m.name)
                continue
            entries[m.name] = {"data": t.extractfile(m).read(), "time": m.mtime, "mode": m.mode}
        t.extractall(out_dir, filter="data")

if len(order) != len(set(order)):
    problems.append("duplicate entry names")
if order[:1] != ["manifest.json"]:
    problems.append("manifest.json is not the first entry")
manifest = json.loads(entries["manifest.json"]["data"])
listed = [e["path"] for e in manifest["entries"]]
if sorted(listed + ["manifest.json"]) != sorted(order):
    problems.append("entries differ from the manifest: %r vs %r" % (sorted(order), sorted(listed)))
folded = [unicodedata.normalize("NFC", n).lower() for n in order]
if len(folded) != len(set(folded)):
    problems.append("two names differ only in case or normalization")
for name in order:
    why = unsafe(name)
    if why:
        problems.append("unsafe name %r: %s" % (name, why))
for e in manifest["entries"]:
    got = entries.get(e["path"])
    if got is None:
        continue
    if hashlib.sha256(got["data"]).hexdigest() != e["sha256"]:
        problems.append("sha256 of %r differs from the manifest" % e["path"])
    if len(got["data"]) != e["size_bytes"]:
        problems.append("size of %r differs from the manifest" % e["path"])

written = []
for root, dirs, files in os.walk(out_dir):
    for f in files:
        written.append(os.path.relpath(os.path.join(root, f), out_dir))
if sorted(written) != sorted(order):
    problems.append("extraction wrote %r" % sorted(written))

print(json.dumps({
    "problems": problems,
    "names": order,
    "manifest": manifest,
    "times": {n: entries[n]["time"] for n in order},
    "modes": {n: entries[n].get("mode") for n in order},
}))
sys.exit(1 if problems else 0)
