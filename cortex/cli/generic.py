"""The CLI command of an operation no command module defines: built from its row of the table (the command's
words) and its protocol method (:mod:`cortex.api.generic`: the parameters, the help), so that a new operation
reaches the command line from its row and its method alone. The hand-written commands keep their own shapes;
this one is used only where none is.

Parameters without a default are arguments, the others options ``--name`` (a flag for a bool, typed for a number,
repeatable for a list); the help is the docstring's first paragraph. The command prints the answer as JSON.
Built from the table and the protocol only: no model (pydantic) is imported to build it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta
from enum import Enum
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import click

from cortex.api import operations
from cortex.cli.output import _as_json, _emit
from cortex.cli.state import _State, pass_state

if TYPE_CHECKING:  # at run time only when a command is made: the CLI's start stays light
    from cortex.api import generic


def add_commands(group: click.Group) -> list[str]:
    """Add to ``group`` (the ``cortex`` group) the command of every operation of the table it does not have yet
    (a group of the first word made when there is none); the commands added."""
    added = []
    for row in operations.OPERATIONS.values():
        if row.command is None:
            continue
        *path, name = row.command.split()
        parent = _group(group, path)
        if parent is None or name in parent.commands:
            continue
        made = command(row.name, name)
        if made is not None:
            parent.add_command(made)
            added.append(row.command)
    return added


def _group(group: click.Group, path: list[str]) -> click.Group | None:
    """The subgroup of ``group`` at ``path`` (made where missing); None where a command has that name."""
    for word in path:
        found = group.commands.get(word)
        if found is None:
            found = click.Group(word, help=f"The {word} commands.")
            group.add_command(found)
        if not isinstance(found, click.Group):
            return None
        group = found
    return group


def command(operation: str, name: str) -> click.Command | None:
    """The command ``name`` of ``operation``; None when the protocol has no such method."""
    from cortex.api import generic
    signature = generic.signature(operation)
    if signature is None:
        return None
    row = signature.row
    reads = row.route is not None and row.route.method == "GET"
    lists = {p.name for p in signature.parameters if _is_list(p.hint)}

    @pass_state
    def run(state: _State, /, **given: Any) -> None:
        arguments = {}
        for key, value in given.items():
            if key in lists:
                value = list(value) or None  # none given: the method's default
            if value is not None:
                arguments[key] = value
        with _as_json(state.cortex(read_only=reads)) as cx:
            answer = getattr(cx, operation)(**arguments)
        _emit(_plain(answer))

    return click.Command(name, callback=run, params=[_parameter(p) for p in signature.parameters],
                         help=signature.summary, short_help=row.summary)


def _parameter(parameter: generic.Parameter) -> click.Parameter:
    """A click argument (no default) or option (``--name``) for ``parameter``."""
    from cortex.api import generic
    hint = generic.without_none(parameter.hint)
    many = _is_list(hint)
    kind = _kind(_item(hint) if many else hint)
    if parameter.required:
        return click.Argument([parameter.name], type=kind, nargs=-1 if many else 1, required=True)
    flag = "--" + parameter.name.replace("_", "-")
    if kind is click.BOOL:
        declared = f"{flag}/--no-{flag[2:]}" if parameter.default is True else flag
        return click.Option([declared, parameter.name], is_flag=True, default=bool(parameter.default))
    simple = isinstance(parameter.default, (str, int, float)) and not many
    return click.Option([flag, parameter.name], type=kind, multiple=many,
                        default=parameter.default if simple else None, show_default=simple)


def _is_list(hint: Any) -> bool:
    from cortex.api import generic
    return any(getattr(member, "__origin__", member) is list for member in generic.members(hint))


def _item(hint: Any) -> Any:
    from cortex.api import generic
    for member in generic.members(hint):
        if getattr(member, "__origin__", None) is list:
            return member.__args__[0] if member.__args__ else str
    return str


def _kind(hint: Any) -> click.ParamType[Any]:
    """bool, int or float when ``hint`` is exactly that, else text (the method checks it)."""
    return {bool: click.BOOL, int: click.INT, float: click.FLOAT}.get(hint, click.STRING)


def _plain(value: Any) -> Any:
    """An answer as JSON can carry it: models as ``model_dump(mode="json")``, dataclasses as dicts, enums by
    value, times in ISO 8601, durations in seconds, paths as text."""
    import dataclasses  # here: the CLI's start does not pay for it (it imports inspect)

    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, PurePath):
        return str(value)
    return value
