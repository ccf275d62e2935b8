"""Listing: pages through everything an agent can see, newest first, with an opaque cursor.

A cursor encodes the (creation time, id) of the last memory of a page; the next page starts below it. Ids are
unique, so the order is total and a page never repeats or skips a memory, whatever is stored meanwhile (new
memories are newer than the cursor and appear on a fresh listing).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from cortex import config
from cortex.errors import InvalidInputError
from cortex.model import Filters, Scope
from cortex.recall import Part

if TYPE_CHECKING:
    from cortex.index.memory_index import MemoryIndex
    from cortex.memories import MemoryRepository
from cortex.validation import check_datetime, check_duration, is_memory_id

#: A session id as provenance records it: short printable text.
_SESSION = re.compile(r"[\x21-\x7e][\x20-\x7e]{0,127}")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def encode_cursor(created: int, memory_id: str) -> str:
    """The cursor that continues after the memory created at ``created`` (microseconds) with ``memory_id``."""
    return base64.urlsafe_b64encode(f"{created}:{memory_id}".encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(cursor: object) -> tuple[int, str]:
    """The (creation, id) a cursor of :func:`encode_cursor` holds; InvalidInputError for anything else."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > 256:
        raise InvalidInputError("cursor", "not a cursor of this listing (pass next_cursor as it was returned)")
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        created, memory_id = text.split(":", 1)
        if not is_memory_id(memory_id):
            raise ValueError(memory_id)
        return int(created), memory_id
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise InvalidInputError("cursor", "not a cursor of this listing (pass next_cursor as it was returned)") from None


def check_session(value: object) -> str:
    """A session id to list the memories of: printable text of at most 128 characters, as provenance keeps it."""
    if not isinstance(value, str) or not _SESSION.fullmatch(value):
        raise InvalidInputError("session", f"must be a session id (printable text, at most 128 characters), "
                                           f"not {str(value)[:80]!r}")
    return value


def check_since(value: object, now: datetime) -> datetime:
    """A lower bound of creation time: a datetime, an ISO 8601 time (``2026-11-27T10:00:00Z``), or a duration back
    from ``now`` (``2h``, ``7d``, ``90m``)."""
    if isinstance(value, str):
        try:
            back: timedelta | None = check_duration(value, "since")
        except InvalidInputError:
            back = None
        if back is not None:
            try:
                return now - back
            except OverflowError:
                return _EPOCH
    if isinstance(value, (str, datetime)):
        try:
            return check_datetime(value, "since")
        except InvalidInputError:
            pass
    raise InvalidInputError("since", f"must be an ISO 8601 time (2026-11-27T10:00:00Z) or a duration back from now "
                                     f"(2h, 7d, 90m), not {str(value)[:80]!r}")


def made_in_session(repo: "MemoryRepository", scope: Scope, session: str) -> set[str]:
    """Ids of the memories of ``scope`` that writes of ``session`` created (their PROV-O activity names the
    session; changes of existing memories in it do not count)."""
    vocab = repo.store.vocab
    generated = NamedNode("http://www.w3.org/ns/prov#generated")
    text = (f"SELECT ?m WHERE {{ GRAPH {vocab.prov_graph(scope)} {{ ?a {vocab.predicate('session')} "
            f"{Literal(check_session(session))} ; {generated} ?m "
            f"FILTER NOT EXISTS {{ ?a {vocab.predicate('action')} ?x }} }} }}")
    return {i for row in repo.store.query(text) if (i := vocab.memory_id(scope, row["m"].value)) is not None}


def _newest(index: Any, filters: Filters, before: tuple[int, str] | None, want: int, floor: int | None,
            keep: Collection[str] | None) -> list[tuple[int, str]]:
    """``index.newest`` of the memories created at ``floor`` (microseconds) or later and in ``keep``: read in
    growing windows, newest first, until ``want`` pass or the index has no more."""
    if floor is None and keep is None:
        return index.newest(filters, before, want)  # type: ignore[no-any-return]
    if keep is not None and not keep:
        return []
    window = want
    while True:
        got = index.newest(filters, before, window)
        out = [(c, i) for c, i in got if (floor is None or c >= floor) and (keep is None or i in keep)]
        if len(out) >= want or len(got) < window or (floor is not None and got[-1][0] < floor):
            return out[:want]
        window *= 4


def page(parts: Sequence[Part], filters: Filters, cursor: str | None, limit: int, *, since: datetime | None = None,
         only: Mapping[Scope, Collection[str]] | None = None) -> tuple[list[tuple[Scope, str]], str | None]:
    """One page of the ``parts`` read as one, newest first: (scope, id) of at most ``limit`` memories, and the
    cursor of the next page (None when this one is the last). ``since``: only those created then or later;
    ``only``: only the ids it names per scope."""
    before = decode_cursor(cursor) if cursor is not None else None
    floor = (since - _EPOCH) // timedelta(microseconds=1) if since is not None else None
    rows = sorted(((created, memory_id, k) for k, part in enumerate(parts)
                   for created, memory_id in _newest(part.index, filters, before, limit + 1, floor,
                                                     None if only is None else only.get(part.scope, ()))),
                  reverse=True)
    shown = rows[:limit]
    more = len(rows) > limit
    return [(parts[k].scope, i) for _, i, k in shown], (encode_cursor(*shown[-1][:2]) if more and shown else None)


def usage_by_source(index: "MemoryIndex") -> dict[str, dict[str, int | float | None]]:
    """Per source of the index's live memories: ``memories``, ``shown`` (shown or touched at least once),
    ``used`` (drawn on by an output at least once), ``times_shown`` (usageCount summed), ``times_used``
    (usedCount summed) and ``ratio`` (times used / times shown; None when never shown). Every source that has
    memories, in the sources' order."""
    import numpy as np

    from cortex.index.memory_index import SOURCE_CODES

    docs = np.flatnonzero(index.alive.view)
    source, usage, used = (index.col(c)[docs] for c in ("source", "usage", "used"))
    out: dict[str, dict[str, int | float | None]] = {}
    for member, code in SOURCE_CODES.items():
        mine = source == code
        if mine.any():
            times_shown, times_used = int(usage[mine].sum()), int(used[mine].sum())
            out[member.value] = {"memories": int(mine.sum()), "shown": int((usage[mine] > 0).sum()),
                                 "used": int((used[mine] > 0).sum()), "times_shown": times_shown,
                                 "times_used": times_used,
                                 "ratio": use_ratio(times_used, times_shown)}
    return out




def usage_by_memory(index: "MemoryIndex", order: str, limit: int) -> list[str]:
    """Ids of at most ``limit`` live memories by their use: ``used`` (those an output drew on, most uses first:
    what proved useful), ``ratio`` (those shown, by uses per showing), ``shown`` (those shown, most first) or
    ``unused`` (those shown and never drawn on, most shown first)."""
    import numpy as np

    docs = np.flatnonzero(index.alive.view)
    shown, used = index.col("usage")[docs].astype(np.int64), index.col("used")[docs].astype(np.int64)
    ratio = np.where(shown > 0, used / np.maximum(shown, 1), 0.0)
    keep = {"used": used > 0, "ratio": shown > 0, "shown": shown > 0, "unused": (shown > 0) & (used == 0)}[order]
    # np.lexsort sorts by its last key first; ascending, so the keys are negated
    keys = {"used": (-shown, -ratio, -used), "ratio": (-shown, -used, -ratio), "shown": (-used, -shown),
            "unused": (-shown,)}[order]
    picked = np.flatnonzero(keep)
    ranked = picked[np.lexsort(tuple(k[picked] for k in keys))] if picked.size else picked
    return [index.ids[int(doc)] for doc in docs[ranked[:limit]]]


def use_ratio(used: int, shown: int) -> float | None:
    """Uses per showing, to three places (None when never shown): the ``ratio`` of the usage figures."""
    return round(used / shown, 3) if shown else None


#: Decay buckets of :func:`overview`: a memory is ``fresh`` at or above the first bound of its decay factor,
#: ``fading`` down to the second, ``stale`` below it (the factor halves every half-life of its source).
FRESH, FADING = 0.75, 0.4
#: A memory "expires soon" within this many days.
EXPIRING_DAYS = 7


def _current_docs(index: "MemoryIndex", now_us: int) -> Any:
    """The index's documents of current memories at ``now_us`` (microseconds)."""
    import numpy as np

    return np.flatnonzero(index.alive.view & index.current_mask(now_us)[:len(index.alive.view)])


def current_count(index: "MemoryIndex", now: datetime) -> int:
    """How many current memories the index holds at ``now`` (the ``total`` of :func:`overview`)."""
    from cortex.index.layout import to_micros

    return int(len(_current_docs(index, to_micros(now))))


def overview(index: "MemoryIndex", policy: Any, now: datetime) -> dict[str, Any]:
    """The figures of one scope's current memories, from the derived index alone (no store read): ``total``,
    counts ``by_type`` and ``by_source``, ``last_activity`` (the latest creation, change, validation or showing),
    ``decay`` (``fresh`` / ``fading`` / ``stale`` by the decay factor since the memory was last written or
    validated: :data:`FRESH`, :data:`FADING`), ``expiring_soon`` (within :data:`EXPIRING_DAYS` days),
    ``never_shown``, ``never_used`` and ``mean_confidence``."""
    import numpy as np

    from cortex.index.layout import NEVER, NONE, SOURCES, TYPES, from_micros, to_micros

    now_us = to_micros(now)
    docs = _current_docs(index, now_us)
    col = {name: index.col(name)[docs] for name in ("type_code", "source", "created", "updated", "validated",
                                                     "last_used", "expires", "usage", "used", "confidence")}
    by_type = {t.value: int((col["type_code"] == k).sum()) for k, t in enumerate(TYPES)}
    by_source = {s.value: n for k, s in enumerate(SOURCES) if (n := int((col["source"] == k).sum()))}
    start = np.maximum(np.maximum(col["created"], col["updated"]), np.where(col["validated"] == NONE, 0,
                                                                            col["validated"]))
    factor = policy.decay(start, col["source"], now_us) if len(docs) else np.zeros(0)
    latest = int(np.max(np.maximum(start, col["last_used"]))) if len(docs) else None
    soon = now_us + EXPIRING_DAYS * 86_400_000_000
    return {
        "total": int(len(docs)), "by_type": by_type, "by_source": by_source,
        "last_activity": from_micros(latest).isoformat().replace("+00:00", "Z") if latest is not None else None,
        "decay": {"fresh": int((factor >= FRESH).sum()), "fading": int(((factor < FRESH) & (factor >= FADING)).sum()),
                  "stale": int((factor < FADING).sum())},
        "expiring_soon": int(((col["expires"] != NEVER) & (col["expires"] <= soon)).sum()),
        "never_shown": int((col["usage"] == 0).sum()), "never_used": int((col["used"] == 0).sum()),
        "mean_confidence": round(float(col["confidence"].mean()), 3) if len(docs) else None,
    }
