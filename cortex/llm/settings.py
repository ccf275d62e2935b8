"""Where the language model is and how much of it to use: :class:`LLMSettings`, from ``$CORTEX_LLM_*`` or the
``[llm]`` table of ``.cortex/config.toml`` (:func:`llm_settings`); without a URL no model is used.

The readers of that file's tables (:func:`config_table`, :func:`whole_number`) serve other settings too
(``[consolidation]``: :mod:`cortex.consolidation.settings`).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from cortex import config
from cortex.errors import InvalidInputError


@dataclass(frozen=True)
class LLMSettings:
    """Where the model is and how much of it to use."""

    #: The base URL of the API, without a trailing slash (``http://localhost:11434/v1``).
    url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    #: Seconds one request may take (connecting, sending, and each wait for the answer).
    timeout: float = config.DEFAULT_LLM_TIMEOUT
    #: Seconds one call (:meth:`LLMClient.complete_json`, its retry included) may take in all: cut off then.
    deadline: float = config.DEFAULT_LLM_DEADLINE
    #: Tokens of transcript one extraction may send (:func:`estimate_tokens`).
    token_budget: int = config.DEFAULT_LLM_TOKEN_BUDGET
    #: Memories one extraction may keep.
    max_memories: int = config.DEFAULT_LLM_MAX_MEMORIES


#: Each setting's key in the ``[llm]`` table and its environment variable.
_SETTINGS = {
    "url": config.LLM_URL_ENV,
    "model": config.LLM_MODEL_ENV,
    "api_key": config.LLM_API_KEY_ENV,
    "timeout": config.LLM_TIMEOUT_ENV,
    "deadline": config.LLM_DEADLINE_ENV,
    "token_budget": config.LLM_TOKEN_BUDGET_ENV,
    "max_memories": config.LLM_MAX_MEMORIES_ENV,
}


def llm_settings(env: Mapping[str, str] | None = None, project_root: Path | None = None) -> LLMSettings | None:
    """The language model's settings: each from its ``$CORTEX_LLM_*`` variable in ``env`` (default: the
    process's environment; an empty variable counts as unset), else from the ``[llm]`` table of
    ``<project_root>/.cortex/config.toml`` (default root: :func:`config.find_project_root`; no file is fine).
    None when no URL is configured. A bad value, or a file that is not TOML, raises
    :class:`InvalidInputError` whose field names the variable or ``file:line``."""
    env = os.environ if env is None else env
    path = (config.find_project_root() if project_root is None else project_root) / config.CONFIG_FILE
    raw: dict[str, tuple[object, str]] = config_table(path)  # key -> (value, where it was set)
    for key, variable in _SETTINGS.items():
        if env.get(variable):
            raw[key] = (env[variable], variable)
    if "url" not in raw:
        return None
    url = _url(*raw["url"])
    if "model" not in raw:
        raise InvalidInputError(config.LLM_MODEL_ENV, f"is required when a URL is set ({raw['url'][1]}); set it, "
                                                      f"or model in the [llm] table of {path}")
    model = _text(*raw["model"])
    if not model:
        raise InvalidInputError(raw["model"][1], "is empty")
    api_key = (_text(*raw["api_key"]) or None) if "api_key" in raw else None
    timeout = _number(*raw["timeout"]) if "timeout" in raw else config.DEFAULT_LLM_TIMEOUT
    deadline = _number(*raw["deadline"]) if "deadline" in raw else config.DEFAULT_LLM_DEADLINE
    if deadline > config.MAX_LLM_DEADLINE:
        raise InvalidInputError(raw["deadline"][1], f"must be at most {config.MAX_LLM_DEADLINE:g} seconds, "
                                                    f"not {deadline:g}")
    budget = whole_number(*raw["token_budget"]) if "token_budget" in raw else config.DEFAULT_LLM_TOKEN_BUDGET
    if budget < config.MIN_LLM_TOKEN_BUDGET:
        raise InvalidInputError(raw["token_budget"][1], f"must be at least {config.MIN_LLM_TOKEN_BUDGET}, not {budget}")
    most = whole_number(*raw["max_memories"]) if "max_memories" in raw else config.DEFAULT_LLM_MAX_MEMORIES
    if not 1 <= most <= config.MAX_LLM_MAX_MEMORIES:
        raise InvalidInputError(raw["max_memories"][1],
                                f"must be between 1 and {config.MAX_LLM_MAX_MEMORIES}, not {most}")
    return LLMSettings(url=url, model=model, api_key=api_key, timeout=timeout, deadline=deadline,
                       token_budget=budget,
                       max_memories=most)


def config_table(path: Path, name: str = "llm", known: Mapping[str, str] | None = None
                 ) -> dict[str, tuple[object, str]]:
    """The ``[name]`` table (default ``[llm]``) of the settings file, each value with ``file:line [name] key``;
    empty when there is no file or no table. ``known``: its settings (default: the model's)."""
    known = _SETTINGS if known is None else known
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(str(path), f"cannot be read: {exc}") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's error has no line attribute; its message ends "(at line N, column M)".
        found = re.search(r"at line (\d+)", str(exc))
        where = f"{path}:{found.group(1)}" if found else str(path)
        raise InvalidInputError(where, f"is not valid TOML: {exc}") from None
    table = document.get(name)
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise InvalidInputError(f"{path}:{_line_of(text, name, name) or '?'}", f"{name} must be a table ([{name}])")
    values: dict[str, tuple[object, str]] = {}
    for key, value in table.items():
        where = f"{path}:{_line_of(text, key, name) or '?'} [{name}] {key}"
        if key not in known:
            raise InvalidInputError(where, f"is not a setting (known: {', '.join(known)})")
        values[key] = (value, where)
    return values


def _line_of(text: str, key: str, name: str = "llm") -> int | None:
    """The line (1-based) that sets ``key`` of the ``[name]`` table (or opens it, for ``key == name``), for
    messages."""
    table = None
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            table = header.group(1).strip("\"'")
            if key == name and table == name:
                return number
            continue
        assigned = re.match(r"\s*([\w\"'.-]+)\s*=", line)
        if assigned:
            setting = assigned.group(1).strip("\"'")
            if table == name and setting == key:
                return number
            if table is None and setting == (key if key == name else f"{name}.{key}"):  # llm = ..., llm.url = ...
                return number
    return None


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(where, f"must be a string, not {value!r}")
    return value.strip()


def _url(value: object, where: str) -> str:
    url = _text(value, where)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInputError(where, f"must be an http(s) URL such as http://localhost:11434/v1, not {url!r}")
    return url.rstrip("/")


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidInputError(where, f"must be a number of seconds, not {value!r}")
    try:
        seconds = float(value)
    except ValueError:
        raise InvalidInputError(where, f"must be a number of seconds, not {value!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise InvalidInputError(where, f"must be a number of seconds above 0, not {value!r}")
    return seconds


def whole_number(value: object, where: str) -> int:
    """``value`` (an integer, or a string holding one) as an ``int``; anything else raises
    :class:`InvalidInputError` naming ``where``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise InvalidInputError(where, f"must be a whole number, not {value!r}")


#: The names these had before they were shared with other settings (:mod:`cortex.consolidation.settings`).
_config_table = config_table
_integer = whole_number
