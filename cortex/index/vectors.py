"""Storage for embedding vectors: a growable row matrix (held by :class:`~cortex.index.memory_index.MemoryIndex`,
aligned with its documents) and the append-only log that makes new vectors durable between snapshots.

Vectors are expensive to recompute (milliseconds per memory), so unlike the postings they are not rebuilt
from the store on recovery: the snapshot holds the vectors of its documents, and ``vectors.log`` holds every
vector computed since, written *before* the store write of its memory. A torn last record (crash while
appending) or damaged record ends the log (each record carries a CRC); a vector whose memory never reached
the store is ignored at load, and so is one made for other content than the memory has (an update whose store
write did not happen).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np

from cortex.files import open_regular, read_regular

_MAGIC = b"CORTEX-VECTORS 3\n"
_DIGEST = 8  # bytes of the content digest each record carries


class Rows:
    """A growable float32 matrix of fixed width (amortised O(1) row appends, zero-copy view)."""

    __slots__ = ("a", "n")

    a: np.ndarray

    def __init__(self, dim: int, data: np.ndarray | None = None) -> None:
        rows = 0 if data is None else len(data)
        if data is not None and rows and data.dtype == np.float32 and data.flags.c_contiguous \
                and data.flags.writeable and data.shape[1:] == (dim,):
            self.a = data  # a freshly loaded array is taken as it is (no copy of ~15 MB per 10k vectors)
        else:
            self.a = np.zeros((max(64, rows), dim), dtype=np.float32)
            if data is not None:
                self.a[:rows] = data
        self.n = rows

    @property
    def dim(self) -> int:
        return int(self.a.shape[1])

    def append(self, row: np.ndarray | None) -> None:
        """Append ``row`` (zeros for None)."""
        if self.n == len(self.a):
            grown = np.zeros((max(64, len(self.a) * 2), self.dim), dtype=np.float32)
            grown[: self.n] = self.a[: self.n]
            self.a = grown
        self.a[self.n] = 0.0 if row is None else row
        self.n += 1

    def extend_to(self, n: int) -> None:
        """Append zero rows until there are ``n``."""
        while self.n < n:
            self.append(None)

    @property
    def view(self) -> np.ndarray:
        return self.a[: self.n]


class VectorLog:
    """``vectors.log``: a header naming the model, then records
    ``[id length][id][content digest, int64][float32 * dim][crc32]``.

    The CRC covers the id and the vector: a record that is torn (crash while appending) or damaged ends the
    log there, so a damaged file never hands out a wrong vector (those memories are embedded again later).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: BinaryIO | None = None
        self._model: str | None = None

    def append(self, model: str, ids: Sequence[str], digests: Sequence[int], vectors: np.ndarray) -> None:
        """Append vectors made by ``model`` of the contents with these digests
        (:func:`cortex.index.memory_index.content_hash`); a log of another model is started afresh."""
        if self._handle is None or self._model != model:
            self.close()
            existing = _read_header(self.path)
            if existing is None or existing[0] != model or existing[1] != vectors.shape[1]:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                header = json.dumps({"model": model, "dim": int(vectors.shape[1])}).encode() + b"\n"
                self.path.write_bytes(_MAGIC + header)
            else:
                # a torn or damaged record must not swallow the bytes of the records appended after it
                with open(self.path, "r+b") as fh:
                    fh.truncate(_valid_length(fh.read(), existing[1], existing[2]))
            self._handle = open(self.path, "ab")
            self._model = model
        chunks = []
        rows = np.ascontiguousarray(vectors, dtype="<f4")
        for memory_id, digest, row in zip(ids, digests, rows):
            body = struct.pack("<B", len(memory_id)) + memory_id.encode("ascii") + struct.pack("<q", digest) \
                + row.tobytes()
            chunks.append(body + struct.pack("<I", zlib.crc32(body)))
        assert self._handle is not None
        self._handle.write(b"".join(chunks))
        self._handle.flush()  # to the OS: survives a crash of this process

    def read(self) -> tuple[str, Iterator[tuple[str, int, np.ndarray]]] | None:
        """The model and the valid records (id, content digest, vector), up to the first torn or damaged one,
        or None when there is no readable log."""
        header = _read_header(self.path)
        if header is None:
            return None
        model, dim, offset = header
        try:
            data = read_regular(self.path)
        except OSError:
            return None

        def records() -> Iterator[tuple[str, int, np.ndarray]]:
            for start, size in _records(data, dim, offset):
                memory_id = data[start + 1 : start + 1 + size].decode("ascii")
                (digest,) = struct.unpack_from("<q", data, start + 1 + size)
                yield memory_id, digest, np.frombuffer(data, dtype="<f4", count=dim, offset=start + 1 + size + _DIGEST)

        return model, records()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self._model = None


def _records(data: bytes, dim: int, offset: int) -> Iterator[tuple[int, int]]:
    """(start, id length) of each valid record from ``offset``, stopping at the first torn or damaged one."""
    pos, width = offset, dim * 4 + _DIGEST
    while pos < len(data):
        size = data[pos]
        end = pos + 1 + size + width
        if end + 4 > len(data):
            return
        (crc,) = struct.unpack_from("<I", data, end)
        if crc != zlib.crc32(data[pos:end]) or not all(48 <= c < 123 for c in data[pos + 1 : pos + 1 + size]):
            return
        yield pos, size
        pos = end + 4


def _valid_length(data: bytes, dim: int, offset: int) -> int:
    """The length of ``data`` up to the end of its last valid record."""
    end = offset
    for start, size in _records(data, dim, offset):
        end = start + 1 + size + dim * 4 + _DIGEST + 4
    return end


def _read_header(path: Path) -> tuple[str, int, int] | None:
    try:
        with open_regular(path) as fh:
            if fh.read(len(_MAGIC)) != _MAGIC:
                return None
            line = fh.readline(4096)
    except OSError:
        return None
    try:
        header = json.loads(line)
        return str(header["model"]), int(header["dim"]), len(_MAGIC) + len(line)
    except (ValueError, KeyError, TypeError):
        return None
