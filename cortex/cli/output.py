"""How the commands print: JSON on stdout, a table or the <agent-memory> block on request, notes and progress on
stderr; and how they read what a user gives (stdin for '-', JSON metadata)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from cortex import jsonsafe
from cortex.errors import InvalidInputError

if TYPE_CHECKING:
    from cortex.api import MemoryAPI
    from cortex.model import Memory


def _emit(data: Any) -> None:
    """A command's answer on stdout: JSON (indented) when piped or with an explicit ``--format json``, what a
    person reads on a terminal (:mod:`cortex.cli.human`). Every command prints through here: the operations'
    generated commands too."""
    from cortex.cli import human

    if human.wanted():
        human.show(data)
    else:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _on_terminal(fmt: str) -> str:
    """The format a command with its own table prints in: its table on a terminal when no ``--format`` was given
    (:func:`cortex.cli.human.wanted`), else ``fmt``."""
    from cortex.cli import human

    return "table" if fmt == "json" and human.wanted() else fmt


#: What each stage of an export or import is called on its progress bar.
_STAGES = {"export": "exporting memories", "read": "reading quads", "check": "checking subjects",
           "write": "writing quads", "index": "indexing memories", "import": "importing items",
           "embed": "embedding memories"}
#: The stages of ``import SYSTEM`` whose unit is memories (the RDF import's ``write`` counts quads).
_MEMORY_STAGES = {"write": "writing memories"}


@contextmanager
def _progress(wanted: bool | None, stages: dict[str, str] | None = None
              ) -> Iterator[Callable[[str, int, int | None], None] | None]:
    """A rich progress bar on stderr (never stdout: an export may be writing its data there), one line per
    stage with its rate and the time left; None when not ``wanted`` (by default: when stderr is not a terminal).
    ``stages``: names of stages that differ from the usual ones."""
    if not (wanted if wanted is not None else sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Items a second: over the last half minute, else (a stage done in one step) over its whole time."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            if not speed and task.completed and task.elapsed:
                speed = task.completed / task.elapsed
            return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")

    names = {**_STAGES, **(stages or {})}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
               TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), speed_estimate_period=30) as bar:
        tasks: dict[str, Any] = {}

        def report(stage: str, done: int, total: int | None) -> None:
            task = tasks.get(stage)
            if task is None:
                task = tasks[stage] = bar.add_task(names.get(stage, stage), total=total)
            bar.update(task, completed=done, total=total)

        yield report


@contextmanager
def _embedding_progress(name: str, wanted: bool | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """The progress callback of reindexing ``name``: a bar on stderr (a terminal's) with the rate and the time
    left, from the first vector embedded on."""
    with _progress(wanted) as report:
        if report is None:
            yield None
            return

        def progress(done: int, total: int) -> None:
            report(f"embedding {name}", done, total)

        yield progress


def _note_without_embeddings(info: dict[str, Any]) -> None:
    """Say on stderr that a reindex rebuilds only the lexical indexes when ``info`` names no embedding model."""
    if info.get("embeddings") is None:
        click.echo("cortex: note: no embedding provider: rebuilding the lexical indexes only", err=True)


def _note(answer: Any) -> None:
    """An answer's note (a search that fell back to bm25...), model or JSON, as a note on stderr."""
    note = answer.get("note") if isinstance(answer, dict) else answer.note
    if note:
        click.echo(f"cortex: note: {note}", err=True)


def _memory_json(memory: Memory | dict[str, Any]) -> dict[str, Any]:
    """A memory as the CLI prints it: ``model_dump(mode="json")``, which is what a server's client answers
    inside :func:`_as_json` (passed on as it is)."""
    return memory if isinstance(memory, dict) else memory.model_dump(mode="json")



@contextmanager
def _as_json(cx: MemoryAPI, wanted: bool = True) -> Iterator[MemoryAPI]:
    """``cx``, which inside this block answers the server's JSON instead of models when it is a server's client
    (see :meth:`cortex.client.RemoteCortex.as_json`): a command that only prints the answer never imports the
    models then. For JSON output only (``wanted``): the other formats need the models."""
    as_json = getattr(cx, "as_json", None) if wanted else None
    if as_json is None:
        yield cx
        return
    with as_json():
        yield cx



def _search_json(result: Any, explain: bool) -> dict[str, Any]:
    """A search result as the CLI prints it: ``model_dump(mode="json")`` (each hit's memory with every field, as
    ``get`` and ``recall`` print it), each hit's ``explain`` only when asked for."""
    data: dict[str, Any] = result if isinstance(result, dict) else result.model_dump(mode="json")
    if explain:
        return data
    return data | {"hits": [{k: v for k, v in hit.items() if k != "explain"} for hit in data["hits"]]}



def _table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    cells = [list(headers)] + [[str(c).replace("\n", " ") for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)



def _show_memories(memories: list[Memory], fmt: str) -> None:
    if fmt == "json":
        _emit([_memory_json(m) for m in memories])
    elif fmt == "block":
        from cortex.render import render as render_block

        block = render_block(memories)
        if block:
            click.echo(block)
    else:
        click.echo(_memory_table(memories))



def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"



def _memory_table(memories: Sequence[Memory], *, lifecycle: bool = False) -> str:
    """Memories as a table for a terminal; ``lifecycle`` adds scope, source, version, tags and state."""
    rows: list[tuple[str, ...]]
    if not lifecycle:
        rows = [(m.id, m.type.value, m.project, f"{m.confidence:.2f}", str(m.usage_count), _short(_labelled(m)))
                for m in memories]
        return _table(rows, ["id", "type", "project", "conf", "uses", "content"])
    from cortex.model import utcnow

    now = utcnow()
    rows = [(m.id, m.created_at.strftime("%Y-%m-%d %H:%M"), m.scope, m.type.value, m.source.value, str(m.version),
             ",".join(m.tags), "superseded" if m.superseded else "expired" if m.expired(now) else "current",
             _short(_labelled(m), 50)) for m in memories]
    return _table(rows, ["id", "created", "scope", "type", "source", "v", "tags", "state", "content"])


def _labelled(memory: Memory) -> str:
    """The content, after ``(provider)`` for a memory a memory provider answered (CORTEX_ENGINE both/external)."""
    return memory.content if memory.origin == "cortex" else f"({memory.origin}) {memory.content}"



def _read_content(content: str) -> str:
    """CONTENT as given, or stdin for '-' (without the newline `echo` and editors add)."""
    if content == "-":
        return sys.stdin.read().removesuffix("\n").removesuffix("\r")
    return content



def _metadata(text: str | None) -> Any:
    """``--metadata`` JSON text as a value (Cortex says what is wrong with it)."""
    if text is None:
        return None
    try:
        return jsonsafe.loads(text)
    except ValueError as exc:
        raise InvalidInputError("metadata", f"is not JSON: {exc}") from None



def _show_consolidation(data: dict[str, Any], fmt: str) -> None:
    """A consolidation report: JSON (or a table of what it did) on stdout, a summary and its problems on stderr."""
    if fmt == "json":
        _emit(data)
    else:
        rows = [("merged", old, m["survivor"], m["reason"]) for m in data["merges"] for old in m["merged"]]
        rows += [("superseded", s["old"], s["new"], s["reason"]) for s in data["superseded"]]
        rows += [("review", r["supersede"], r["keep"], r["reason"]) for r in data["review"]]
        rows += [("created", m["id"], "", _short(m["content"])) for m in data["created"]]
        rows += [("confirmed", c["memory_id"], "", c["reason"]) for c in data["confirmed"]]
        rows += [("evicted", e["memory_id"], "", e["reason"]) for e in data["evicted"]]
        click.echo(_table(rows, ["action", "memory", "by", "why"]))
    counts = (("merged", sum(len(m["merged"]) for m in data["merges"])), ("superseded", len(data["superseded"])),
              ("for review", len(data["review"])), ("created", len(data["created"])),
              ("confirmed", len(data["confirmed"])), ("evicted", len(data["evicted"])),
              ("sessions distilled", len(data["sessions"])))
    done = ", ".join(f"{n} {label}" for label, n in counts)
    examined = f"{data['examined']} memor{'y' if data['examined'] == 1 else 'ies'} of {data['scope']} examined"
    if data["dry_run"]:
        click.echo(f"cortex: dry run: nothing written; the run would do: {done} ({examined})", err=True)
    elif data["run"]:
        click.echo(f"cortex: run {data['run']}: {done} ({examined}); undo it with "
                   f"`cortex consolidate --undo {data['run']}`", err=True)
    else:
        click.echo(f"cortex: nothing to change ({examined})", err=True)
    if data.get("note"):
        click.echo(f"cortex: {data['note']}", err=True)
    for line in [*data.get("pending", []), *data.get("problems", [])][:20]:
        click.echo(f"cortex: {line}", err=True)
