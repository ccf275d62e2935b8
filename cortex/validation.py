"""Validation of every value a user gives Cortex. Each check returns the accepted (normalised) value or
raises :class:`~cortex.errors.InvalidInputError` naming the field and what is wrong."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from cortex import config
from cortex.errors import InvalidInputError
from cortex.names import AGENT_NAME_RE as AGENT_NAME_RE
from cortex.names import MEMORY_ID_RE as MEMORY_ID_RE
from cortex.names import check_agent_name as check_agent_name
from cortex.names import is_memory_id as is_memory_id
from cortex.model import Filters, Memory, MemoryType, Query, Source, new_memory_id

#: Largest accepted content, in UTF-8 bytes. Memories are short learnings, not documents.
MAX_CONTENT_BYTES = 64 * 1024
#: Largest accepted project name, in characters.
MAX_PROJECT_CHARS = 200
#: Largest usage count accepted from imports: far beyond any real use, and ``+ 1`` never overflows a store.
MAX_COUNT = 2**53

#: Control characters (C0, DEL and C1) and the Unicode line and paragraph separators: none in a project name.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


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


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


#: A number a surface's request model takes: JSON ``true``/``false`` are refused, as the Python API refuses a bool
#: (pydantic would read them as 1 and 0).
Number = Annotated[float, BeforeValidator(_no_bool)]

#: Largest supersession reason, in UTF-8 bytes.
MAX_REASON_BYTES = 4096


def check_reason(value: Any, field: str = "reason") -> str:
    """A supersession reason: text of at most :data:`MAX_REASON_BYTES` bytes of UTF-8."""
    reason = check_text(value, field)
    if len(reason.encode("utf-8")) > MAX_REASON_BYTES:
        raise InvalidInputError(field, f"is longer than {MAX_REASON_BYTES} bytes")
    return reason


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


MAX_TAGS = 32
MAX_METADATA_BYTES = 8 * 1024
#: Deepest nesting of metadata's objects and arrays (serialisers refuse values nested a few hundred deep).
MAX_METADATA_DEPTH = 32
TAG_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
TEAM_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def check_source(value: Any, field: str = "source") -> Source:
    """A memory source given as :class:`Source` or its string value."""
    if isinstance(value, Source):
        return value
    try:
        return Source(value)
    except ValueError:
        allowed = ", ".join(s.value for s in Source)
        raise InvalidInputError(field, f"unknown source {value!r}; use one of {allowed}") from None


def check_ttl(value: Any, field: str = "ttl") -> timedelta | Literal["never"] | None:
    """A time to live: a timedelta or ``"12h"``/``"7d"`` style duration, ``"never"``, or None (the source's)."""
    if value is None or value == NEVER_EXPIRES:
        return value  # type: ignore[no-any-return]
    return check_duration(value, field)


def check_tags(value: Any, field: str = "tags") -> tuple[str, ...]:
    """Tags: lowercase slugs (``[a-z0-9][a-z0-9._-]{0,63}``), at most 32; returned sorted, without repeats."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise InvalidInputError(field, f"must be a list of tags, not {type(value).__name__}")
    for tag in value:
        if not isinstance(tag, str) or not TAG_RE.fullmatch(tag):
            raise InvalidInputError(field, f"invalid tag {tag!r}: use 1-64 of a-z, 0-9, '.', '_' and '-', "
                                           "starting with a letter or digit (lower case)")
    tags = tuple(sorted(set(value)))
    if len(tags) > MAX_TAGS:
        raise InvalidInputError(field, f"has {len(tags)} tags; the limit is {MAX_TAGS}")
    return tags


def json_depth(value: Any, limit: int) -> int:
    """How deeply ``value``'s objects and arrays nest (a scalar is 0), counted without recursion; stops counting
    past ``limit`` (returns ``limit + 1``)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > limit:
                return limit + 1
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_metadata(value: Any, field: str = "metadata") -> dict[str, Any] | None:
    """Metadata: a JSON object (string keys, JSON values), at most 8 KiB serialised and nested at most
    :data:`MAX_METADATA_DEPTH` levels; None for none (or {})."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInputError(field, f"must be a JSON object, not {type(value).__name__}")
    if json_depth(value, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH:
        raise InvalidInputError(field, f"is nested more than {MAX_METADATA_DEPTH} levels deep (objects and arrays); "
                                       f"that is the limit")
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        size = len(text.encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(field, f"is not JSON: {exc}") from None
    except UnicodeEncodeError:
        raise InvalidInputError(field, "contains unpaired surrogate characters (not valid Unicode text)") from None
    if size > MAX_METADATA_BYTES:
        raise InvalidInputError(field, f"is {size} bytes as JSON; the limit is {MAX_METADATA_BYTES} bytes (8 KiB)")
    copied: dict[str, Any] = json.loads(text)  # a copy: later changes to the caller's dict change nothing
    return copied or None  # {} is no metadata: stored and returned as None


def check_team_name(value: Any, field: str = "team") -> str:
    """A team name: 1-64 of a-z, 0-9, '_' and '-'."""
    if not isinstance(value, str) or not TEAM_RE.fullmatch(value):
        raise InvalidInputError(field, f"invalid team name {value!r}: use 1-64 of a-z, 0-9, '_' and '-'")
    return value


def check_scope(value: Any, field: str = "scope") -> str:
    """A scope as an agent names it: ``agent``, ``team:{name}`` or ``swarm``."""
    if value in ("agent", "swarm"):
        return str(value)
    if isinstance(value, str) and value.startswith("team:"):
        return f"team:{check_team_name(value[5:], field)}"
    raise InvalidInputError(field, f"must be 'agent', 'team:NAME' or 'swarm', not {value!r}")


def check_version(value: Any, field: str = "expected_version") -> int:
    """A memory version: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise InvalidInputError(field, f"must be a version number (an integer >= 1), not {value!r}")
    return value


def check_query_text(value: Any, field: str = "query") -> str:
    """A query or task text (any text, hostile included: it is never interpreted as syntax), at most as long as
    a memory's content: a longer one would only cost time to analyse and embed."""
    text = check_text(value, field)
    size = len(text.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInputError(field, f"is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes (64 KiB)")
    return text


def check_flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(field, f"must be true or false, not {value!r}")
    return value


def filters(*, type: Any = None, project: Any = None, tags: Any = None, source: Any = None,
            include_expired: Any = False, include_superseded: Any = False, as_of: Any = None,
            now: datetime | None = None) -> Filters:
    """Validated filters of a read (None: no filter on that field)."""
    return Filters(
        types=frozenset([check_type(type)]) if type is not None else None,
        projects=frozenset([check_project(project)]) if project is not None else None,
        tags=frozenset(check_tags(tags)) if tags else None,
        sources=frozenset([check_source(source)]) if source is not None else None,
        include_expired=check_flag(include_expired, "include_expired"),
        include_superseded=check_flag(include_superseded, "include_superseded"),
        as_of=check_datetime(as_of, "as_of") if as_of is not None else None,
        now=now,
    )


def query(agent: str, text: Any, *, type: Any = None, project: Any = None, limit: Any = config.DEFAULT_LIMIT,
          text_required: bool = False, tags: Any = None, source: Any = None, include_expired: Any = False,
          include_superseded: Any = False, as_of: Any = None, now: datetime | None = None) -> Query:
    """A validated :class:`~cortex.model.Query` (its scopes are the facade's to resolve)."""
    if text is not None or text_required:
        text = check_query_text(text)
    return Query(agent=agent, text=text, limit=check_limit(limit), filters=filters(
        type=type, project=project, tags=tags, source=source, include_expired=include_expired,
        include_superseded=include_superseded, as_of=as_of, now=now))


#: The fields an entry of ``store_many`` may carry: what ``store`` takes, and what an import keeps.
ENTRY_FIELDS = frozenset({"content", "type", "project", "confidence", "source", "ttl", "tags", "metadata", "scope",
                          "usage_count", "used_count", "created_at", "last_used_at", "expires_at", "valid_from"})

#: When a memory of a source created at a moment expires, given an explicit ttl (the lifecycle's policy).
Expiry = Callable[[Source, datetime, "timedelta | Literal['never'] | None"], "datetime | None"]


def memory_from_entry(agent: str, entry: Any, now: datetime, expiry: Expiry | None = None, *,
                      author: str | None = None, scope: str = "agent") -> Memory:
    """A new memory (fresh id) from a ``store``/``store_many`` entry, every field validated. ``expiry`` gives
    its expiry from its source and ``ttl`` (none: it does not expire unless ``expires_at`` is given)."""
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
    source = check_source(entry.get("source", Source.MANUAL))
    ttl = check_ttl(entry.get("ttl"))
    if entry.get("expires_at") is not None:
        if ttl is not None:
            raise InvalidInputError("ttl", "give ttl or expires_at, not both")
        expires: datetime | None = check_datetime(entry["expires_at"], "expires_at")
    else:
        expires = expiry(source, created, ttl) if expiry is not None else None
    return Memory.model_construct(
        id=new_memory_id(),
        agent=agent,
        content=check_content(entry["content"]),
        type=check_type(entry.get("type", config.DEFAULT_TYPE)),
        project=check_project(entry.get("project", config.DEFAULT_PROJECT)),
        confidence=check_confidence(entry.get("confidence", config.DEFAULT_CONFIDENCE)),
        usage_count=check_count(entry.get("usage_count", 0)),
        used_count=check_count(entry.get("used_count", 0), "used_count"),
        created_at=created,
        last_used_at=last_used,
        source=source,
        expires_at=expires,
        tags=check_tags(entry.get("tags")),
        metadata=check_metadata(entry.get("metadata")),
        version=1, updated_at=created, validated_at=None, valid_until=None, superseded_by=None, superseded_reason=None,
        valid_from=check_datetime(entry["valid_from"], "valid_from") if entry.get("valid_from") is not None else created,
        scope=scope, author=author or agent,
    )


#: What ``ttl=`` accepts besides a duration: the memory never expires.
NEVER_EXPIRES: Literal["never"] = "never"


def parse_source_durations(text: str, field: str, allow_never: bool) -> dict[Source, timedelta | None]:
    """``"task_completion=10d,session_summary=never"`` as {source: duration (None: never)}."""
    out: dict[Source, timedelta | None] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        try:
            source = Source(name.strip())
        except ValueError:
            raise InvalidInputError(field, f"unknown source {name.strip()!r}; use one of "
                                           f"{', '.join(s.value for s in Source)}") from None
        value = value.strip()
        out[source] = None if allow_never and value == NEVER_EXPIRES else check_duration(value, field)
    return out
