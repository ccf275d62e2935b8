"""The memory model: :class:`Memory`, :class:`MemoryType` and the validation of user-supplied fields."""

from __future__ import annotations

import math
import re
import os
import time
from datetime import datetime, timedelta, timezone
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from cortex.errors import InvalidInputError

#: Largest accepted content, in UTF-8 bytes. Memories are short learnings, not documents.
MAX_CONTENT_BYTES = 64 * 1024
#: Largest accepted project name, in characters.
MAX_PROJECT_CHARS = 200
DEFAULT_PROJECT = "global"
DEFAULT_CONFIDENCE = 0.7

AGENT_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MEMORY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class MemoryType(StrEnum):
    """What kind of learning a memory is."""

    PATTERN = "pattern"
    CONVENTION = "convention"
    INSIGHT = "insight"
    DECISION = "decision"


DEFAULT_TYPE = MemoryType.INSIGHT


class Memory(BaseModel):
    """One memory of one agent, as stored."""

    # defer_build: the validation schema is built on first use, not at import (a hook that only reads
    # memories, built with model_construct, never pays for it)
    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    agent: str
    content: str
    type: MemoryType
    project: str
    confidence: float
    usage_count: int
    created_at: datetime
    last_used_at: datetime


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


def new_memory_id() -> str:
    """A new URL-safe memory id that sorts by creation time: 12 hex digits of ms, 16 random hex digits."""
    return f"{time.time_ns() // 1_000_000:012x}{os.urandom(8).hex()}"


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


def check_content(content: Any) -> str:
    """Validate memory content; it is stored exactly as given."""
    if not isinstance(content, str):
        raise InvalidInputError("content", f"must be a string, not {type(content).__name__}")
    if not content.strip():
        raise InvalidInputError("content", "must not be empty or only whitespace")
    size = len(content.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInputError("content", f"is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes (64 KiB)")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError("content", "contains unpaired surrogate characters (not valid Unicode text)") from None
    return content


def check_type(value: Any) -> MemoryType:
    """Validate a memory type given as :class:`MemoryType` or its string value."""
    if isinstance(value, MemoryType):
        return value
    try:
        return MemoryType(value)
    except ValueError:
        allowed = ", ".join(t.value for t in MemoryType)
        raise InvalidInputError("type", f"unknown memory type {value!r}; use one of {allowed}") from None


def check_project(value: Any) -> str:
    """Validate a project name: 1-200 characters, no control characters, not only whitespace."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError("project", f"must be a non-empty string, not {value!r}")
    if len(value) > MAX_PROJECT_CHARS or _CONTROL.search(value):
        raise InvalidInputError(
            "project", f"must be at most {MAX_PROJECT_CHARS} characters without control characters"
        )
    return value


def check_confidence(value: Any, field: str = "confidence") -> float:
    """Validate a confidence: a real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(field, f"must be a number between 0 and 1, not {value!r}")
    try:
        value = float(value)
    except OverflowError:
        raise InvalidInputError(field, "must be between 0 and 1, got a number too large to represent") from None
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(field, f"must be between 0 and 1, got {value}")
    return value


def check_count(value: Any, field: str = "usage_count") -> int:
    """Validate a non-negative integer count."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise InvalidInputError(field, f"must be an integer from 0 to 2**63-1, not {value!r}")
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


def check_limit(value: Any, field: str = "limit", maximum: int = 10_000) -> int:
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
        result = timedelta(seconds=float(match.group(1)) * _DURATION_UNITS[match.group(2)])
    else:
        raise InvalidInputError(field, f"must be a duration like 30d, 12h, 90m or 45s, not {value!r}")
    if result.total_seconds() <= 0:
        raise InvalidInputError(field, f"must be a positive duration, not {value!r}")
    return result


class Hit(BaseModel):
    """One ranked search result."""

    model_config = ConfigDict(defer_build=True)

    memory: Memory
    score: float
    #: With ``explain=True``: the score's components ``lexical``, ``semantic``, ``fused``, ``recency``,
    #: ``usage``, ``confidence`` (``score == fused * recency * usage * confidence``).
    explain: dict[str, float] | None = None


class SearchResult(BaseModel):
    """Hits of :meth:`cortex.Cortex.search`, best first, with the mode actually used."""

    model_config = ConfigDict(defer_build=True)

    hits: list[Hit]
    mode: str
    requested_mode: str
    #: Set when the requested mode could not be used (e.g. no embedding provider) and what was done instead.
    note: str | None = None

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self):  # type: ignore[override]
        return iter(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]
