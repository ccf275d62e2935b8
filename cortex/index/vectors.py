"""Storage for embedding vectors: a growable row matrix (held by :class:`~cortex.index.memory_index.MemoryIndex`,
aligned with its documents) and the append-only log that makes new vectors durable between snapshots.

Vectors are expensive to recompute (milliseconds per memory), so unlike the postings they are not rebuilt
from the store on recovery: the snapshot holds the vectors of its documents, and ``vectors.log`` holds every
vector computed since, written *before* the store write of its memory. A memory longer than the model's window
has one vector per window (:class:`Embedded`): the first is its row in the matrix, the others are kept beside
it, and search scores it by its best window. A torn last record (crash while
appending) or damaged record ends the log (each record carries a CRC); a vector whose memory never reached
the store is ignored at load, and so is one made for other content than the memory has (an update whose store
write did not happen).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np

from cortex.files import atomic_writer, open_regular, read_regular

_MAGIC = b"CORTEX-VECTORS 4\n"
#: the format before windows: records without a window number, read as first windows
_MAGIC_3 = b"CORTEX-VECTORS 3\n"
_DIGEST = 8  # bytes of the content digest each record carries


def _no_rows() -> np.ndarray:
    return np.zeros((0, 0), dtype=np.float32)


def _no_owners() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Embedded:
    """The vectors of several texts: ``rows``, one per text (of its first window: all of a text that fits the
    model), and ``extra``, the later windows of the long texts, each with the position of its text in
    ``owner``. A text's relevance to a query is the best cosine among its windows."""

    rows: np.ndarray
    extra: np.ndarray = field(default_factory=_no_rows)
    owner: np.ndarray = field(default_factory=_no_owners)

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, positions: Sequence[int] | np.ndarray) -> "Embedded":
        """The vectors of the texts at ``positions``, in that order."""
        positions = np.asarray(positions, dtype=np.int64)
        if len(self.owner) == 0:
            return Embedded(self.rows[positions])
        new_of = np.full(len(self.rows), -1, dtype=np.int64)
        new_of[positions] = np.arange(len(positions))
        keep = new_of[self.owner] >= 0
        if not keep.any():
            return Embedded(self.rows[positions])
        return Embedded(self.rows[positions], self.extra[keep], new_of[self.owner[keep]])

    def windows(self, k: int) -> np.ndarray:
        """The later windows of text ``k`` (no rows for a short one)."""
        rows: np.ndarray = self.extra[:0] if len(self.owner) == 0 else self.extra[self.owner == k]
        return rows

    @staticmethod
    def join(parts: Sequence["Embedded"]) -> "Embedded":
        """The vectors of the texts of ``parts``, one after the other."""
        if len(parts) == 1:
            return parts[0]
        rows = np.concatenate([p.rows for p in parts])
        extras = [(p.extra, p.owner + offset) for p, offset in
                  zip(parts, np.cumsum([0] + [len(p) for p in parts[:-1]])) if len(p.owner)]
        if not extras:
            return Embedded(rows)
        return Embedded(rows, np.concatenate([e for e, _ in extras]), np.concatenate([o for _, o in extras]))

    @staticmethod
    def of(heads: Sequence[np.ndarray], windows: Sequence[Sequence[np.ndarray]]) -> "Embedded":
        """From each text's first vector and its later windows' vectors."""
        owner = [k for k, later in enumerate(windows) for _ in later]
        if not owner:
            return Embedded(np.stack(heads).astype(np.float32))
        return Embedded(np.stack(heads).astype(np.float32),
                        np.stack([v for later in windows for v in later]).astype(np.float32),
                        np.array(owner, dtype=np.int64))


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
    ``[id length][id][content digest, int64][window, uint8][windows, uint8][float32 * dim][crc32]``: window k
    of the memory's n (window 0 is its row). A memory's vectors count only when all n are there: a group cut
    short (a torn append) is left out, and the memory is embedded again. A log of format 3 (no window numbers:
    each record is a whole memory's vector) is read, and converted when appended to.

    The CRC covers the id and the vector: a record that is torn (crash while appending) or damaged ends the
    log there, so a damaged file never hands out a wrong vector (those memories are embedded again later).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: BinaryIO | None = None
        self._model: str | None = None

    def append(self, model: str, ids: Sequence[str], digests: Sequence[int], vectors: Embedded) -> None:
        """Append vectors made by ``model`` of the contents with these digests
        (:func:`cortex.index.memory_index.content_hash`); a log of another model or format is started afresh."""
        if self._handle is None or self._model != model:
            self.close()
            existing = _read_header(self.path)
            if existing is None or existing[0] != model or existing[1] != vectors.rows.shape[1] or existing[3] != 4:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                header = json.dumps({"model": model, "dim": int(vectors.rows.shape[1])}).encode() + b"\n"
                kept = b""
                if existing is not None and existing[3] == 3 and existing[:2] == (model, vectors.rows.shape[1]):
                    kept = self._converted()  # vectors only this log holds (no snapshot has them yet)
                with atomic_writer(self.path) as fh:
                    fh.write(_MAGIC + header + kept)
            else:
                # a torn or damaged record must not swallow the bytes of the records appended after it
                with open(self.path, "r+b") as fh:
                    fh.truncate(_valid_length(fh.read(), existing[1], existing[2], 4))
            self._handle = open(self.path, "ab")
            self._model = model
        chunks = []
        rows = np.ascontiguousarray(vectors.rows, dtype="<f4")
        extra = np.ascontiguousarray(vectors.extra, dtype="<f4")
        for k, (memory_id, digest, row) in enumerate(zip(ids, digests, rows)):
            later = extra[vectors.owner == k] if len(vectors.owner) else extra[:0]
            chunks += _records_of(memory_id, digest, [row, *later])
        assert self._handle is not None
        self._handle.write(b"".join(chunks))
        self._handle.flush()  # to the OS: survives a crash of this process

    def _converted(self) -> bytes:
        """The records of this format-3 log in format 4 (each one a memory's only window)."""
        found = self.read()
        if found is None:
            return b""
        return b"".join(b"".join(_records_of(i, d, [v])) for i, d, _, _, v in found[1])

    def read(self) -> tuple[str, Iterator[tuple[str, int, int, int, np.ndarray]]] | None:
        """The model and the valid records (id, content digest, window, windows, vector), up to the first torn
        or damaged one, or None when there is no readable log."""
        header = _read_header(self.path)
        if header is None:
            return None
        model, dim, offset, version = header
        try:
            data = read_regular(self.path)
        except OSError:
            return None
        window_bytes = _window_bytes(version)

        def records() -> Iterator[tuple[str, int, int, int, np.ndarray]]:
            for start, size in _records(data, dim, offset, version):
                memory_id = data[start + 1 : start + 1 + size].decode("ascii")
                (digest,) = struct.unpack_from("<q", data, start + 1 + size)
                window, windows = struct.unpack_from("<BB", data, start + 1 + size + _DIGEST) if window_bytes \
                    else (0, 1)
                yield memory_id, digest, window, windows, np.frombuffer(
                    data, dtype="<f4", count=dim, offset=start + 1 + size + _DIGEST + window_bytes)

        return model, records()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self._model = None


def _records_of(memory_id: str, digest: int, windows: Sequence[np.ndarray]) -> list[bytes]:
    """The format-4 records of one memory's vectors (its row first, then its later windows)."""
    head = struct.pack("<B", len(memory_id)) + memory_id.encode("ascii") + struct.pack("<q", digest)
    out = []
    windows = windows[:255]  # the count is one byte (the providers make at most 32)
    for window, vector in enumerate(windows):
        body = head + struct.pack("<BB", window, len(windows)) + np.asarray(vector, dtype="<f4").tobytes()
        out.append(body + struct.pack("<I", zlib.crc32(body)))
    return out


def _window_bytes(version: int) -> int:
    """The bytes a record of this log format spends on its window number and count (none before format 4)."""
    return 2 if version == 4 else 0


def _records(data: bytes, dim: int, offset: int, version: int) -> Iterator[tuple[int, int]]:
    """(start, id length) of each valid record from ``offset``, stopping at the first torn or damaged one."""
    pos, width = offset, dim * 4 + _DIGEST + _window_bytes(version)
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


def _valid_length(data: bytes, dim: int, offset: int, version: int) -> int:
    """The length of ``data`` up to the end of its last valid record."""
    end = offset
    for start, size in _records(data, dim, offset, version):
        end = start + 1 + size + dim * 4 + _DIGEST + _window_bytes(version) + 4
    return end


def _read_header(path: Path) -> tuple[str, int, int, int] | None:
    """(model, dim, offset of the first record, format version) of a vector log, or None."""
    try:
        with open_regular(path) as fh:
            magic = fh.read(len(_MAGIC))
            line = fh.readline(4096)
    except OSError:
        return None
    if magic not in (_MAGIC, _MAGIC_3):
        return None
    try:
        header = json.loads(line)
        return str(header["model"]), int(header["dim"]), len(_MAGIC) + len(line), 4 if magic == _MAGIC else 3
    except (ValueError, KeyError, TypeError):
        return None
