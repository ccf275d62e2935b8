"""Snapshots of a :class:`~cortex.index.memory_index.MemoryIndex`: one ``.npz`` file written atomically, read
back only when every part of it checks out (else the index is rebuilt), and the vectors an older one carries."""

from __future__ import annotations

import io
import json
import logging
import mmap
import re
import struct
import unicodedata
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO, Self

import numpy as np

from cortex.files import atomic_writer, open_regular, read_regular
from cortex.index import ann
from cortex.index.index_vectors import CarriedVectors
from cortex.index.layout import COLUMNS, TYPE_CODES, IndexData
from cortex.index.lists import PostingLists, Vec
from cortex.index.texts import Texts
from cortex.index.vectors import Embedded, Rows

log = logging.getLogger("cortex.index")

#: Bumped whenever the snapshot layout or the normalisation changes; older snapshots are rebuilt.
FORMAT_VERSION = 11


class Snapshots(IndexData):
    """Saving and loading an index (a base of :class:`~cortex.index.memory_index.MemoryIndex`)."""

    def save(self, path: Path, *, build_graph: bool = True) -> None:
        """Write a snapshot (merging first) atomically: a temporary file renamed over ``path``. Without
        ``build_graph`` the vector graph is only extended, never built anew (a build of a large scope takes
        minutes: a writer's running checkpoint must not hold readers that long; exact search serves meanwhile)."""
        self.merge()
        arrays: dict[str, np.ndarray] = {
            "version": np.array([FORMAT_VERSION]),
            "unicode": np.frombuffer(unicodedata.unidata_version.encode(), dtype=np.uint8),
            "foreign": np.array([self.foreign]),
            "seq": np.array([self.seq], dtype=np.int64),
            "token": _text_array([self.token]),
            "ids": _text_array(self.ids),
            "projects": _text_array(self.projects),
            **{f"col_{name}": vec.view for name, vec in self.cols.items()},
            **self.texts.arrays("texts_"), **self.raw.arrays("raw_", searchable=True),
            **self.terms.arrays("terms_"), **self.tag_lists.arrays("tags_"),
            "extras": np.frombuffer(json.dumps(self.extras, ensure_ascii=False).encode("utf-8", "surrogatepass"),
                                    dtype=np.uint8),
            **self._vector_arrays(),
        }
        graph = self._graph_arrays(path.parent, build_graph)  # its file first: the snapshot names it
        with atomic_writer(path) as fh:
            _write_npz(fh, {**arrays, **graph})
        ann.remove_others(path.parent, graph["ann_file"].tobytes().decode("ascii") if graph else None)

    def _graph_arrays(self, directory: Path, build: bool = True) -> dict[str, np.ndarray]:
        """Build or extend the vector graph of a large scope (:mod:`cortex.index.ann`), write its file, and
        return what the snapshot records of it; nothing for a small scope (or when that fails: exact search)."""
        if self.vectors is None or not ann.available() or \
                int(np.count_nonzero(self.has_vector.view & self.alive.view)) < ann.MIN_VECTORS:
            self.ann = None
            return {}
        has = self.has_vector.view & self.alive.view
        try:
            graph = self.ann
            if graph is not None and graph.dim == self.vectors.dim and not graph.failed \
                    and graph.dead_share() <= ann.MAX_DEAD:
                try:
                    graph.sync(self.vectors.view, has)
                    return graph.arrays(directory)
                except ValueError:  # its file went bad: built again below
                    pass
            if not build:
                self.ann = None
                return {}
            self.ann = ann.build(self.vectors.view, has)
            return self.ann.arrays(directory)
        except (OSError, ValueError, RuntimeError) as exc:
            log.warning("cannot build the vector graph in %s (%s): exact search", directory, exc)
            self.ann = None
            return {}

    def _vector_arrays(self) -> dict[str, np.ndarray]:
        if self.vectors is None or self.vector_model is None:
            return {}
        arrays = {"vector_model": _text_array([self.vector_model]), "vectors": self.vectors.view,
                  "has_vector": self.has_vector.view}
        if self.windows is not None:
            kept = np.flatnonzero(self.window_doc.view >= 0)
            arrays.update(windows=self.windows.view[kept], window_doc=self.window_doc.view[kept])
        return arrays

    @staticmethod
    def read_vectors(path: Path) -> "CarriedVectors | None":
        """The vectors of a snapshot of any format version that holds them with the content digests (an index
        of an older Cortex is rebuilt, but its vectors, costly to compute, are kept); None when there are none."""
        try:
            with np.load(io.BytesIO(read_regular(path)), allow_pickle=False) as data:
                if "vectors" not in data.files or "col_content_hash" not in data.files:
                    return None
                ids, digests = _strings(data["ids"]), data["col_content_hash"]
                vectors, has = data["vectors"], data["has_vector"].astype(bool)
                model = _strings(data["vector_model"])[0]
                windows = (data["windows"], data["window_doc"]) if "windows" in data.files else None
        except Exception:  # noqa: BLE001 - an unreadable file has nothing to carry
            return None
        if not (len(ids) == len(digests) == len(vectors) == len(has)) or not np.isfinite(vectors).all():
            return None
        docs = np.flatnonzero(has)
        fit = windows is not None and _windows_fit(windows[0], windows[1], vectors.shape[1], len(ids))
        every = Embedded(vectors, *windows) if windows is not None and fit else Embedded(vectors)
        return CarriedVectors(model, [ids[d] for d in docs], digests[docs], every.take(docs))

    @classmethod
    def load(cls, path: Path) -> Self | None:
        """Read a snapshot; None when it is missing, unreadable, damaged (every member is checked against its
        CRC and the arrays against each other) or of another format version."""
        try:
            with open_regular(path) as fh:
                arrays = _read_npz(fh)
            if int(arrays["version"][0]) != FORMAT_VERSION:
                return None
            # normalisation depends on the Unicode tables: another version may split words differently
            if arrays["unicode"].tobytes().decode() != unicodedata.unidata_version:
                return None
            index = cls._from_arrays(arrays)
            if index is not None and index.vectors is not None:
                index.ann = ann.AnnGraph.from_arrays(arrays, path.parent, len(index.ids))
                if index.ann is not None and index.ann.dim != index.vectors.dim:
                    index.ann = None
        except Exception:  # noqa: BLE001 - whatever is wrong with a derived file, the answer is a rebuild
            return None
        return index if index is not None and index._consistent() else None

    @classmethod
    def _from_arrays(cls, arrays: dict[str, np.ndarray]) -> Self | None:
        index = cls()
        index.foreign = int(arrays["foreign"][0])
        index.seq = int(arrays["seq"][0])
        index.token = (_strings(arrays["token"]) or [""])[0]
        index.ids = _strings(arrays["ids"])
        index.projects = _strings(arrays["projects"])
        index.project_code = {p: i for i, p in enumerate(index.projects)}
        n = len(index.ids)
        for name, dtype in COLUMNS.items():
            column = arrays.get(f"col_{name}")
            if column is None or len(column) != n:
                return None
            index.cols[name] = Vec.wrap(column.astype(dtype, copy=False))
        index.alive = Vec(np.bool_, np.ones(n, dtype=bool))
        index.has_vector = Vec(np.bool_, np.zeros(n, dtype=bool))
        if "vectors" in arrays:
            if len(arrays["vectors"]) != n or len(arrays["has_vector"]) != n:
                return None
            index.vector_model = _strings(arrays["vector_model"])[0]
            index.vectors = Rows(arrays["vectors"].shape[1], arrays["vectors"])
            index.has_vector = Vec(np.bool_, arrays["has_vector"])
            if "windows" in arrays:
                if not _windows_fit(arrays["windows"], arrays["window_doc"], index.vectors.dim, n):
                    return None
                index.windows = Rows(index.vectors.dim, arrays["windows"])
                index.window_doc = Vec(np.int64, arrays["window_doc"])
        index._doc_of = None  # built on first use (see IndexData.doc_of)
        texts = Texts.from_arrays(arrays, "texts_", n)
        if texts is None:
            return None
        index.texts = texts
        raw = PostingLists.from_arrays(arrays, "raw_")
        terms = PostingLists.from_arrays(arrays, "terms_")
        tags = PostingLists.from_arrays(arrays, "tags_")
        if raw is None or terms is None or tags is None:
            return None
        index.raw, index.terms, index.tag_lists = raw, terms, tags
        extras = json.loads(arrays["extras"].tobytes().decode("utf-8"))
        if not isinstance(extras, dict) or (extras and not set(extras).issubset(index.ids)):
            return None
        index.extras = extras
        index._replaced = None
        return index

    def _consistent(self) -> bool:
        """Whether the arrays of a loaded snapshot fit together (a damaged file that still parses does not)."""
        n = len(self.ids)
        if len(self.texts) != n or self.seq < 0 or self.foreign < 0:
            return False
        if n and (int(self.col("type_code").min()) < 0 or int(self.col("type_code").max()) >= len(TYPE_CODES)):
            return False
        if n and (int(self.col("project").min()) < 0 or int(self.col("project").max()) >= len(self.projects)):
            return False
        for lists in (self.raw, self.terms, self.tag_lists):
            if not lists.consistent(n):
                return False
        return self.vectors is None or bool(np.isfinite(self.vectors.view).all()) and (
            self.windows is None or bool(np.isfinite(self.windows.view).all()))


def _windows_fit(windows: np.ndarray, owners: np.ndarray, dim: int, n: int) -> bool:
    """Whether a snapshot's later windows fit its documents."""
    return windows.ndim == 2 and windows.shape[1] == dim and len(owners) == len(windows) and (
        len(owners) == 0 or (int(owners.min()) >= 0 and int(owners.max()) < n))


#: Each member's array data starts at a multiple of this in the file (so the arrays read in place are aligned).
_ALIGN = 64
_PAD_FIELD = 0xD935  # the zip extra-field id of alignment padding (zipalign's); readers skip it


def _write_npz(fh: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    """What :func:`numpy.savez` writes (``np.load`` reads it), with every array's data aligned for
    :func:`_read_npz`: each member's local header carries a padding field."""
    with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            # local header (30) + name + this field's own header (4) + zip64 field (20, forced below); the
            # .npy header that follows is a multiple of 64 bytes long
            start = fh.tell() + 30 + len(info.filename.encode("utf-8")) + 4 + 20
            pad = -start % _ALIGN
            info.extra = struct.pack("<HH", _PAD_FIELD, pad) + bytes(pad)
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def _read_npz(fh: BinaryIO) -> dict[str, np.ndarray]:
    """Every array of an uncompressed ``.npz`` (what :func:`numpy.savez` and :func:`_write_npz` write), viewed in
    place in a private copy-on-write mapping of the file: no copy, and the pages come from the page cache
    (``np.load`` copies each member through zipfile in chunks into fresh memory: 3-10x the time at 100k
    memories). The arrays are writable; writes stay in this process. Each member's CRC is checked; ``ValueError``
    for anything that is not such a file. The file must not be changed in place while mapped: Cortex replaces it
    by a rename, never rewrites it."""
    buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    view = memoryview(buf)
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(fh) as archive:  # reads the central directory only
        infos = archive.infolist()
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
            raise ValueError(f"unexpected member {info.filename!r}")
        start = info.header_offset
        name_len, extra_len = struct.unpack_from("<HH", view, start + 26)
        if bytes(view[start:start + 4]) != b"PK\x03\x04":
            raise ValueError("bad local header")
        data = start + 30 + name_len + extra_len
        member = view[data:data + info.file_size]
        if len(member) != info.file_size or zlib.crc32(member) != info.CRC:
            raise ValueError(f"member {info.filename!r} is damaged")
        shape, dtype, skip = _npy_header(member)
        if dtype.hasobject:
            raise ValueError(f"member {info.filename!r} holds objects")
        count = int(np.prod(shape, dtype=np.int64))
        if skip + count * dtype.itemsize != len(member):
            raise ValueError(f"member {info.filename!r} has the wrong size")
        array = np.frombuffer(buf, dtype=dtype, count=count, offset=data + skip).reshape(shape)
        arrays[info.filename[:-4]] = array if array.flags.aligned else array.copy()  # (an older snapshot)
    return arrays


#: The header numpy writes for a plain array (version 1.0); anything else is read by numpy's own parser.
_NPY_HEADER = re.compile(rb"\{'descr': '([<>|][a-z]\d{1,2})', 'fortran_order': False, 'shape': \((\d*),?\), \} *\n")


def _npy_header(member: memoryview) -> tuple[tuple[int, ...], np.dtype[Any], int]:
    """(shape, dtype, bytes before the data) of a ``.npy`` member (``ast.literal_eval``, which numpy parses the
    header with, costs ~1 ms a member)."""
    if bytes(member[:8]) == b"\x93NUMPY\x01\x00":
        length = int.from_bytes(member[8:10], "little")
        found = _NPY_HEADER.fullmatch(bytes(member[10:10 + length]))
        if found is not None:
            shape: tuple[int, ...] = (int(found[2]),) if found[2] else ()
            return shape, np.dtype(found[1].decode("ascii")), 10 + length
    header = io.BytesIO(member[:min(len(member), 65536)])
    version = np.lib.format.read_magic(header)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(header)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(header)
    else:
        raise ValueError(f"a member has .npy format {version}")
    if fortran and len(shape) > 1:
        raise ValueError("a member is in Fortran order")
    return shape, dtype, header.tell()


def _text_array(items: Sequence[str]) -> np.ndarray:
    return np.frombuffer("\n".join(items).encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _strings(array: np.ndarray) -> list[str]:
    text = array.tobytes().decode("utf-8", "surrogatepass")
    return text.split("\n") if text else []
