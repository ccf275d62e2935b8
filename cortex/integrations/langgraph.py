"""Cortex as a LangGraph store: :class:`CortexStore`, a ``langgraph.store.base.BaseStore`` (needs the
``langgraph`` extra: ``langgraph-checkpoint``).

The mapping. One store writes one Cortex agent's memory, in one of the scopes that agent writes (``agent``: its own,
``team:NAME``, ``swarm``); a LangGraph item is one memory there. LangGraph namespaces are free-form tuples (a user
id, an assistant id, ``("memories", "alice")``) of any number, while Cortex's scopes are a few declared ones with
rules about who reads and writes them, so a namespace is kept in the memory, not made into a scope: to give two
agents or a team their own memory, open one store for each. Each memory holds:

- ``content``: the item's text, what Cortex ranks and what an ``<agent-memory>`` block shows: the texts at the
  put's ``index`` paths, else ``value["content"]``, else ``value["text"]``, else the value as JSON;
- ``metadata["langgraph"]`` (:data:`META_KEY`): ``item``, the namespace, key and value as one JSON text, exactly as
  given (nested values, key order, Unicode and numbers as they were), and the order the item and its namespace
  were first written in. When that does not fit Cortex's 8 KiB of metadata, the JSON text is the ``content``
  instead (up to 64 KiB; it is then also the searchable text);
- tags: a marker (:data:`ITEM_TAG`), a digest of (namespace, key), one of the exact namespace and one of each
  namespace prefix, so a ``get``, a namespace's items and ``search`` under a prefix are tag lookups in Cortex's
  index (never a text search).

It behaves like LangGraph's ``InMemoryStore`` on the same calls (tests/integrations/test_langgraph.py runs both side
by side): the puts of one batch are applied after its reads, the last put of a key wins, a search without a query
lists items in the order they were first written (namespace by namespace), ``filter`` takes the same operators
applied before ``limit``/``offset``, ``list_namespaces`` the same prefix/suffix/``*``/``max_depth`` rules. Where it
differs, on purpose: a search with a ``query`` is Cortex's ranked search (hybrid; bm25 without embeddings), so it
returns the matching items best first with a score, where ``InMemoryStore`` without an index ignores the query; a
``put`` of an existing key changes the memory in place (version + 1, the earlier value kept in its history), so
``created_at`` stays; a namespace whose items are all deleted is gone from ``list_namespaces`` (``InMemoryStore``
keeps it, and creates one on a ``get``); a numeric operator on a value that is not a number does not match (where
``InMemoryStore`` raises); values must be JSON (as for LangGraph's Postgres store; a tuple comes back a list).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    validate_op_namespace,
)

from cortex import config
from cortex.errors import InvalidInputError
from cortex.validation import MAX_CONTENT_BYTES, MAX_METADATA_BYTES

if TYPE_CHECKING:
    from cortex.api.protocol import MemoryAPI
    from cortex.model import Memory

log = logging.getLogger("cortex")

#: The tag every item's memory carries.
ITEM_TAG = "langgraph-item"
#: The metadata key that holds the item.
META_KEY = "langgraph"
#: Cortex keeps at most 32 tags a memory: the marker, the key's and the exact namespace's digests leave 29 for
#: prefixes; a search under a deeper prefix reads the 29-deep one and checks the rest in the metadata.
_PREFIX_TAGS = 29
#: Most memories a page of Cortex's listing or search returns.
_PAGE = config.MAX_LIMIT
_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})

_seq_lock = threading.Lock()
_last_seq = 0
#: One batch's writes at a time in this process: the check for an existing key and the write that follows it.
_writing = threading.Lock()


def _next_seq() -> int:
    """A number larger than every earlier one of this process and close to the time (nanoseconds), so items written
    by several processes order by when they were written."""
    global _last_seq
    with _seq_lock:
        _last_seq = max(time.time_ns(), _last_seq + 1)
        return _last_seq


def _digest(kind: str, value: Any) -> str:
    """A tag naming ``value`` (a namespace, or a namespace and key): ``kind`` and 160 bits of its SHA-256."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return f"lg{kind}-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def _key_tag(namespace: tuple[str, ...], key: str) -> str:
    return _digest("k", [list(namespace), key])


def _exact_tag(namespace: tuple[str, ...]) -> str:
    return _digest("e", list(namespace))


def _prefix_tag(prefix: tuple[str, ...]) -> str:
    """The tag of the memories whose namespace starts with ``prefix`` (at most :data:`_PREFIX_TAGS` labels of it
    count; empty: every item)."""
    return _digest("p", list(prefix[:_PREFIX_TAGS])) if prefix else ITEM_TAG


def _check_json(value: Any, where: str, depth: int = 0) -> None:
    """Raise unless ``value`` is JSON that comes back as it went (tuples come back as lists)."""
    if depth > 500:
        raise InvalidInputError("value", f"is nested too deeply at {where}")
    if value is None or isinstance(value, (bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError("value", f"holds {value} at {where}, which JSON cannot keep")
        return
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError("value", f"holds unpaired surrogate characters at {where}") from None
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json(item, f"{where}[{i}]", depth + 1)
        return
    if isinstance(value, Mapping):
        for k, item in value.items():
            if not isinstance(k, str):
                raise InvalidInputError("value", f"has a key that is not a string ({type(k).__name__}) at {where}")
            _check_json(k, where, depth + 1)
            _check_json(item, f"{where}.{k}", depth + 1)
        return
    raise InvalidInputError("value", f"holds a {type(value).__name__} at {where}; CortexStore keeps JSON values "
                                     "(as LangGraph's Postgres store does)")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _clip(text: str, limit: int = MAX_CONTENT_BYTES) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, at a character boundary."""
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def _text_of(value: Mapping[str, Any], key: str, index: Literal[False] | list[str] | None) -> str:
    """What Cortex ranks and shows for an item: its ``index`` fields' texts, else its ``content`` or ``text``, else
    its JSON. ``index=False`` (not to be searched): the key only."""
    if index is False:
        return _clip(f"LangGraph item {key}"[:200])
    texts: list[str] = []
    if index:
        texts = [t for path in index for t in get_text_at_path(value, path)]
    else:
        for field in ("content", "text"):
            if isinstance(value.get(field), str) and value[field].strip():
                texts = [value[field]]
                break
    text = "\n".join(texts)
    return _clip(text if text.strip() else _json(value))


class _Stored:
    """An item as read back from its memory, with the order it was written in."""

    __slots__ = ("item", "memory", "nsseq", "seq")

    def __init__(self, item: Item, memory: Memory, seq: int, nsseq: int) -> None:
        self.item, self.memory, self.seq, self.nsseq = item, memory, seq, nsseq


def _read(memory: Memory) -> _Stored | None:
    """The item a memory holds, or None for a memory that does not hold one (tagged by hand, edited)."""
    try:
        meta = (memory.metadata or {})[META_KEY]
        envelope = json.loads(memory.content if meta.get("in") == "content" else meta["item"])
        namespace, key, value = envelope["namespace"], envelope["key"], envelope["value"]
        seq, nsseq = int(meta["seq"]), int(meta["nsseq"])
        if not (isinstance(namespace, list) and all(isinstance(n, str) for n in namespace) and isinstance(key, str)
                and isinstance(value, dict)):
            raise ValueError("not an item")
    except (KeyError, TypeError, ValueError, AttributeError):
        log.warning("memory %s is tagged %r but holds no LangGraph item: skipped", memory.id, ITEM_TAG)
        return None
    item = Item(value=value, key=key, namespace=tuple(namespace), created_at=memory.created_at,
                updated_at=memory.updated_at or memory.created_at)
    return _Stored(item, memory, seq, nsseq)


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _operator(value: Any, operator: str, operand: Any) -> bool:
    """One comparison of a filter, as ``InMemoryStore`` does it; a numeric one on a non-number does not match."""
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    left, right = _number(value), _number(operand)
    if left is None or right is None:
        return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[operator]


def _matches(value: Any, wanted: Any) -> bool:
    """Whether ``value`` passes ``wanted`` (a filter's value): operators, nested objects, lists item by item."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, k, v) for k, v in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(wanted)
                and all(_matches(a, b) for a, b in zip(value, wanted)))
    return bool(value == wanted)


def _check_filter(wanted: Any) -> None:
    """Raise ValueError for an operator ``InMemoryStore`` does not know, before anything is read."""
    if isinstance(wanted, dict):
        for k, v in wanted.items():
            if isinstance(k, str) and k.startswith("$") and k not in _OPERATORS:
                raise ValueError(f"Unsupported operator: {k}")
            _check_filter(v)
    elif isinstance(wanted, (list, tuple)):
        for v in wanted:
            _check_filter(v)


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` matches a prefix or suffix condition (``*`` matches any one label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in pairs)


class CortexStore(BaseStore):
    """A LangGraph store on Cortex: every item a memory of ``agent`` in ``scope`` (see the module's docstring).

    ``cortex`` is a :class:`cortex.Cortex` or a :class:`cortex.api.client.RemoteCortex` (a running server); the
    agent must be declared with memory there. ``project`` is the project of the memories written, ``mode`` the
    search mode of a query (``hybrid``, ``bm25``, ``semantic``, ``all``). TTLs are not supported.
    """

    supports_ttl = False

    def __init__(self, cortex: MemoryAPI, *, agent: str = "langgraph", scope: str = "agent",
                 project: str = config.DEFAULT_PROJECT, mode: str = "hybrid") -> None:
        self.cortex = cortex
        self.agent = agent
        self.scope = scope
        self.project = project
        self.mode = mode

    def __repr__(self) -> str:
        return f"CortexStore(agent={self.agent!r}, scope={self.scope!r})"

    # -- BaseStore ---------------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order and return their results: the reads see the store as it was before the batch, then
        its puts and deletes are applied (the last one of a key wins), as ``InMemoryStore`` does."""
        ops = list(ops)
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise ValueError(f"Unknown operation type: {type(op)}")
            validate_op_namespace(op)
            if isinstance(op, PutOp) and op.ttl is not None:
                raise NotImplementedError("TTL is not supported by CortexStore")
        results: list[Result] = [None] * len(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                found = self._find(tuple(op.namespace), op.key)
                results[i] = found[0].item if found else None
            elif isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
            else:
                puts[(tuple(op.namespace), op.key)] = op
        if puts:
            with _writing:
                self._apply(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread: the event loop is never blocked by the store."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- reads ---------------------------------------------------------------------------------------------------

    def _tagged(self, tag: str, page_size: int = _PAGE) -> Iterator[Memory]:
        """Every current memory of the store's scope with ``tag``, page by page."""
        cursor = None
        while True:
            page = self.cortex.list_memories(self.agent, scope=self.scope, tags=[tag], cursor=cursor,
                                             limit=page_size)
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return

    def _items(self, tag: str, page_size: int = _PAGE) -> Iterator[_Stored]:
        for memory in self._tagged(tag, page_size):
            stored = _read(memory)
            if stored is not None:
                yield stored

    def _find(self, namespace: tuple[str, ...], key: str) -> list[_Stored]:
        """The memories holding (namespace, key), the latest written first (more than one only after two processes
        wrote the same new key at once)."""
        found = [s for s in self._items(_key_tag(namespace, key), 10)
                 if s.item.namespace == namespace and s.item.key == key]
        return sorted(found, key=lambda s: (s.item.updated_at, s.seq), reverse=True)

    def _under(self, prefix: tuple[str, ...]) -> Iterator[_Stored]:
        """Every item whose namespace starts with ``prefix``."""
        n = len(prefix)
        return (s for s in self._items(_prefix_tag(prefix)) if s.item.namespace[:n] == prefix)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        """Items under the prefix passing the filter, sliced: ranked by Cortex for a query, else in the order they
        were first written."""
        prefix = tuple(op.namespace_prefix)
        wanted = op.filter or {}
        _check_filter(wanted)

        def passes(stored: _Stored) -> bool:
            return all(_matches(stored.item.value.get(k), v) for k, v in wanted.items())

        if op.query and op.query.strip():
            return self._ranked(op, prefix, passes)
        items = sorted((s for s in self._under(prefix) if passes(s)),
                       key=lambda s: (s.nsseq, s.seq, s.item.namespace, s.item.key))
        return [_search_item(s, None) for s in items[op.offset:op.offset + op.limit]]

    def _ranked(self, op: SearchOp, prefix: tuple[str, ...], passes: Any) -> list[SearchItem]:
        """A query's items, best first: Cortex's search over the prefix's tag, asked for more until the filter left
        ``offset + limit`` of them or the search has no more."""
        want = max(op.offset + op.limit, 0)
        if want == 0:
            return []
        ask = min(_PAGE, max(10, 2 * want if not op.filter else 4 * want))
        n = len(prefix)
        while True:
            result = self.cortex.search(self.agent, _clip(cast(str, op.query)), mode=self.mode, limit=ask,
                                        tags=[_prefix_tag(prefix)], scope=self.scope)
            hits = []
            for hit in result.hits:
                stored = _read(hit.memory)
                if stored is not None and stored.item.namespace[:n] == prefix and passes(stored):
                    hits.append((stored, hit.score))
            if len(hits) >= want or len(result.hits) < ask or ask >= _PAGE:
                return [_search_item(s, score) for s, score in hits[op.offset:op.offset + op.limit]]
            ask = min(_PAGE, ask * 4)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        """The namespaces holding items, matched, cut to ``max_depth``, sorted and sliced as ``InMemoryStore`` does."""
        conditions = tuple(op.match_conditions or ())
        fixed: tuple[str, ...] = ()
        for condition in conditions:  # the labels before a prefix's first `*`: a tag narrows the read to them
            if condition.match_type == "prefix":
                lead = tuple(itertools.takewhile(lambda label: label != "*", condition.path))
                fixed = max(fixed, lead, key=len)
        found = {s.item.namespace for s in self._under(fixed)}
        names = [ns for ns in found if all(_does_match(c, ns) for c in conditions)]
        if op.max_depth is not None:
            names = list({ns[:op.max_depth] for ns in names})
        return sorted(names)[op.offset:op.offset + op.limit]

    # -- writes --------------------------------------------------------------------------------------------------

    def _apply(self, puts: Mapping[tuple[tuple[str, ...], str], PutOp]) -> None:
        """Apply a batch's last put or delete of each key: deletes forget the memory, puts of an existing key update
        it in place, new keys are stored in one write. Every value is checked before anything is written."""
        existing = {k: self._find(*k) for k in puts}
        # where each namespace goes in a search's order: a namespace holding items before the batch keeps its place;
        # a new one is placed when the batch first touches it, by a put or a delete (as InMemoryStore places it)
        first: dict[tuple[str, ...], int] = {}
        for namespace, _ in puts:
            if namespace not in first:
                held = next(self._items(_exact_tag(namespace), 1), None)
                first[namespace] = held.nsseq if held is not None else _next_seq()
        planned: list[tuple[tuple[tuple[str, ...], str], PutOp, str, dict[str, Any]]] = []
        for (namespace, key), op in puts.items():
            if op.value is None:
                continue
            found = existing[(namespace, key)]
            seq, nsseq = (found[0].seq, found[0].nsseq) if found else (_next_seq(), first[namespace])
            content, metadata = _payload(namespace, key, op.value, op.index, seq, nsseq)
            planned.append(((namespace, key), op, content, metadata))
        for k, op in puts.items():
            if op.value is None:
                for stored in existing[k]:
                    self.cortex.forget(self.agent, stored.memory.id)
        new: list[dict[str, Any]] = []
        for k, op, content, metadata in planned:
            found = existing[k]
            if not found:
                namespace, key = k
                new.append({"content": content, "metadata": metadata, "tags": _tags(namespace, key),
                            "project": self.project, "confidence": 1.0, "ttl": "never", "scope": self.scope})
                continue
            self.cortex.update(self.agent, found[0].memory.id, content=content, metadata=metadata)
            for extra in found[1:]:
                self.cortex.forget(self.agent, extra.memory.id)
        if new:
            self.cortex.store_many(self.agent, new)


def _tags(namespace: tuple[str, ...], key: str) -> list[str]:
    return [ITEM_TAG, _key_tag(namespace, key), _exact_tag(namespace),
            *(_prefix_tag(namespace[:i]) for i in range(1, min(len(namespace), _PREFIX_TAGS) + 1))]


def _payload(namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
             index: Literal[False] | list[str] | None, seq: int, nsseq: int) -> tuple[str, dict[str, Any]]:
    """The content and metadata of an item's memory: the item in the metadata when it fits there (the content its
    text), else in the content as JSON."""
    if not isinstance(value, Mapping):
        raise InvalidInputError("value", f"must be a mapping, not {type(value).__name__}")
    _check_json(key, "key")
    _check_json(list(namespace), "namespace")
    _check_json(dict(value), "value")
    # the item as JSON text: Cortex may store a metadata object in another key order, text it keeps as it is
    item = _json({"namespace": list(namespace), "key": key, "value": dict(value)})
    metadata = {META_KEY: {"item": item, "seq": seq, "nsseq": nsseq}}
    if len(_json(metadata).encode("utf-8")) <= MAX_METADATA_BYTES:
        return _text_of(json.loads(item)["value"], key, index), metadata
    size = len(item.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInputError("value", f"is {size} bytes as JSON with its namespace and key; CortexStore keeps "
                                         f"items up to {MAX_CONTENT_BYTES} bytes (64 KiB)")
    return item, {META_KEY: {"in": "content", "seq": seq, "nsseq": nsseq}}


def _search_item(stored: _Stored, score: float | None) -> SearchItem:
    item = stored.item
    return SearchItem(namespace=item.namespace, key=item.key, value=item.value, created_at=item.created_at,
                      updated_at=item.updated_at, score=score)


__all__ = ["ITEM_TAG", "META_KEY", "CortexStore"]
