"""The engine switch's settings: which memories answer and receive writes, through which providers, with what
time-out and weight (:mod:`cortex.providers.engine` has the whole story). Light on purpose: every process that
opens a store reads them, and only an engine with providers imports the rest of :mod:`cortex.providers`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex import config
from cortex.errors import InvalidInputError

#: A provider's weight against Cortex's own (1): see :mod:`cortex.providers.merge`.
DEFAULT_WEIGHT = 0.5

ENGINES = ("builtin", "external", "both", "none")
ENGINE_ENV = "CORTEX_ENGINE"
PROVIDERS_ENV = "CORTEX_PROVIDERS"
TIMEOUT_ENV = "CORTEX_PROVIDER_TIMEOUT"
WEIGHT_ENV = "CORTEX_PROVIDER_WEIGHT"
DEFAULT_TIMEOUT = 5.0
MAX_TIMEOUT = 120.0
#: The built-in providers' settings: option -> environment variable.
OPTIONS: Mapping[str, Mapping[str, str]] = {
    "mem0": {"url": "CORTEX_MEM0_URL", "api_key": "CORTEX_MEM0_API_KEY", "user_id": "CORTEX_MEM0_USER_ID"},
    "openviking": {"url": "CORTEX_OPENVIKING_URL", "api_key": "CORTEX_OPENVIKING_API_KEY",
                   "account": "CORTEX_OPENVIKING_ACCOUNT", "user": "CORTEX_OPENVIKING_USER"},
}
#: Words that make an option a secret: its value never appears in a message, a log line or a health answer.
SECRET_WORDS = ("key", "token", "secret", "password")
_TABLE = "providers"
REQUEST_SLACK = 1.0
"""Seconds a built-in provider's HTTP request may run past the engine's time-out."""
_FIXED = {"engine": ENGINE_ENV, "providers": PROVIDERS_ENV, "timeout": TIMEOUT_ENV, "weight": WEIGHT_ENV}


@dataclass(frozen=True)
class EngineSettings:
    """Which memories answer and receive writes (``engine``), through which ``providers``, with what time-out
    and weight; ``options``: each provider's own settings."""

    engine: str = "builtin"
    providers: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    weight: float = DEFAULT_WEIGHT
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def own(self) -> bool:
        """Whether Cortex's own store answers and is written (``builtin`` and ``both``)."""
        return self.engine in ("builtin", "both")

    @property
    def external(self) -> bool:
        """Whether providers answer and receive writes (``external`` and ``both``)."""
        return self.engine in ("external", "both")


def engine_settings(project_root: Path | None, environ: Mapping[str, str] | None = None) -> EngineSettings:
    """The settings from the environment and the ``[providers]`` table of the project's ``.cortex/config.toml``;
    InvalidInputError names a bad one (where it was set)."""
    env = os.environ if environ is None else environ
    table = _table(project_root / config.CONFIG_FILE) if project_root is not None else {}

    def setting(key: str) -> tuple[Any, str] | None:
        variable = _FIXED[key]
        if env.get(variable):
            return env[variable], variable
        return table.get(key)

    found = setting("engine")
    engine = str(found[0]).strip().lower() if found else "builtin"
    if engine not in ENGINES:
        raise InvalidInputError(found[1] if found else ENGINE_ENV,
                                f"must be one of {', '.join(ENGINES)}, not {found[0] if found else engine!r}")
    found = setting("providers")
    raw = found[0] if found else ()
    names = [n.strip() for n in (raw.split(",") if isinstance(raw, str) else raw)] if raw else []
    if not isinstance(raw, (str, list, tuple)) or not all(isinstance(n, str) for n in names):
        raise InvalidInputError(found[1] if found else PROVIDERS_ENV, "must be a comma list of provider names")
    providers: tuple[str, ...] = ()
    if any(names):
        from cortex.providers import registry

        providers = tuple(dict.fromkeys(registry.check_name(n, found[1] if found else PROVIDERS_ENV)
                                        for n in names if n))
    if engine in ("external", "both") and not providers:
        raise InvalidInputError(PROVIDERS_ENV, f"must name at least one provider when {ENGINE_ENV} is {engine} "
                                               "(built in: mem0, openviking)")
    timeout = _number(setting("timeout"), DEFAULT_TIMEOUT, 0.01, MAX_TIMEOUT, TIMEOUT_ENV)
    weight = _number(setting("weight"), DEFAULT_WEIGHT, 0.0, 100.0, WEIGHT_ENV)
    options: dict[str, dict[str, Any]] = {}
    for name in providers:
        given = table.get(name, ({}, ""))[0]
        if not isinstance(given, dict):
            raise InvalidInputError(table[name][1], f"must be a table ([{_TABLE}.{name}])")
        chosen = dict(given)
        for option, variable in OPTIONS.get(name, {}).items():
            if env.get(variable):
                chosen[option] = env[variable]
        if name in OPTIONS:
            unknown = sorted(set(chosen) - set(OPTIONS[name]) - {"timeout"})
            if unknown:
                raise InvalidInputError(f"[{_TABLE}.{name}]", f"{', '.join(unknown)} is not a setting of {name} "
                                                              f"(known: {', '.join(OPTIONS[name])})")
            # a second past the engine's own time-out, so the engine's "took longer than" is what a slow
            # provider reports, while the request still ends soon after instead of holding its thread
            chosen.setdefault("timeout", timeout + REQUEST_SLACK)
        options[name] = chosen
    return EngineSettings(engine, providers, timeout, weight, options)


def _table(path: Path) -> dict[str, tuple[Any, str]]:
    """The ``[providers]`` table of the settings file, each value with where it was set."""
    import tomllib

    from cortex.llm.settings import config_table

    if not path.exists():
        return {}
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        document = {}  # config_table below reports what is wrong with the file, where
    own = document.get(_TABLE)
    subtables = [k for k, v in own.items() if isinstance(v, dict)] if isinstance(own, dict) else []
    return config_table(path, _TABLE, known={**_FIXED, **{k: k for k in subtables}})


def _number(found: tuple[Any, str] | None, default: float, low: float, high: float, variable: str) -> float:
    if found is None:
        return default
    value, where = found
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(where, f"must be a number, not {value!r}") from None
    if not low <= number <= high:
        raise InvalidInputError(where, f"must be between {low:g} and {high:g}, not {number:g}")
    return number


def is_secret(option: str) -> bool:
    """Whether a provider option holds a secret (an API key, a token)."""
    return any(word in option.lower() for word in SECRET_WORDS)
