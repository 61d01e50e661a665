"""Request bodies that stream: raw sources (bytes, a path, a file object) and multipart/form-data.

A body knows its length up front when it can (bytes, a path, a seekable file), so the request
carries a ``Content-Length`` and the file is written in 1 MiB chunks: memory stays flat whatever
the file size. A body whose source can be read again (bytes, a path, a seekable file) is
*replayable*, which is what lets the transport retry it.
"""

from __future__ import annotations

import io
import os
import secrets
from typing import IO, Any, Iterator, List, Optional, Sequence, Tuple, Union

__all__ = ["CHUNK_SIZE", "Source", "MultipartBody", "RawBody", "make_source"]

CHUNK_SIZE = 1024 * 1024


class Source:
    """Bytes to send: ``length`` (or None when unknown), ``replayable``, and ``chunks()``."""

    length: Optional[int] = None
    replayable: bool = True
    name: Optional[str] = None

    def chunks(self) -> Iterator[bytes]:  # pragma: no cover - interface
        raise NotImplementedError

    def range_chunks(self, offset: int, length: int) -> Iterator[bytes]:
        """``length`` bytes from ``offset`` of the source, in blocks of at most 1 MiB.

        For a resumable upload, which sends the file piece by piece from the server's offset.
        Only sources that can seek have it (bytes, a path, a seekable file).
        """
        raise ValueError("a resumable upload needs a source it can seek in (bytes, a path, a seekable file)")


def _blocks(fh: IO[Any], length: int, what: str) -> Iterator[bytes]:
    """Exactly ``length`` bytes of ``fh`` from where it stands, in 1 MiB blocks."""
    left = length
    while left > 0:
        block = fh.read(min(CHUNK_SIZE, left))
        if not block:
            raise IOError(f"{what} shrank while it was being uploaded")
        if isinstance(block, str):
            block = block.encode("utf-8")
        left -= len(block)
        yield block


class _BytesSource(Source):
    def __init__(self, data: Union[bytes, bytearray, memoryview]) -> None:
        self._data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self.length = len(self._data)

    def chunks(self) -> Iterator[bytes]:
        view = memoryview(self._data)
        for start in range(0, len(view), CHUNK_SIZE):
            yield bytes(view[start : start + CHUNK_SIZE])

    def range_chunks(self, offset: int, length: int) -> Iterator[bytes]:
        view = memoryview(self._data)[offset : offset + length]
        for start in range(0, len(view), CHUNK_SIZE):
            yield bytes(view[start : start + CHUNK_SIZE])


class _PathSource(Source):
    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = os.fspath(path)
        st = os.stat(self.path)
        if not os.path.isfile(self.path):
            raise ValueError(f"{self.path!r} is not a regular file")
        self.length = st.st_size
        self.name = os.path.basename(self.path)

    def chunks(self) -> Iterator[bytes]:
        sent = 0
        with open(self.path, "rb") as fh:
            while sent < (self.length or 0):
                block = fh.read(min(CHUNK_SIZE, (self.length or 0) - sent))
                if not block:
                    raise IOError(f"{self.path} shrank while it was being uploaded")
                sent += len(block)
                yield block

    def range_chunks(self, offset: int, length: int) -> Iterator[bytes]:
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            yield from _blocks(fh, length, self.path)


class _FileSource(Source):
    def __init__(self, fileobj: IO[Any]) -> None:
        self._f = fileobj
        raw_name = getattr(fileobj, "name", None)
        self.name = os.path.basename(raw_name) if isinstance(raw_name, str) and raw_name and not raw_name.startswith("<") else None
        self._start: Optional[int] = None
        self._used = False
        self.replayable = False
        self.length = None
        try:
            if fileobj.seekable() and not isinstance(fileobj, io.TextIOBase):
                start = fileobj.tell()
                end = fileobj.seek(0, io.SEEK_END)
                fileobj.seek(start)
                self._start, self.length, self.replayable = start, end - start, True
        except (AttributeError, OSError, ValueError):
            pass

    def chunks(self) -> Iterator[bytes]:
        if self._start is not None:
            self._f.seek(self._start)
        elif self._used:
            raise IOError("this file object was already consumed and cannot be read again")
        self._used = True
        sent = 0
        while True:
            want = CHUNK_SIZE if self.length is None else min(CHUNK_SIZE, self.length - sent)
            if want <= 0:
                return
            block = self._f.read(want)
            if not block:
                if self.length is not None and sent < self.length:
                    raise IOError("the file shrank while it was being uploaded")
                return
            if isinstance(block, str):
                block = block.encode("utf-8")
            sent += len(block)
            yield block

    def range_chunks(self, offset: int, length: int) -> Iterator[bytes]:
        if self._start is None:
            return super().range_chunks(offset, length)
        self._f.seek(self._start + offset)
        return _blocks(self._f, length, "the file")


def make_source(data: Any = None, path: Any = None) -> Source:
    """bytes/bytearray/memoryview, str (UTF-8 text), os.PathLike (a file path) or a file object."""
    if path is not None:
        if data is not None:
            raise TypeError("pass either content or path=, not both")
        return _PathSource(path)
    if isinstance(data, Source):
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _BytesSource(data)
    if isinstance(data, str):
        return _BytesSource(data.encode("utf-8"))
    if isinstance(data, os.PathLike):
        return _PathSource(data)
    if hasattr(data, "read"):
        return _FileSource(data)
    raise TypeError(
        "content must be bytes, str (text), a path (pathlib.Path, or path=...) or a binary file object, "
        f"not {type(data).__name__}"
    )


class RawBody:
    """A body that is just the source's bytes (presigned PUT)."""

    def __init__(self, source: Source, content_type: Optional[str] = None) -> None:
        self.source = source
        self.content_type = content_type
        self.length = source.length
        self.replayable = source.replayable

    def chunks(self) -> Iterator[bytes]:
        return self.source.chunks()


def _quote(value: str) -> str:
    # What browsers do in a Content-Disposition parameter: escape the quote and line breaks.
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


class MultipartBody:
    """multipart/form-data: text fields first, then the one ``file`` part, streamed."""

    def __init__(
        self,
        fields: Sequence[Tuple[str, str]],
        source: Source,
        filename: str,
        part_content_type: str = "application/octet-stream",
        file_field: str = "file",
    ) -> None:
        self.boundary = "cairn-" + secrets.token_hex(16)
        self.source = source
        b = self.boundary.encode("ascii")
        head: List[bytes] = []
        for name, value in fields:
            head.append(
                b"--" + b + b"\r\n"
                + f'Content-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'.encode("utf-8")
                + value.encode("utf-8")
                + b"\r\n"
            )
        head.append(
            b"--" + b + b"\r\n"
            + f'Content-Disposition: form-data; name="{_quote(file_field)}"; filename="{_quote(filename)}"\r\n'.encode("utf-8")
            + f"Content-Type: {part_content_type}\r\n\r\n".encode("latin-1")
        )
        self._head = b"".join(head)
        self._tail = b"\r\n--" + b + b"--\r\n"
        self.content_type = f"multipart/form-data; boundary={self.boundary}"
        self.length = None if source.length is None else len(self._head) + source.length + len(self._tail)
        self.replayable = source.replayable

    def chunks(self) -> Iterator[bytes]:
        yield self._head
        for block in self.source.chunks():
            yield block
        yield self._tail
