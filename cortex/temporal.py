"""Time named in a query: "three weeks ago", "yesterday", "last month". Ranked search favours the memories
written around the moment such a phrase points at (docs/retrieval.md measures it on LongMemEval, whose
questions are asked at a date of their own). A query about the past of a fact ("what did we use previously",
"before we switched") also reads the superseded versions, which search otherwise leaves out.

Only phrases that name a distance back from now count; an absolute date ("in March") is left to the lexical
side, which matches the date a memory carries in its text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from cortex.index.memory_index import to_micros

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NAMED = {"yesterday": 1, "the day before yesterday": 2, "last weekend": 5, "last week": 7, "last month": 30,
          "last year": 365}
_AGO = re.compile(r"\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few)"
                  r"\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_NAMED_RE = re.compile(r"\b(the day before yesterday|yesterday|last weekend|last week|last month|last year)\b",
                       re.IGNORECASE)
_LOOKS_BACK = re.compile(
    r"\b(?:used to|previously|formerly|originally|at first|in the past|before (?:we|they|I|it|you) "
    r"(?:switched|moved|migrated|changed|replaced|upgraded|dropped)|the old (?:way|setup)"
    r"|what did (?:we|I|you) use before)\b", re.IGNORECASE)
#: How much a memory written around the moment gains (a factor on its relevance): measured, see the docs.
BOOST = 1.25


@dataclass(frozen=True)
class TimeCue:
    """The moment a query points at, and how far from it a memory still counts as written then."""

    phrase: str
    at: datetime
    tolerance: timedelta

    def near(self, created_us: np.ndarray) -> np.ndarray:
        """Which of these creation moments (microseconds since the epoch, the index's unit) lie around it."""
        distance = np.abs(np.asarray(created_us, dtype=np.int64) - to_micros(self.at))
        mask: np.ndarray = distance <= self.tolerance // timedelta(microseconds=1)
        return mask


def time_cue(text: str, now: datetime) -> TimeCue | None:
    """The moment ``text`` points at ("2 weeks ago": now minus 14 days, give or take 7), or None. The tolerance is
    half the distance, at least two days: people round ("a month ago" is rarely 30 days)."""
    match = _AGO.search(text)
    if match is not None:
        count = match.group(1).lower()
        days = (int(count) if count.isdigit() else _NUMBERS[count]) * _UNITS[match.group(2).lower()]
        phrase = match.group(0)
    else:
        named = _NAMED_RE.search(text)
        if named is None:
            return None
        phrase = named.group(0)
        days = _NAMED[phrase.lower()]
    back = timedelta(days=days)
    return TimeCue(phrase, now - back, max(timedelta(days=2), back / 2))


def looks_back(text: str) -> bool:
    """Whether ``text`` asks about how something was before it changed ("used to", "previously", "before we
    switched", "the old setup"): then the versions a supersession replaced are answers too."""
    return _LOOKS_BACK.search(text) is not None
