"""The content of each document of an index, so a read turns its hits into memories without asking the store.

Stored like the postings: a base of UTF-8 bytes with one offset per document (what a snapshot holds) plus a list
of the strings of the documents added since; a document's content never changes in place (a new content is a new
document), and forgotten documents are dropped at the next :meth:`Texts.merge`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

_ENCODING, _ERRORS = "utf-8", "surrogatepass"  # contents may hold lone surrogates, as the store does


class Texts:
    """document -> content."""

    __slots__ = ("blob", "off", "tail")

    def __init__(self, blob: np.ndarray | None = None, off: np.ndarray | None = None) -> None:
        self.blob = blob if blob is not None else np.zeros(0, dtype=np.uint8)
        self.off = off if off is not None else np.zeros(1, dtype=np.int64)
        self.tail: list[str] = []

    def __len__(self) -> int:
        return len(self.off) - 1 + len(self.tail)

    def append(self, text: str) -> None:
        """The content of the next document."""
        self.tail.append(text)

    def get(self, doc: int) -> str:
        """The content of document ``doc``."""
        base = len(self.off) - 1
        if doc >= base:
            return self.tail[doc - base]
        return self.blob[self.off[doc]:self.off[doc + 1]].tobytes().decode(_ENCODING, _ERRORS)

    def many(self, docs: list[int]) -> list[str]:
        """The contents of ``docs``, in order."""
        base = len(self.off) - 1
        blob, tail = self.blob, self.tail
        starts = self.off[: base + 1].tolist() if len(docs) > 64 else None
        out = []
        for doc in docs:
            if doc >= base:
                out.append(tail[doc - base])
            elif starts is not None:
                out.append(blob[starts[doc]:starts[doc + 1]].tobytes().decode(_ENCODING, _ERRORS))
            else:
                out.append(blob[self.off[doc]:self.off[doc + 1]].tobytes().decode(_ENCODING, _ERRORS))
        return out

    def merge(self, keep: np.ndarray) -> None:
        """Keep the documents ``keep`` (sorted document numbers), renumbered 0, 1, ... in that order, as a base."""
        base = len(self.off) - 1
        kept_base = keep[keep < base]
        parts: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        if len(kept_base):
            # runs of consecutive kept documents: one copy each (forgotten documents are few)
            breaks = np.flatnonzero(np.diff(kept_base) != 1) + 1
            for run in np.split(kept_base, breaks):
                parts.append(self.blob[self.off[run[0]]:self.off[run[-1] + 1]])
            lengths.append(np.diff(self.off)[kept_base])
        encoded = [self.tail[d - base].encode(_ENCODING, _ERRORS) for d in keep[keep >= base].tolist()]
        if encoded:
            parts.append(np.frombuffer(b"".join(encoded), dtype=np.uint8))
            lengths.append(np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded)))
        self.blob = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
        self.off = np.zeros(len(keep) + 1, dtype=np.int64)
        if lengths:
            np.cumsum(np.concatenate(lengths), out=self.off[1:])
        self.tail = []

    # -- persistence -----------------------------------------------------------------------------

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """The snapshot arrays (call after :meth:`merge`)."""
        return {f"{prefix}blob": self.blob, f"{prefix}off": self.off}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str, n_docs: int) -> "Texts | None":
        """The texts of a snapshot; None when they do not describe ``n_docs`` documents."""
        blob, off = arrays.get(f"{prefix}blob"), arrays.get(f"{prefix}off")
        if blob is None or off is None or blob.dtype != np.uint8 or off.dtype != np.int64 or len(off) != n_docs + 1:
            return None
        if int(off[0]) != 0 or int(off[-1]) != len(blob) or (n_docs and bool((np.diff(off) < 0).any())):
            return None
        return cls(blob, off)
