"""The derived index of one scope's memories: postings over whitespace words (AND-token recall), postings
over analysed terms (BM25), embedding vectors, and one numpy column per field that reads filter and rank by.

Why whitespace words: a query token never contains whitespace, so each occurrence of it in a memory lies
inside one whitespace-separated word of the (normalised) content. Matching a token is therefore a
substring search over the *vocabulary* (``str.find`` over the words joined by newlines), then a
union of those words' postings, weighted by how often the token occurs in each word. That gives the exact
contract semantics (``auth`` matches ``OAuth2``, occurrences counted like ``str.count``) without reading
any memory.

Layout: a compressed (CSR) base of postings loaded from a snapshot, plus a small per-word delta for what was
added since; forgotten memories are masked out and dropped at the next merge. The per-document fields are
declared once, in :data:`~cortex.index.layout.COLUMNS`; adding a field means one entry there and one in
:meth:`MemoryIndex._row`.

Parts: the state and its columns (:mod:`cortex.index.layout`), recall, filters and BM25
(:mod:`cortex.index.ranking`), vectors (:mod:`cortex.index.index_vectors`), snapshots
(:mod:`cortex.index.snapshot`); the writes are here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from cortex.index.analyzer import analyze_many, analyze_normalized
from cortex.index.index_vectors import CarriedVectors, IndexVectors
from cortex.index.layout import (COLUMNS, EXTRAS, NEVER, NONE, SOURCE_CODES, SOURCES, TYPE_CODES, TYPES, content_hash,
                                 from_micros, micros_or, time_or_none, to_micros)
from cortex.index.ranking import Ranking, combined_stats
from cortex.index.snapshot import FORMAT_VERSION, Snapshots
from cortex.model import Memory
from cortex.text import content_words, normalize

#: The columns a record is read from.
_RECORD_COLUMNS = ("type_code", "project", "confidence", "usage", "used", "created", "last_used", "source", "expires",
                   "valid_from", "valid_until", "version", "updated", "validated")
_NO_EXTRAS: dict[str, Any] = {}


class MemoryIndex(Ranking, IndexVectors, Snapshots):
    """Postings, vectors and ranking fields for one scope's memories (in memory; see ``save``/``load``)."""

    # -- writes ----------------------------------------------------------------------------------

    def _row(self, memory: Memory, doc_len: int) -> dict[str, Any]:
        """The column values of ``memory`` (computed before anything changes, so a failure changes nothing)."""
        created = to_micros(memory.created_at)
        return {
            "usage": memory.usage_count,
            "used": memory.used_count,
            "last_used": to_micros(memory.last_used_at),
            "created": created,
            "confidence": memory.confidence,
            "type_code": TYPE_CODES[memory.type],
            "project": self._project_code(memory.project),
            "doc_len": doc_len,
            "content_hash": content_hash(memory.content),
            "source": SOURCE_CODES[memory.source],
            "expires": micros_or(memory.expires_at, NEVER),
            "valid_from": micros_or(memory.valid_from, created),  # both default to the creation
            "valid_until": micros_or(memory.valid_until, NEVER),
            "version": memory.version,
            "updated": micros_or(memory.updated_at, created),
            "validated": micros_or(memory.validated_at, NONE),
        }

    def _unlink(self, memory_id: str) -> None:
        """Drop ``memory_id`` from the successor map (before its extras change or go)."""
        successor = self.extras.get(memory_id, {}).get("superseded_by")
        if successor is not None and self._replaced is not None:
            self._replaced.get(successor, set()).discard(memory_id)

    def _set_extras(self, memory: Memory) -> None:
        self._unlink(memory.id)
        if memory.superseded_by is not None and self._replaced is not None:
            self._replaced.setdefault(memory.superseded_by, set()).add(memory.id)
        extra = {name: value for name in EXTRAS if (value := getattr(memory, name))}
        if memory.scope == "agent" and memory.author in (None, memory.agent):
            extra.pop("author", None)  # the default: an agent's own memory is written by the agent
        if extra:
            self.extras[memory.id] = extra
        else:
            self.extras.pop(memory.id, None)

    def add(self, memory: Memory) -> None:
        """Index a memory; an id already present is replaced."""
        self._lengths = None
        self._current = None
        normalized = normalize(memory.content)
        counts = Counter(content_words(normalized))
        terms = analyze_normalized(normalized)
        row = self._row(memory, len(terms))
        if memory.id in self.doc_of:
            self.remove(memory.id)
        doc = len(self.ids)
        self.ids.append(memory.id)
        self.doc_of[memory.id] = doc
        for name, value in row.items():
            self.cols[name].append(value)
        self.alive.append(True)
        self.texts.append(memory.content)
        self.has_vector.append(False)
        if self.vectors is not None:
            self.vectors.append(None)
        self.raw.add(doc, counts)
        self.terms.add(doc, Counter(terms))
        if memory.tags:
            self.tag_lists.add(doc, dict.fromkeys(memory.tags, 1))
        self._set_extras(memory)
        if self.raw.needs_merge() or self.terms.needs_merge():
            self.merge()

    def add_many(self, memories: Iterable[Memory]) -> None:
        """Index several memories (as :meth:`add` of each in turn would, in one pass over the batch)."""
        batch = list(memories)
        ids = [m.id for m in batch]
        if len(batch) < 2 or len(set(ids)) != len(ids) or any(i in self.doc_of for i in ids):
            for memory in batch:  # replacements: one by one
                self.add(memory)
            return
        normalized = [normalize(m.content) for m in batch]
        raw = [Counter(content_words(text)) for text in normalized]
        terms = analyze_many(normalized)
        rows = [self._row(m, len(t)) for m, t in zip(batch, terms)]
        self._lengths = None
        self._current = None
        first = len(self.ids)
        self.ids += ids
        self.doc_of.update(zip(ids, range(first, first + len(ids))))
        for name, column in self.cols.items():
            column.extend([row[name] for row in rows])
        self.alive.extend([True] * len(batch))
        for memory in batch:
            self.texts.append(memory.content)
        self.has_vector.extend([False] * len(batch))
        if self.vectors is not None:
            for _ in batch:
                self.vectors.append(None)
        self.raw.add_many(first, raw)
        self.terms.add_many(first, [Counter(t) for t in terms])
        for doc, memory in enumerate(batch, first):
            if memory.tags:
                self.tag_lists.add(doc, dict.fromkeys(memory.tags, 1))
            self._set_extras(memory)
        if self.raw.needs_merge() or self.terms.needs_merge():
            self.merge()

    def remove(self, memory_id: str) -> bool:
        """Forget a memory; its postings are masked until the next merge."""
        doc = self.doc_of.pop(memory_id, None)
        if doc is None:
            return False
        self.alive.a[doc] = False
        self._lengths = None
        self._current = None
        self._unlink(memory_id)
        self.extras.pop(memory_id, None)
        return True

    def upsert(self, memory: Memory) -> None:
        """Make the index agree with ``memory`` as the store has it: fields in place, and re-indexed (its
        vector dropped) when the content changed."""
        doc = self.doc_of.get(memory.id)
        if doc is None or self.cols["content_hash"].a[doc] != content_hash(memory.content) \
                or tuple(self.extras.get(memory.id, {}).get("tags", ())) != memory.tags:
            same = doc is not None and self.vectors is not None and bool(self.has_vector.a[doc]) and \
                self.cols["content_hash"].a[doc] == content_hash(memory.content)
            vectors = self.embedded(np.array([doc])) if same else None  # its row and its later windows
            self.add(memory)
            if vectors is not None and self.vector_model is not None:  # only the tags changed: the vectors hold
                self.set_vectors(self.vector_model, [memory.id], vectors)
            return
        self._current = None
        self._touched(doc)
        for name, value in self._row(memory, int(self.cols["doc_len"].a[doc])).items():
            self.cols[name].a[doc] = value
        self._set_extras(memory)

    def predecessors(self, memory_ids: Iterable[str]) -> list[str]:
        """The live memories superseded by any of ``memory_ids``."""
        if self._replaced is None:
            self._replaced = {}
            for mid, extra in self.extras.items():
                if (successor := extra.get("superseded_by")) is not None:
                    self._replaced.setdefault(successor, set()).add(mid)
        return sorted({p for i in memory_ids for p in self._replaced.get(i, ()) if p in self.doc_of})

    def set_usage(self, memory: Memory) -> None:
        """Record a touch (the memory as the store now has it)."""
        doc = self.doc_of.get(memory.id)
        if doc is not None:
            self._touched(doc)
            self.cols["usage"].a[doc] = memory.usage_count
            self.cols["last_used"].a[doc] = to_micros(memory.last_used_at)

    def record(self, memory_id: str) -> dict[str, Any] | None:
        """The indexed fields of a live memory (everything but its agent), or None."""
        return self.records([memory_id])[0]

    def records(self, memory_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """:meth:`record` of each of ``memory_ids`` (None where not live), the columns read once for all."""
        found = [self.find_doc(i) for i in memory_ids]
        docs = [d for d in found if d is not None]
        if not docs:
            return [None] * len(found)
        at = np.array(docs, dtype=np.int64)
        c = self.cols
        col = {name: c[name].a[at].tolist() for name in _RECORD_COLUMNS}
        contents = self.texts.many(docs)
        out: list[dict[str, Any] | None] = []
        k = 0
        for memory_id, doc in zip(memory_ids, found):
            if doc is None:
                out.append(None)
                continue
            extra = self.extras.get(memory_id, _NO_EXTRAS)
            out.append({
                "id": memory_id,
                "type": TYPES[col["type_code"][k]],
                "project": self.projects[col["project"][k]],
                "confidence": col["confidence"][k],
                "usage_count": col["usage"][k],
                "used_count": col["used"][k],
                "created_at": from_micros(col["created"][k]),
                "last_used_at": from_micros(col["last_used"][k]),
                "source": SOURCES[col["source"][k]],
                "expires_at": time_or_none(col["expires"][k]),
                "valid_from": from_micros(col["valid_from"][k]),
                "valid_until": time_or_none(col["valid_until"][k]),
                "version": col["version"][k],
                "updated_at": from_micros(col["updated"][k]),
                "validated_at": time_or_none(col["validated"][k]),
                "tags": tuple(extra.get("tags", ())),
                "metadata": extra.get("metadata"),
                "superseded_by": extra.get("superseded_by"),
                "superseded_reason": extra.get("superseded_reason"),
                "author": extra.get("author"),
                "content": contents[k],
            })
            k += 1
        return out

    def _project_code(self, project: str) -> int:
        code = self.project_code.get(project)
        if code is None:
            code = len(self.projects)
            self.projects.append(project)
            self.project_code[project] = code
        return code


__all__ = ["COLUMNS", "FORMAT_VERSION", "NEVER", "NONE", "SOURCES", "SOURCE_CODES", "TYPE_CODES", "CarriedVectors",
           "MemoryIndex", "combined_stats", "content_hash", "from_micros", "to_micros"]
