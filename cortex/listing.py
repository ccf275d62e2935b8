"""Listing: pages through everything an agent can see, newest first, with an opaque cursor.

A cursor encodes the (creation time, id) of the last memory of a page; the next page starts below it. Ids are
unique, so the order is total and a page never repeats or skips a memory, whatever is stored meanwhile (new
memories are newer than the cursor and appear on a fresh listing).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cortex.errors import InvalidInputError
from cortex.model import Filters, Scope
from cortex.recall import Part

if TYPE_CHECKING:
    from cortex.index.memory_index import MemoryIndex
from cortex.validation import is_memory_id


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


def page(parts: Sequence[Part], filters: Filters, cursor: str | None, limit: int) -> tuple[list[tuple[Scope, str]], str | None]:
    """One page of the ``parts`` read as one, newest first: (scope, id) of at most ``limit`` memories, and the
    cursor of the next page (None when this one is the last)."""
    before = decode_cursor(cursor) if cursor is not None else None
    rows = sorted(((created, memory_id, k) for k, part in enumerate(parts)
                   for created, memory_id in part.index.newest(filters, before, limit + 1)), reverse=True)
    shown = rows[:limit]
    more = len(rows) > limit
    return [(parts[k].scope, i) for _, i, k in shown], (encode_cursor(*shown[-1][:2]) if more and shown else None)


def usage_by_source(index: "MemoryIndex") -> dict[str, dict[str, int]]:
    """Per source of the index's live memories: ``memories``, ``shown`` (shown or touched at least once),
    ``used`` (drawn on by an output at least once), ``times_shown`` (usageCount summed) and ``times_used``
    (usedCount summed). Every source that has memories, in the sources' order."""
    import numpy as np

    from cortex.index.memory_index import SOURCE_CODES

    docs = np.flatnonzero(index.alive.view)
    source, usage, used = (index.col(c)[docs] for c in ("source", "usage", "used"))
    out: dict[str, dict[str, int]] = {}
    for member, code in SOURCE_CODES.items():
        mine = source == code
        if mine.any():
            out[member.value] = {"memories": int(mine.sum()), "shown": int((usage[mine] > 0).sum()),
                                 "used": int((used[mine] > 0).sum()), "times_shown": int(usage[mine].sum()),
                                 "times_used": int(used[mine].sum())}
    return out
