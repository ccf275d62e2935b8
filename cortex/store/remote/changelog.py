"""A remote store's change log as one process sees it: the latest number and head values it has read of each
scope (its next write is numbered after them), the records it appends with every write, and the contents it
keeps in memory until the log names a change to them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from cortex.model import Memory, Scope
from cortex.store.base import Change
from cortex.store.rdf import MemoryCodec
from cortex.store.remote.answers import unreadable_answers_are_store_errors
from cortex.store.remote.protocol import OPERATIONS_PER_REQUEST, SparqlProtocol
from cortex.vocab import Vocabulary

#: Contents kept in memory (about 100 bytes each beyond the text): recall's hits cost no round trip.
CACHED_TEXTS = 500_000


@unreadable_answers_are_store_errors
class ChangeLog(SparqlProtocol):
    """The log and the contents cache of a :class:`~cortex.store.remote.RemoteStore`."""

    vocab: Vocabulary
    codec: MemoryCodec
    _hints: dict[Scope, int]
    _heads: dict[Scope, set[str]]
    _texts: dict[tuple[Scope, str], str]

    # -- the log of writes -----------------------------------------------------------------------

    def _change(self, scope: Scope, memory_ids: Sequence[str], operations: list[str], what: str,
                texts_stay: bool = False) -> Change:
        if not texts_stay:
            self._drop_texts(scope, memory_ids)
        change, ops = self._record(scope, memory_ids)
        # Virtuoso compiles a request's operations together and overflows its stack on a few hundred: a long
        # write goes in several requests, its log record last (a reader never sees a record before its data)
        head, tail = operations[:-OPERATIONS_PER_REQUEST], operations[-OPERATIONS_PER_REQUEST:]
        for start in range(0, len(head), OPERATIONS_PER_REQUEST):
            self._update(head[start:start + OPERATIONS_PER_REQUEST], what)
        self._update([*tail, *ops], what)
        self._moved(scope, change)
        return change

    def _record(self, scope: Scope, memory_ids: Sequence[str]) -> tuple[Change, list[str]]:
        """The next change of the scope and the operations that log it: numbered after the latest this
        process has seen (read now if it has seen none), the head values it has seen replaced by it."""
        if scope not in self._heads:
            self.log_heads([scope])
        change = Change(self._hints.get(scope, 0) + 1, os.urandom(8).hex(), tuple(memory_ids))
        return change, self.codec.shared_change(scope, change.seq, change.token, memory_ids,
                                                sorted(self._heads.get(scope, ())))

    def _moved(self, scope: Scope, change: Change) -> None:
        """This process wrote ``change``: the head holds it (and what others added meanwhile, unseen)."""
        self._heads[scope] = {f"{change.seq} {change.token}"}
        self._seen(scope, change.seq)

    def compact(self, scope: Scope, below: int) -> None:
        self._update([self.codec.compact_update(scope, below)], "a log compaction")

    # -- the log as read -------------------------------------------------------------------------

    def last_change(self, scope: Scope) -> Change | None:
        rows = self._select(self.codec.last_change_query(scope))
        if not rows:
            return None
        self._seen(scope, int(rows[0]["s"].value))
        return Change(int(rows[0]["s"].value), rows[0]["t"].value, None)

    def change(self, scope: Scope, seq: int) -> Change | None:
        rows = self._select(self.codec.change_query(scope, seq))
        return Change(seq, rows[0]["t"].value, None) if rows else None

    def changes(self, scope: Scope, after: int, upto: int | None = None) -> list[Change]:
        rows = self._select(self.codec.changes_query(scope, after, upto), ("r", "s", "p", "o"))
        return self._read_changes(scope, rows)

    def _read_changes(self, scope: Scope, rows: list[dict[str, Any]]) -> list[Change]:
        found = self.codec.read_changes((r["r"].value, r["s"].value, r["p"].value, r["o"].value) for r in rows)
        if found:
            self._seen(scope, found[-1].seq)
        for change in found:
            if change.ids is None:
                self._texts.clear()
            else:
                self._drop_texts(scope, change.ids)
        return found

    def _seen(self, scope: Scope, seq: int) -> None:
        if seq > self._hints.get(scope, 0):
            self._hints[scope] = seq

    def log_heads(self, scopes: Sequence[Scope]) -> dict[Scope, list[Change]]:
        found: dict[Scope, list[Change]] = {scope: [] for scope in scopes}
        values: dict[Scope, set[str]] = {scope: set() for scope in scopes}
        by_head = {self.codec.head_iri(scope).value: scope for scope in scopes}
        if scopes:
            for row in self._select(self.codec.heads_query(scopes), ("h", "v")):
                scope = by_head.get(row["h"].value)
                seq, _, token = row["v"].value.partition(" ")
                if scope is not None and seq.isdigit() and token:
                    found[scope].append(Change(int(seq), token, None))
                    values[scope].add(row["v"].value)
                    self._seen(scope, int(seq))
        self._heads.update(values)
        return found

    def records(self, scope: Scope, tokens: Sequence[str]) -> list[Change]:
        if not tokens:
            return []
        rows = self._select(self.codec.records_query(scope, tokens), ("r", "s", "p", "o"))
        return self._read_changes(scope, rows)

    # -- contents read before --------------------------------------------------------------------

    def _keep_texts(self, scope: Scope, memories: Sequence[Memory]) -> None:
        """Remember the contents of memories just read or written."""
        self._remember_texts(scope, {m.id: m.content for m in memories})

    def _remember_texts(self, scope: Scope, texts: Mapping[str, str]) -> None:
        """Remember contents by id, valid until the log names the memory (see ``changes``); past
        :data:`CACHED_TEXTS` the cache starts again."""
        if len(self._texts) + len(texts) > CACHED_TEXTS:
            self._texts.clear()
        self._texts.update(((scope, i), text) for i, text in list(texts.items())[:CACHED_TEXTS])

    def _drop_texts(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        for memory_id in memory_ids:
            self._texts.pop((scope, memory_id), None)
