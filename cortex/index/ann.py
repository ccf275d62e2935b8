"""Approximate nearest-neighbour candidates for semantic search at scale: an HNSW graph (usearch) over a
scope's vectors, kept beside the index snapshot.

The graph only *proposes* documents: every candidate is scored again exactly from the index's own vectors and
passes the same liveness and filter checks as in exact search, so a stale or partial graph can cost recall,
never a wrong or forgotten memory. It changes only when the index is saved (:meth:`AnnGraph.sync`, called by
the snapshot), so queries never write and the file on disk always belongs to the snapshot that names it:

* keys are document numbers at insertion time; ``key_doc`` follows the index's renumbering (merges), -1 for a
  document that is gone or whose vector changed since;
* documents from ``upto`` on (added since the last save) and ``stale`` ones (a vector set since) are not in the
  graph: they are scored exactly on every query, at most one checkpoint's worth of them;
* the graph file is written under a fresh name before the snapshot that references it (with its size and
  CRC), and older graph files are removed only after that snapshot is in place; a crash leaves the previous
  pair intact. A missing, damaged or mismatched file is dropped at load; the next save builds it again from
  the index's vectors (exact search meanwhile).

Which library and why (usearch, i8 storage) and the thresholds below are measured by ``bench/vectors.py``
(docs in /tmp/cx/s31-vectors.md, then docs/retrieval.md).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import secrets
import shutil
import zlib
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("cortex.index")

#: Below this many vectors a scope is searched exactly (a full scan costs about as much as a graph search, and
#: the ranking of small stores stays exactly that of exact search).
MIN_VECTORS = 20_000
#: HNSW parameters: links per node, candidate list while building and while searching. The build's cost is
#: about proportional to EXPANSION_ADD (usearch's default, 128, took 35 s of CPU for 50k vectors on this
#: project's machine, 64 half that); recall@10 of the rescored candidates depends on it, not on a wider search:
#: at 200k vectors 0.96 with 40, 0.996 with 64, whatever EXPANSION_SEARCH (measured with usearch directly;
#: bench/vectors.py measures the whole path).
CONNECTIVITY = 16
EXPANSION_ADD = 64
EXPANSION_SEARCH = 96
#: Storage of the vectors inside the graph (navigation only: candidates are rescored from the float32 rows).
DTYPE = "i8"
#: Threads used to build or extend a graph (a save is a writer's long phase; queries use one).
BUILD_THREADS = 2
#: A graph with more dead keys than this share of its size is built afresh at the next save.
MAX_DEAD = 0.3
_REMOVED = -2  # key_doc of a key removed from the graph (-1: to be removed at the next save)
_PREFIX = "ann-"
_SUFFIX = ".usearch"
_available: bool | None = None


def available() -> bool:
    """Whether the ANN library is installed (without it every search is exact)."""
    global _available
    if _available is None:
        _available = importlib.util.find_spec("usearch") is not None
    return _available


def _new_graph(dim: int) -> Any:
    from usearch.index import Index  # here: only a scope large enough for a graph pays the import

    return Index(ndim=dim, metric="cos", dtype=DTYPE, connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                 expansion_search=EXPANSION_SEARCH)


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


class AnnGraph:
    """The graph of one index's vectors, its key -> document map, and what it does not cover yet."""

    def __init__(self, dim: int, key_doc: np.ndarray, upto: int, stale: set[int] | None = None,
                 file: Path | None = None, size: int = 0, crc: int = 0) -> None:
        self.dim = dim
        self.key_doc = key_doc
        self.upto = upto
        self.stale: set[int] = stale or set()
        self._graph: Any = None
        self._file, self._size, self._crc = file, size, crc
        self._failed = False
        self._changed = False  # keys added or removed since the file was written

    # -- reads -----------------------------------------------------------------------------------

    @property
    def failed(self) -> bool:
        """Whether loading the graph's file failed (it is rebuilt at the next save)."""
        return self._failed

    def usable(self) -> bool:
        """Whether the graph can be searched (loading it on first use; False if its file is bad)."""
        if self._graph is not None:
            return True
        if self._failed or self._file is None:
            return False
        try:
            if self._file.stat().st_size != self._size or _crc(self._file) != self._crc:
                raise ValueError("size or checksum differs from the snapshot's record")
            from usearch.index import Index

            graph = Index.restore(str(self._file), connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                                  expansion_search=EXPANSION_SEARCH)
            if graph is None or graph.ndim != self.dim or len(graph) > len(self.key_doc):
                raise ValueError("not the graph of this index")
            self._graph = graph
            return True
        except (OSError, ValueError, RuntimeError) as exc:
            log.warning("vector graph %s is unusable (%s): exact search until the next save rebuilds it",
                        self._file, exc)
            self._failed = True
            return False

    @property
    def size(self) -> int:
        """Keys in the (loaded) graph, removed ones excluded."""
        return len(self._graph)

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        """Live-mapped documents of (about) the ``k`` keys nearest to ``query`` (unsorted, distinct)."""
        matches = self._graph.search(np.asarray(query, dtype=np.float32), min(k, len(self._graph)), threads=1)
        docs = self.key_doc[np.asarray(matches.keys, dtype=np.int64)]
        found: np.ndarray = docs[docs >= 0]
        return found

    def outside(self, n_docs: int) -> np.ndarray:
        """Documents the graph does not cover: added since its last save, or given a vector since."""
        tail = np.arange(self.upto, n_docs, dtype=np.int64)
        if not self.stale:
            return tail
        return np.concatenate([np.fromiter(self.stale, dtype=np.int64, count=len(self.stale)), tail])

    # -- writes (between saves: bookkeeping only) ---------------------------------------------------

    def touched(self, docs: np.ndarray) -> None:
        """These documents got a (new) vector: scored exactly until the next save puts them in the graph."""
        self.stale.update(int(d) for d in docs if d < self.upto)

    def renumber(self, alive: np.ndarray, new_doc: np.ndarray) -> None:
        """Follow a merge of the index (dead documents dropped, the others renumbered by ``new_doc``)."""
        mapped = self.key_doc >= 0
        keep = np.zeros(len(self.key_doc), dtype=bool)
        keep[mapped] = alive[self.key_doc[mapped]]
        self.key_doc = np.where(keep, new_doc[np.where(mapped, self.key_doc, 0)],
                                np.where(self.key_doc == _REMOVED, _REMOVED, -1))
        self.stale = {int(new_doc[d]) for d in self.stale if alive[d]}
        self.upto = int(np.count_nonzero(alive[: self.upto]))

    # -- saves ------------------------------------------------------------------------------------

    def sync(self, rows: np.ndarray, has: np.ndarray) -> None:
        """Bring the graph up to date with the index (``rows``: its vectors; ``has``: live with a vector):
        drop the keys of changed or dead documents, insert the documents it does not cover."""
        n = len(has)
        if self.upto == n and not self.stale and not np.any(self.key_doc == -1):
            return  # nothing changed: the file stays, unread
        if not self.usable():
            raise ValueError("no graph to extend")
        stale = np.fromiter(self.stale, dtype=np.int64, count=len(self.stale))
        gone = np.flatnonzero((self.key_doc >= 0) & np.isin(self.key_doc, stale))
        self.key_doc[gone] = -1
        dead = np.flatnonzero(self.key_doc == -1)
        if len(dead):  # removed keys are never returned by a search (the graph keeps them as waypoints)
            self._graph.remove(dead)
            self.key_doc[dead] = _REMOVED
            self._changed = True
        new = np.concatenate([stale, np.arange(self.upto, n, dtype=np.int64)])
        new = new[has[new]] if len(new) else new
        if len(new):
            keys = np.arange(len(self.key_doc), len(self.key_doc) + len(new), dtype=np.int64)
            self._graph.add(keys, np.ascontiguousarray(rows[new], dtype=np.float32), threads=BUILD_THREADS)
            self.key_doc = np.concatenate([self.key_doc, new])
            self._changed = True
        self.upto, self.stale = n, set()

    def dead_share(self) -> float:
        """Share of the graph's keys that map to no document."""
        return float(np.count_nonzero(self.key_doc < 0)) / max(len(self.key_doc), 1)

    def write(self, directory: Path) -> tuple[str, int, int]:
        """The graph's file in ``directory`` (written under a new name when changed): (name, size, crc)."""
        if not self._changed and self._file is not None and self._file.parent == directory and self._file.exists():
            return self._file.name, self._size, self._crc
        if not self.usable():
            raise ValueError("no graph to write")
        path = directory / f"{_PREFIX}{secrets.token_hex(8)}{_SUFFIX}"
        tmp = directory / f".{path.name}.tmp"
        try:
            self._graph.save(str(tmp))
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._file, self._size, self._crc, self._changed = path, path.stat().st_size, _crc(path), False
        return path.name, self._size, self._crc

    def arrays(self, directory: Path) -> dict[str, np.ndarray]:
        """What a snapshot records of the graph (its file written first)."""
        name, size, crc = self.write(directory)
        return {"ann_file": np.frombuffer(name.encode("ascii"), dtype=np.uint8), "ann_key_doc": self.key_doc,
                "ann_meta": np.array([self.dim, self.upto, size, crc], dtype=np.int64)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], directory: Path, n_docs: int) -> "AnnGraph | None":
        """The graph a snapshot recorded (loaded lazily), or None when it recorded none or nonsense."""
        if "ann_file" not in arrays:
            return None
        name = arrays["ann_file"].tobytes().decode("ascii")
        dim, upto, size, crc = (int(v) for v in arrays["ann_meta"])
        key_doc = np.asarray(arrays["ann_key_doc"], dtype=np.int64)
        if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX) and "/" not in name) or upto != n_docs \
                or (len(key_doc) and int(key_doc.max()) >= n_docs):
            return None
        return cls(dim, key_doc.copy(), upto, file=directory / name, size=size, crc=crc)


def build(rows: np.ndarray, has: np.ndarray) -> AnnGraph:
    """A graph of the documents where ``has`` holds (``rows``: the index's vectors, one per document)."""
    docs = np.flatnonzero(has).astype(np.int64)
    graph = _new_graph(rows.shape[1])
    graph.add(docs, np.ascontiguousarray(rows[docs], dtype=np.float32), threads=BUILD_THREADS)
    key_doc = np.full(len(has), _REMOVED, dtype=np.int64)  # no vector: never added
    key_doc[docs] = docs
    ann = AnnGraph(rows.shape[1], key_doc, len(has))
    ann._graph, ann._changed = graph, True
    return ann


def remove_others(directory: Path, keep: str | None) -> None:
    """Remove graph files of ``directory`` other than ``keep`` (after the snapshot naming ``keep`` is in place)."""
    try:
        for path in directory.glob(f"{_PREFIX}*{_SUFFIX}"):
            if path.name != keep:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
        for path in directory.glob(f".{_PREFIX}*{_SUFFIX}.tmp"):
            path.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("cannot remove old vector graphs in %s: %s", directory, exc)
