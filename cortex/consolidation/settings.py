"""How consolidation runs: the bounds of a run, whether contradictions are applied, the periodic sweep.

Each setting comes from its ``CORTEX_CONSOLIDATE_*`` variable, else from the ``[consolidation]`` table of
``.cortex/config.toml``, else its default (docs/consolidation.md). The session bounds are JiuwenSwarm's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from cortex import config
from cortex.errors import InvalidInputError
from cortex.llm import config_table, whole_number
from cortex.validation import check_duration

#: Each setting's key in the ``[consolidation]`` table and its environment variable.
SETTINGS = {
    "every": "CORTEX_CONSOLIDATE_EVERY",
    "apply_contradictions": "CORTEX_CONSOLIDATE_APPLY_CONTRADICTIONS",
    "max_sessions": "CORTEX_CONSOLIDATE_MAX_SESSIONS",
    "session_tokens": "CORTEX_CONSOLIDATE_SESSION_TOKENS",
    "session_entries": "CORTEX_CONSOLIDATE_SESSION_ENTRIES",
    "min_rounds": "CORTEX_CONSOLIDATE_MIN_ROUNDS",
    "max_age": "CORTEX_CONSOLIDATE_MAX_AGE",
    "max_merges": "CORTEX_CONSOLIDATE_MAX_MERGES",
    "max_pairs": "CORTEX_CONSOLIDATE_MAX_PAIRS",
    "team_bound": "CORTEX_TEAM_MEMORY_BOUND",
}


@dataclass(frozen=True)
class ConsolidationSettings:
    """The rules of a consolidation run and of the sweep."""

    #: how often the owning process sweeps every scope (None: never, the default)
    every: timedelta | None = None
    #: contradictions the model finds are superseded (True) or listed for review (False, the default)
    apply_contradictions: bool = False
    #: sessions distilled per run, most recent first
    max_sessions: int = 10
    #: tokens of one session sent to the model (it is compressed to fit)
    session_tokens: int = 30_000
    #: learnings kept per session
    session_entries: int = 5
    #: a session with fewer rounds (user turns) is skipped
    min_rounds: int = 4
    #: a session older than this is skipped
    max_age: timedelta = timedelta(days=30)
    #: merges per run (the rest wait for the next run)
    max_merges: int = 500
    #: pairs of memories asked about contradicting per run
    max_pairs: int = 20
    #: current entries of a team memory
    team_bound: int = 200


_BOUNDS = {"max_sessions": (1, 1000), "session_tokens": (1000, 1_000_000), "session_entries": (1, 20),
           "min_rounds": (0, 1000), "max_merges": (1, 100_000), "max_pairs": (0, 1000), "team_bound": (1, 100_000)}


def consolidation_settings(env: Mapping[str, str] | None = None,
                           project_root: Path | None = None) -> ConsolidationSettings:
    """The settings from the environment (``env``, default the process's) and the project's config file; a bad
    value raises :class:`InvalidInputError` naming the variable or ``file:line``."""
    env = os.environ if env is None else env
    path = (config.find_project_root() if project_root is None else project_root) / config.CONFIG_FILE
    raw = config_table(path, "consolidation", SETTINGS)
    for key, variable in SETTINGS.items():
        if env.get(variable):
            raw[key] = (env[variable], variable)
    values: dict[str, object] = {}
    for key, (value, where) in raw.items():
        if key == "every":
            text = str(value).strip().lower()
            values[key] = None if text in ("", "off", "never", "0", "false", "no") else _duration(value, where)
        elif key == "max_age":
            values[key] = _duration(value, where)
        elif key == "apply_contradictions":
            values[key] = _flag(value, where)
        else:
            low, high = _BOUNDS[key]
            number = whole_number(value, where)
            if not low <= number <= high:
                raise InvalidInputError(where, f"must be between {low} and {high}, not {number}")
            values[key] = number
    return ConsolidationSettings(**values)  # type: ignore[arg-type]


def _duration(value: object, where: str) -> timedelta:
    try:
        return check_duration(str(value).strip(), where)
    except InvalidInputError:
        raise InvalidInputError(where, f"must be a duration such as 30m, 6h or 1d, not {value!r}") from None


def _flag(value: object, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise InvalidInputError(where, f"must be true or false, not {value!r}")
