"""What the surfaces' generic fallbacks read of an operation: its row of the table and its protocol method.

An operation with no hand-written handler on a surface still reaches it: the HTTP app
(:mod:`cortex.service.http.generic`), the MCP server (:mod:`cortex.service.mcp.generic`) and the CLI
(:mod:`cortex.cli.generic`) build one from the row (route, tool, command) and the signature and docstring of the
method of :class:`cortex.api.MemoryAPI`. The table and the protocol are read when a surface is built, through
their modules, so an operation added to them later (a test's) is seen. Standard library only: the CLI imports it.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator
import types
import typing
from collections import abc
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from cortex.api import operations, protocol
from cortex.api.operations import Operation


@dataclass(frozen=True)
class Parameter:
    """One parameter of an operation's protocol method: its resolved ``hint`` (abstract collections as
    ``list``/``dict``), and its ``default`` (:data:`inspect.Parameter.empty` when it must be given)."""

    name: str
    hint: Any
    default: Any

    @property
    def required(self) -> bool:
        """True when the caller must give it."""
        return self.default is inspect.Parameter.empty


@dataclass(frozen=True)
class Signature:
    """What a generic handler of an operation takes and answers, and its description (the method's docstring)."""

    row: Operation
    parameters: tuple[Parameter, ...]
    answer: Any
    doc: str

    @property
    def summary(self) -> str:
        """The docstring's first paragraph on one line (the row's summary when there is no docstring)."""
        first = self.doc.split("\n\n", 1)[0]
        return " ".join(first.split()) or self.row.summary

    def names(self) -> set[str]:
        """The parameters' names."""
        return {p.name for p in self.parameters}


def rows() -> Iterator[Operation]:
    """Every row of the table as it is now (read through the module: a patched table is seen)."""
    return iter(operations.OPERATIONS.values())


def method_of(name: str) -> Callable[..., Any] | None:
    """The protocol method of operation ``name``, or None when :class:`~cortex.api.MemoryAPI` has none."""
    method = getattr(protocol.MemoryAPI, name, None)
    return method if callable(method) else None


class _Placeholders(dict[str, Any]):
    """Names the protocol imports only for type checkers (the models), each as an empty class of that name:
    enough to tell a flag, a number or a list from the rest without importing the models."""

    def __init__(self, module: types.ModuleType) -> None:
        super().__init__()
        self._module = module

    def __missing__(self, key: str) -> Any:
        if key in vars(self._module) or hasattr(builtins, key):
            raise KeyError(key)  # eval then finds it in the module's globals or the builtins
        self[key] = type(key, (), {})
        return self[key]


def signature(name: str, localns: Mapping[str, Any] | None = None) -> Signature | None:
    """The parameters and answer of operation ``name``'s protocol method, their string annotations resolved
    with ``localns`` (the names of :mod:`cortex.model`; None: placeholders for the names the protocol imports
    only for type checkers). Parameters typed as a callable or a stream are left out (no surface sends them).
    None when the table or the protocol has no such operation."""
    row = operations.OPERATIONS.get(name)
    method = method_of(name)
    if row is None or method is None:
        return None
    module = inspect.getmodule(method) or protocol
    # a dict subclass as eval's locals: its __missing__ names what the module imports only for type checkers
    namespace = dict(localns) if localns is not None else _Placeholders(module)
    hints = typing.get_type_hints(method, include_extras=True, localns=namespace)
    found = []
    for parameter in list(inspect.signature(method).parameters.values())[1:]:  # self
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        hint = hints.get(parameter.name, Any)
        if _unsendable(hint):
            continue
        found.append(Parameter(parameter.name, plain(hint), parameter.default))
    return Signature(row, tuple(found), plain(hints.get("return", Any)), inspect.getdoc(method) or "")


def members(hint: Any) -> tuple[Any, ...]:
    """The members of a union (``X | None``...), else ``(hint,)``; ``Annotated`` unwrapped."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def without_none(hint: Any) -> Any:
    """``hint`` without ``None`` (``int | None`` -> ``int``)."""
    kept = [m for m in members(hint) if m is not type(None)]
    return functools.reduce(operator.or_, kept) if kept else hint


_SEQUENCES = (abc.Iterable, abc.Collection, abc.Sequence, abc.MutableSequence, abc.Set, abc.MutableSet, list,
              tuple, set, frozenset)
_MAPPINGS = (abc.Mapping, abc.MutableMapping, dict)


def plain(hint: Any) -> Any:
    """``hint`` with its abstract collections as the concrete ones a request carries: ``Iterable[str]`` ->
    ``list[str]``, ``Mapping[str, Any]`` -> ``dict[str, Any]`` (inside unions too)."""
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, [plain(a) for a in arguments])
    if origin in _SEQUENCES or hint in _SEQUENCES:
        item = plain(arguments[0]) if arguments else Any
        return list[item]  # type: ignore[valid-type]
    if origin in _MAPPINGS or hint in _MAPPINGS:
        key, value = arguments if len(arguments) == 2 else (str, Any)
        return dict[key, plain(value)]  # type: ignore[misc,valid-type]
    return hint


def _unsendable(hint: Any) -> bool:
    """True for a callable or a stream (or a union of one): a progress callback, an open file."""
    for member in members(hint):
        origin = typing.get_origin(member) or member
        if origin in (abc.Callable, typing.Callable, IO) or (isinstance(origin, type) and issubclass(origin, IO)):
            return True
    return False
