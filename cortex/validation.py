"""Validation of every value a user gives Cortex. Each check returns the accepted (normalised) value or
raises :class:`~cortex.errors.InvalidInputError` naming the field and what is wrong."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from cortex import config
from cortex.errors import InvalidInputError
from cortex.model import Filters, Memory, MemoryType, Query, new_memory_id

#: Largest accepted content, in UTF-8 bytes. Memories are short learnings, not documents.
MAX_CONTENT_BYTES = 64 * 1024
#: Largest accepted project name, in characters.
MAX_PROJECT_CHARS = 200
#: Largest usage count accepted from imports: far beyond any real use, and ``+ 1`` never overflows a store.
MAX_COUNT = 2**53

AGENT_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MEMORY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_agent_name(name: Any) -> str:
    """Return ``name`` if it is a valid agent name, else raise :class:`InvalidInputError`."""
    if not isinstance(name, str) or not AGENT_NAME_RE.fullmatch(name):
        raise InvalidInputError(
            "agent", f"invalid agent name {name!r}: use 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit"
        )
    return name


def is_memory_id(value: Any) -> bool:
    """True when ``value`` has the shape of a Cortex memory id."""
    return isinstance(value, str) and MEMORY_ID_RE.fullmatch(value) is not None


def check_text(value: Any, field: str) -> str:
    """A string that is valid Unicode text (no unpaired surrogates)."""
    if not isinstance(value, str):
        raise InvalidInputError(field, f"must be a string, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(field, "contains unpaired surrogate characters (not valid Unicode text)") from None
    return value


def check_content(content: Any) -> str:
    """Validate memory content; it is stored exactly as given."""
    if not isinstance(content, str):
        raise InvalidInputError("content", f"must be a string, not {type(content).__name__}")
    if not content.strip():
        raise InvalidInputError("content", "must not be empty or only whitespace")
    size = len(content.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInputError("content", f"is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes (64 KiB)")
    return check_text(content, "content")


def check_type(value: Any, field: str = "type") -> MemoryType:
    """Validate a memory type given as :class:`MemoryType` or its string value."""
    if isinstance(value, MemoryType):
        return value
    try:
        return MemoryType(value)
    except ValueError:
        allowed = ", ".join(t.value for t in MemoryType)
        raise InvalidInputError(field, f"unknown memory type {value!r}; use one of {allowed}") from None


def check_project(value: Any, field: str = "project") -> str:
    """Validate a project name: 1-200 characters, no control characters, not only whitespace."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(field, f"must be a non-empty string, not {value!r}")
    if len(value) > MAX_PROJECT_CHARS or _CONTROL.search(value):
        raise InvalidInputError(field, f"must be at most {MAX_PROJECT_CHARS} characters without control characters")
    return check_text(value, field)


def check_confidence(value: Any, field: str = "confidence") -> float:
    """Validate a confidence: a real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(field, f"must be a number between 0 and 1, not {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise InvalidInputError(field, "must be between 0 and 1, got a number too large to represent") from None
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise InvalidInputError(field, f"must be between 0 and 1, got {number}")
    return number


def check_count(value: Any, field: str = "usage_count") -> int:
    """Validate a non-negative integer count (at most 2**53, see :data:`MAX_COUNT`)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise InvalidInputError(field, f"must be an integer from 0 to 2**53, not {value!r}")
    return value


def check_datetime(value: Any, field: str) -> datetime:
    """Validate a timestamp (datetime or ISO 8601 string) and return it in UTC; naive means UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInputError(field, f"is not an ISO 8601 timestamp: {value!r}") from None
    if not isinstance(value, datetime):
        raise InvalidInputError(field, f"must be a datetime or ISO 8601 string, not {type(value).__name__}")
    try:
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidInputError(field, f"is out of the representable range: {value!r}") from None


def check_limit(value: Any, field: str = "limit", maximum: int = config.MAX_LIMIT) -> int:
    """Validate a result limit: an integer from 1 to ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInputError(field, f"must be an integer from 1 to {maximum}, not {value!r}")
    return value


_DURATION_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def check_duration(value: Any, field: str = "max_age") -> timedelta:
    """Parse ``30d``, ``12h``, ``90m``, ``45s``, ``2w`` (or take a timedelta); must be positive."""
    if isinstance(value, timedelta):
        result = value
    elif isinstance(value, str) and (match := _DURATION_RE.fullmatch(value)):
        try:
            result = timedelta(seconds=float(match.group(1)) * _DURATION_UNITS[match.group(2)])
        except OverflowError:
            raise InvalidInputError(field, f"{value!r} is longer than the largest duration (999999999 days)") from None
    else:
        raise InvalidInputError(field, f"must be a duration like 30d, 12h, 90m or 45s, not {value!r}")
    if result.total_seconds() <= 0:
        raise InvalidInputError(field, f"must be a positive duration, not {value!r}")
    return result


def check_query_text(value: Any, field: str = "query") -> str:
    """A query or task text (any text, hostile included: it is never interpreted as syntax), at most as long as
    a memory's content: a longer one would only cost time to analyse and embed."""
    text = check_text(value, field)
    size = len(text.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInputError(field, f"is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes (64 KiB)")
    return text


def filters(*, type: Any = None, project: Any = None) -> Filters:
    """Validated filters of a read (None: no filter on that field)."""
    return Filters(
        types=frozenset([check_type(type)]) if type is not None else None,
        projects=frozenset([check_project(project)]) if project is not None else None,
    )


def query(agent: str, text: Any, *, type: Any = None, project: Any = None, limit: Any = config.DEFAULT_LIMIT,
          text_required: bool = False) -> Query:
    """A validated :class:`~cortex.model.Query`."""
    if text is not None or text_required:
        text = check_query_text(text)
    return Query(agent=agent, text=text, filters=filters(type=type, project=project), limit=check_limit(limit))


#: The fields an entry of ``store_many`` may carry.
ENTRY_FIELDS = frozenset({"content", "type", "project", "confidence", "usage_count", "created_at", "last_used_at"})


def memory_from_entry(agent: str, entry: Any, now: datetime) -> Memory:
    """A new memory (fresh id) from a ``store``/``store_many`` entry, every field validated."""
    if not isinstance(entry, Mapping):
        raise InvalidInputError("entry", f"must be a mapping, not {type(entry).__name__}")
    unknown = sorted(set(map(str, entry)) - ENTRY_FIELDS)
    if unknown:
        hint = " (ids are generated by Cortex)" if "id" in unknown else ""
        raise InvalidInputError(unknown[0], f"unknown field{hint}")
    if "content" not in entry:
        raise InvalidInputError("content", "missing")
    created = check_datetime(entry["created_at"], "created_at") if entry.get("created_at") is not None else now
    last_used = (
        check_datetime(entry["last_used_at"], "last_used_at") if entry.get("last_used_at") is not None else created
    )
    return Memory(
        id=new_memory_id(),
        agent=agent,
        content=check_content(entry["content"]),
        type=check_type(entry.get("type", config.DEFAULT_TYPE)),
        project=check_project(entry.get("project", config.DEFAULT_PROJECT)),
        confidence=check_confidence(entry.get("confidence", config.DEFAULT_CONFIDENCE)),
        usage_count=check_count(entry.get("usage_count", 0)),
        created_at=created,
        last_used_at=last_used,
    )
