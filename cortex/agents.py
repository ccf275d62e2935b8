"""Agent definitions: Markdown files with YAML frontmatter (docs/architecture.md, "Agent definitions"), or registered in code.

A definition names the agent, describes it, says whether it has memory, and may carry Cortex settings
under ``cortex:``. Every other frontmatter key (tools, model, color, hooks ...) is kept as it is. Loading
never skips a broken file silently: each problem becomes an :class:`AgentProblem` with the file, the field
and what is wrong.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from cortex.errors import (
    AgentDefinitionError,
    AgentNotFoundError,
    BrokenAgentError,
    InvalidInputError,
    MemoryDisabledError,
)
from cortex.files import read_regular
from cortex.model import AgentProblem
from cortex.validation import (
    AGENT_NAME_RE,
    check_agent_name,
    check_confidence,
    check_duration,
    check_limit,
    check_project,
    parse_source_durations,
)

log = logging.getLogger("cortex")
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MEMORY_SCOPES = ("user", "project", "local")
_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}
#: An agent definition larger than this is reported, not parsed (a definition is a page of text).
MAX_DEFINITION_BYTES = 1024 * 1024
_CORTEX_KEYS = {"project", "recall", "prune", "aliases", "memory", "teams", "lead", "ttl", "decay", "notes"}
_TEAM = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: An alias is a coding agent's own name for the agent (Claude Code: ``Explore``, ``my-plugin:reviewer``).
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,199}")
_RECALL_KEYS = {"limit", "max_chars"}
_PRUNE_KEYS = {"min_confidence", "max_age"}


@dataclass(frozen=True)
class AgentSettings:
    """The ``cortex:`` block of a definition."""

    project: str | None = None
    recall_limit: int | None = None
    recall_max_chars: int | None = None
    prune_min_confidence: float = 0.3
    prune_max_age: timedelta | None = None
    #: Other names coding agents use for this agent (a plugin's ``my-plugin:reviewer``, a built-in ``Explore``).
    aliases: tuple[str, ...] = ()
    #: The teams the agent belongs to; a lead leads its teams and the swarm.
    teams: tuple[str, ...] = ()
    lead: bool = False
    #: Temporary teams among ``teams`` and the parent team of each (``teams: [{name: sprint-7, parent: backend}]``):
    #: a temporary team's members read its parent's memory (not write it), and it has no extractor.
    parents: dict[str, str] = field(default_factory=dict)
    #: Time to live and decay half-life by source, over the defaults (docs/lifecycle.md).
    ttl: dict[str, timedelta | None] = field(default_factory=dict)
    decay: dict[str, timedelta] = field(default_factory=dict)
    #: Notes directories besides ``.cortex/notes/{name}/`` (relative to the project root, or absolute):
    #: their Markdown files are a source of the agent's memory (docs/capture.md, "Markdown notes").
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentDefinition:
    """One declared agent."""

    name: str
    description: str = ""
    #: True, False, or the Claude Code scope ("user", "project", "local"), which also enables memory.
    memory: bool | str = False
    settings: AgentSettings = field(default_factory=AgentSettings)
    #: Every other frontmatter key, kept as it was.
    extra: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""
    path: Path | None = None

    @property
    def memory_enabled(self) -> bool:
        """Whether the agent may store and recall memories."""
        return self.memory is not False


class _Problem(Exception):
    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message


def _memory_value(value: Any) -> bool | str:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        if lowered in MEMORY_SCOPES:
            return lowered
    raise _Problem("memory", f"must be true, false, user, project or local, not {value!r}")


_SETTING_CHECKS: dict[tuple[str, str], tuple[str, Any]] = {
    ("recall", "limit"): ("recall_limit", lambda v, f: check_limit(v, f, 1000)),
    ("recall", "max_chars"): ("recall_max_chars", lambda v, f: check_limit(v, f, 10_000_000)),
    ("prune", "min_confidence"): ("prune_min_confidence", check_confidence),
    ("prune", "max_age"): ("prune_max_age", check_duration),
}


def _settings(raw: Any) -> tuple[AgentSettings, list[tuple[str, str]]]:
    """The ``cortex:`` block as settings, and every (field, message) problem found in it."""
    if raw is None:
        return AgentSettings(), []
    if not isinstance(raw, dict):
        return AgentSettings(), [("cortex", f"must be a mapping, not {type(raw).__name__}")]
    problems: list[tuple[str, str]] = []
    values: dict[str, Any] = {}
    for key in sorted(set(map(str, raw)) - _CORTEX_KEYS):
        problems.append((f"cortex.{key}", f"unknown key (allowed: {', '.join(sorted(_CORTEX_KEYS))})"))
    if raw.get("project") is not None:
        try:
            values["project"] = check_project(raw["project"])
        except InvalidInputError as exc:
            problems.append(("cortex.project", exc.reason))
    teams = raw.get("teams")
    if teams is not None:
        if isinstance(teams, str):
            teams = [teams]
        names: list[str] = []
        parents: dict[str, str] = {}

        def team_name(value: object) -> bool:
            return isinstance(value, str) and bool(_TEAM.fullmatch(value))

        for team in teams if isinstance(teams, list) else [None]:
            if isinstance(team, dict) and set(team) == {"name", "parent"} and team_name(team["name"]) \
                    and team_name(team["parent"]) and team["name"] != team["parent"]:
                names.append(team["name"])
                parents[team["name"]] = team["parent"]
            elif team_name(team):
                names.append(team)  # type: ignore[arg-type]
            else:
                problems.append(("cortex.teams", "must be a list of team names (1-64 of a-z, 0-9, '_' and '-'), "
                                                 "or {name: TEAM, parent: TEAM} for a temporary team"))
                break
        else:
            values["teams"] = tuple(dict.fromkeys(names))
            if parents:
                values["parents"] = parents
    if raw.get("lead") is not None:
        if isinstance(raw["lead"], bool):
            values["lead"] = raw["lead"]
        else:
            problems.append(("cortex.lead", f"must be true or false, not {raw['lead']!r}"))
    for key, allow_never in (("ttl", True), ("decay", False)):
        section = raw.get(key)
        if section is None:
            continue
        if not isinstance(section, dict):
            problems.append((f"cortex.{key}", f"must be a mapping of source to duration, not {type(section).__name__}"))
            continue
        try:
            parsed = parse_source_durations(",".join(f"{k}={v}" for k, v in section.items()), f"cortex.{key}",
                                            allow_never)
            values[key] = {s.value: d for s, d in parsed.items()}
        except InvalidInputError as exc:
            problems.append((exc.field, exc.reason))
    notes = raw.get("notes")
    if notes is not None:
        if isinstance(notes, str):
            notes = [notes]
        if not isinstance(notes, list) or not all(isinstance(n, str) and n.strip() and "\x00" not in n
                                                  and len(n) <= 4096 for n in notes):
            problems.append(("cortex.notes", "must be a list of directories (paths relative to the project root)"))
        else:
            values["notes"] = tuple(dict.fromkeys(n.strip() for n in notes))
    aliases = raw.get("aliases")
    if aliases is not None:
        if isinstance(aliases, str):
            aliases = [aliases]
        if not isinstance(aliases, list) or not all(isinstance(a, str) and _ALIAS.fullmatch(a) for a in aliases):
            problems.append(("cortex.aliases", "must be a list of names such as 'my-plugin:reviewer' (letters, "
                                               "digits and _ . : @ / -)"))
        else:
            values["aliases"] = tuple(dict.fromkeys(aliases))
    for section, keys in (("recall", _RECALL_KEYS), ("prune", _PRUNE_KEYS)):
        sub = raw.get(section)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            problems.append((f"cortex.{section}", f"must be a mapping, not {type(sub).__name__}"))
            continue
        for key in sorted(set(map(str, sub)) - keys):
            problems.append((f"cortex.{section}.{key}", f"unknown key (allowed: {', '.join(sorted(keys))})"))
        for key in sorted(keys & set(sub)):
            if sub[key] is None:
                continue
            name, check = _SETTING_CHECKS[(section, key)]
            try:
                values[name] = check(sub[key], f"cortex.{section}.{key}")
            except InvalidInputError as exc:
                problems.append((exc.field, exc.reason))
    return AgentSettings(**values), problems


def parse_agent_text(text: str, path: Path) -> AgentDefinition:
    """Parse one definition file's text; raise :class:`AgentDefinitionError` listing its problems."""
    parsed = _parse(text, path)
    if isinstance(parsed, list):
        raise AgentDefinitionError(parsed)
    return parsed


def _parse(text: str, path: Path) -> AgentDefinition | list[AgentProblem]:
    handler = YAMLHandler()
    if not handler.detect(text):
        return [AgentProblem(path, "frontmatter", "no YAML frontmatter (the file must start with a '---' line)")]
    try:
        raw_yaml, body = handler.split(text)
    except ValueError:
        return [AgentProblem(path, "frontmatter", "frontmatter is not closed by a '---' line")]
    try:
        meta = yaml.load(raw_yaml, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader, the C one when built
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # the YAML text starts right after the opening '---', so its line n is the file's line n + 1
        where = f"line {mark.line + 1}: " if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        return [AgentProblem(path, "frontmatter", f"YAML error at {where}{reason}")]
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return [AgentProblem(path, "frontmatter", f"must be a mapping of keys, not {type(meta).__name__}")]
    problems: list[AgentProblem] = []
    name = meta.get("name")
    if isinstance(name, int) and not isinstance(name, bool):
        name = str(name)  # `name: 2024` is valid, but YAML reads it as a number
    if name is None:
        problems.append(AgentProblem(path, "name", "missing (required)"))
    elif not isinstance(name, str) or not AGENT_NAME_RE.fullmatch(name):
        problems.append(AgentProblem(
            path, "name", f"invalid agent name {name!r}: use 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit"
        ))
    description = meta.get("description")
    if description is None:
        problems.append(AgentProblem(path, "description", "missing (required)"))
    elif not isinstance(description, str) or not description.strip():
        problems.append(AgentProblem(path, "description", "must be a non-empty string"))
    memory: bool | str = False
    settings = AgentSettings()
    if "memory" in meta:
        try:
            memory = _memory_value(meta["memory"])
        except _Problem as exc:
            problems.append(AgentProblem(path, exc.field, exc.message))
    settings, setting_problems = _settings(meta.get("cortex"))
    problems.extend(AgentProblem(path, f, m) for f, m in setting_problems)
    cortex_block = meta.get("cortex")
    if isinstance(cortex_block, dict) and "memory" in cortex_block:
        # Cortex's own switch, which Claude Code never reads: use it in .claude/agents/ files
        if isinstance(cortex_block["memory"], bool):
            memory = cortex_block["memory"]
        else:
            problems.append(AgentProblem(path, "cortex.memory", f"must be true or false, not {cortex_block['memory']!r}"))
    if problems:
        declared = name if isinstance(name, str) else None
        return [replace(p, agent=declared) for p in problems]
    extra = {k: v for k, v in meta.items() if k not in ("name", "description", "memory", "cortex")}
    return AgentDefinition(
        name=str(name), description=str(description), memory=memory, settings=settings, extra=extra,
        prompt=body.strip("\n"), path=path,
    )


def iter_definition_files(dirs: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The ``*.md`` files of each directory, in directory order, then by name."""
    for entry in dirs:
        directory = Path(entry)
        if directory.is_dir():
            yield from sorted(p for p in directory.glob("*.md") if p.is_file())


def _signature(dirs: Sequence[Path]) -> tuple[Any, ...]:
    """What changes when a definition is added, removed, renamed or edited in ``dirs``: each directory's
    mtime (None while it does not exist) and each ``*.md`` file's name, mtime and size."""
    parts: list[Any] = []
    for directory in dirs:
        try:
            files = []
            stamp = os.stat(directory).st_mtime_ns
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.name.endswith(".md"):
                        info = entry.stat()
                        files.append((entry.name, info.st_mtime_ns, info.st_size))
            files.sort()
            parts.append((str(directory), stamp, tuple(files)))
        except OSError:
            parts.append((str(directory), None, ()))
    return tuple(parts)


def _dir_stamps(dirs: Sequence[Path]) -> tuple[int | None, ...]:
    """Each directory's mtime, None while it does not exist: one ``stat`` each, enough to see a file added,
    removed or renamed (or a directory created) since the last look."""
    stamps: list[int | None] = []
    for directory in dirs:
        try:
            stamps.append(os.stat(directory).st_mtime_ns)
        except OSError:
            stamps.append(None)
    return tuple(stamps)


class AgentRegistry:
    """The declared agents of one Cortex: loaded from Markdown and/or registered in code.

    Definitions loaded from directories are picked up live, so a long-running server knows agents created
    after it started: every lookup compares the directories' mtimes (one ``stat`` each; a directory that does
    not exist yet is watched by its path too), which shows a file added, removed or renamed and a directory
    created; the files' own mtimes and sizes (an edit in place) are compared at most once every
    :data:`CHECK_INTERVAL` seconds, and always before saying an agent is unknown or has no memory. Agents
    registered in code are kept across reloads and win over a file of the same name.
    """

    #: Seconds between two full checks of the files for edits in place.
    CHECK_INTERVAL = 1.0

    def __init__(self) -> None:
        self._files: dict[str, AgentDefinition] = {}
        self._code: dict[str, AgentDefinition] = {}
        self._aliases: dict[str, str] = {}
        self.dirs: list[Path] = []
        self._signature: tuple[Any, ...] | None = None
        self._stamps: tuple[int | None, ...] = ()
        self._checked = 0.0
        self._lock = threading.Lock()
        #: Problems found by the last load, one per broken field or file.
        self.problems: list[AgentProblem] = []
        #: The files the last load could not read or parse, with their problems.
        self.broken: dict[Path, list[AgentProblem]] = {}

    def load(self, dirs: Iterable[str | os.PathLike[str]]) -> list[AgentProblem]:
        """Load every definition in ``dirs`` (earlier directories win on duplicate names) and keep watching
        them. Broken files are not loaded; each of their problems is returned and kept in :attr:`problems`."""
        with self._lock:
            self.dirs = [Path(d) for d in dirs]
            return self._reload()

    def _reload(self) -> list[AgentProblem]:
        self._stamps = _dir_stamps(self.dirs)
        self._signature = _signature(self.dirs)
        self._checked = time.monotonic()
        problems: list[AgentProblem] = []
        broken: dict[Path, list[AgentProblem]] = {}
        found: dict[str, AgentDefinition] = {}
        for path in iter_definition_files(self.dirs):
            try:
                data = read_regular(path, MAX_DEFINITION_BYTES + 1)
                if len(data) > MAX_DEFINITION_BYTES:
                    broken[path] = [AgentProblem(path, "file", f"is over {MAX_DEFINITION_BYTES // 1024} KiB: not read")]
                    continue
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                broken[path] = [AgentProblem(path, "file", f"cannot be read: {exc}")]
                continue
            parsed = _parse(text, path)
            if isinstance(parsed, list):
                broken[path] = parsed
                continue
            if parsed.name in found:
                problems.append(AgentProblem(
                    path, "name", f"duplicate agent name {parsed.name!r} (already defined in {found[parsed.name].path})"
                ))
                continue
            found[parsed.name] = parsed
        problems[:0] = [p for file_problems in broken.values() for p in file_problems]
        self.broken = broken
        problems.extend(self._alias_problems(found))
        self._files = found
        self._index_aliases()
        self.problems = problems
        return problems

    def _alias_problems(self, found: dict[str, AgentDefinition]) -> list[AgentProblem]:
        problems = []
        owner: dict[str, str] = {}
        for definition in found.values():
            for alias in definition.settings.aliases:
                if alias in found and alias != definition.name:
                    problems.append(AgentProblem(definition.path or Path("?"), "cortex.aliases",
                                                 f"{alias!r} is already the name of an agent"))
                elif alias in owner:
                    problems.append(AgentProblem(definition.path or Path("?"), "cortex.aliases",
                                                 f"{alias!r} is already an alias of {owner[alias]!r}"))
                else:
                    owner[alias] = definition.name
        return problems

    def _index_aliases(self) -> None:
        aliases: dict[str, str] = {}
        for definition in [*self._files.values(), *self._code.values()]:
            for alias in definition.settings.aliases:
                aliases.setdefault(alias, definition.name)
        self._aliases = aliases

    def refresh(self, *, force: bool = False) -> bool:
        """Reload the definitions when the watched directories changed: their mtimes on every call, the files'
        mtimes and sizes at most once every :data:`CHECK_INTERVAL` seconds unless ``force``. Returns True when
        something was reloaded."""
        if not self.dirs:
            return False
        with self._lock:
            now = time.monotonic()
            if _dir_stamps(self.dirs) == self._stamps:
                if not force and now - self._checked < self.CHECK_INTERVAL:
                    return False
                self._checked = now
                if _signature(self.dirs) == self._signature:
                    return False
            for problem in self._reload():
                log.warning("agent definition problem: %s", problem)
            return True

    def register(
        self,
        name: str,
        *,
        memory: bool | str = True,
        description: str = "",
        project: str | None = None,
        settings: AgentSettings | None = None,
        **extra: Any,
    ) -> AgentDefinition:
        """Declare an agent in code; replaces a definition of the same name."""
        check_agent_name(name)
        try:
            memory = _memory_value(memory)
        except _Problem as exc:
            raise InvalidInputError("memory", exc.message) from None
        if settings is None:
            settings = AgentSettings(project=check_project(project) if project is not None else None)
        definition = AgentDefinition(
            name=name, description=description, memory=memory, settings=settings, extra=dict(extra)
        )
        with self._lock:
            self._code[name] = definition
            self._index_aliases()
        return definition

    def _lookup(self, name: str) -> AgentDefinition | None:
        return self._code.get(name) or self._files.get(name)

    def get(self, name: str) -> AgentDefinition | None:
        """The definition, or None (after a full check of the files)."""
        self.refresh()
        definition = self._lookup(name)
        if definition is None and self.refresh(force=True):
            definition = self._lookup(name)
        return definition

    def resolve(self, agent_type: str) -> str | None:
        """The declared agent a coding agent's name stands for: the agent itself, or the agent that lists it
        in ``cortex: aliases:`` (e.g. a plugin's ``my-plugin:reviewer``); None when there is none."""
        self.refresh()
        if agent_type in self._aliases:
            return self._aliases[agent_type]
        if self._lookup(agent_type) is None:
            self.refresh(force=True)
        if agent_type in self._aliases:
            return self._aliases[agent_type]
        if self._lookup(agent_type) is not None:
            return agent_type
        self._raise_broken(agent_type)
        return None

    def broken_for(self, name: str) -> list[AgentProblem]:
        """The problems of the broken files that would declare ``name``: a file named ``{name}.md`` or whose
        ``name:`` is ``name``, and every file that could not be read far enough to know which agent it
        declares (a YAML error, no ``name:``)."""
        return [p for path, problems in self.broken.items()
                if path.stem == name or any(p.agent in (None, name) for p in problems) for p in problems]

    def _raise_broken(self, name: str) -> None:
        problems = self.broken_for(name)
        if problems:
            named = any(p.path.stem == name or p.agent == name for p in problems)
            raise BrokenAgentError(name, problems, named=named)

    def require(self, name: str, *, memory: bool = True) -> AgentDefinition:
        """The definition of a declared agent (with memory enabled unless ``memory=False``)."""
        check_agent_name(name)
        self.refresh()
        definition = self._lookup(name)
        if definition is None and self.refresh(force=True):
            definition = self._lookup(name)
        if definition is None:
            self._raise_broken(name)
            raise AgentNotFoundError(name, searched=self.dirs)
        if memory and not definition.memory_enabled and self.refresh(force=True):
            definition = self._lookup(name) or definition
        if memory and not definition.memory_enabled:
            raise MemoryDisabledError(name)
        return definition

    def list(self) -> list[AgentDefinition]:
        """Every definition, by name."""
        self.refresh()
        merged = {**self._files, **self._code}
        return [merged[n] for n in sorted(merged)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[AgentDefinition]:
        return iter(self.list())

    def __len__(self) -> int:
        return len(self.list())


def check_dirs(dirs: Iterable[str | os.PathLike[str]]) -> list[AgentProblem]:
    """Every problem in the definitions found in ``dirs`` (for ``cortex agents check``)."""
    return AgentRegistry().load(dirs)


__all__ = [
    "AgentDefinition", "AgentProblem", "AgentRegistry", "AgentSettings", "check_dirs",
    "iter_definition_files", "parse_agent_text",
]
