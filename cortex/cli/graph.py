"""RDF, SPARQL and other memory systems (domain ``graph``): export, import, validate-store, sparql."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from cortex.cli import human
from cortex.cli.options import PROGRESS_HELP, command
from cortex.cli.output import _MEMORY_STAGES, _as_json, _emit, _progress, _read_content, _table
from cortex.cli.state import _State, pass_state
from cortex.errors import InvalidInputError


@command("export")
@click.argument("target", required=False, metavar="[beads DIR]")
@click.argument("directory", required=False, metavar="")
@click.option("--agent", default=None, help="Export this agent's own memories.")
@click.option("--team", default=None, help="Export this team's memories.")
@click.option("--all", "everything", is_flag=True, help="Export every scope of the store.")
@click.option("--format", "fmt", type=click.Choice(["trig", "nquads", "turtle", "jsonld"]), default=None,
              help="Default: from the -o file's extension, else trig.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file (default: stdout).")
@click.option("--progress/--no-progress", "progress", default=None, help=PROGRESS_HELP)
@pass_state
def export_command(state: _State, target: str | None, directory: str | None, agent: str | None, team: str | None,
                   everything: bool, fmt: str | None, output: Path | None, progress: bool | None) -> None:
    """Export memories as RDF, exactly as stored (versions, supersession, tags, metadata, scopes): one agent,
    one team, or --all. `cortex import` of the file into an empty store gives the same dataset.

    `cortex export beads DIR --agent NAME`: the agent's memories as a Beads knowledge log, DIR/knowledge.jsonl
    (merged with the files there: same key, the newest ts wins; past 1,000 lines the oldest 500 rotate to
    knowledge.archive.jsonl)."""
    if target is not None:
        if target != "beads" or directory is None:
            raise click.UsageError("`cortex export beads DIR --agent NAME` (or `cortex export --agent NAME` for RDF)")
        if agent is None or team is not None or everything or fmt is not None or output is not None:
            raise click.UsageError("`cortex export beads DIR` takes --agent NAME (and no --team, --all, --format, -o)")
        _emit(state.cortex(read_only=True).export_beads(directory, agent=agent))
        return
    from cortex.state import is_remote
    from cortex.transfer import EXTENSIONS

    name = fmt or (EXTENSIONS.get(output.suffix.lower()) if output is not None else None) or "trig"
    if not is_remote(state.store) and not Path(state.store).exists():
        raise InvalidInputError("store", f"there is no store at {state.store}: nothing to export")
    cx = state.cortex(read_only=True)
    with _progress(progress) as report:
        if output is None:
            count = cx.export(sys.stdout.buffer, agent=agent, team=team, all=everything, format=name,
                              progress=report)
        else:
            partial = output.with_name(output.name + ".partial")
            with open(partial, "wb") as out:  # a file is complete or absent
                count = cx.export(out, agent=agent, team=team, all=everything, format=name, progress=report)
            partial.replace(output)
    click.echo(f"cortex: exported {count} triples ({name})", err=True)
    if count == 0:  # a backup is never silently empty
        what = f"agent {agent!r}" if agent else f"team {team!r}" if team else "the store"
        click.echo(f"cortex: warning: {what} holds no memories ({state.printable_store()}): the export is empty",
                   err=True)


#: The memory systems `cortex import SYSTEM FILE` reads (cortex.importers.SYSTEMS, without importing it).
IMPORT_SYSTEMS = ("beads", "mem0", "mcp-memory", "claude", "codex")
#: The systems whose files have a place of their own (`cortex import claude --agent NAME`: no PATH needed).
DISCOVERED = ("claude", "codex")


@command("import_rdf")
@click.argument("path", metavar="[SYSTEM] PATH")
@click.argument("file", required=False, metavar="")
@click.option("--format", "fmt", type=click.Choice(["trig", "nquads", "turtle", "jsonld"]), default=None,
              help="RDF: default from the file's extension.")
@click.option("--agent", default=None, help="SYSTEM: the agent whose memory it goes to (required). RDF: for a Turtle "
                                            "file (one graph), the agent whose memories it holds.")
@click.option("--team", default=None, help="RDF, a Turtle file (one graph): the team whose memories it holds.")
@click.option("--dry-run", is_flag=True, help="SYSTEM: write nothing, report what the import would do.")
@click.option("--progress/--no-progress", "progress", default=None, help=PROGRESS_HELP)
@pass_state
def import_command(state: _State, path: str, file: str | None, fmt: str | None, agent: str | None, team: str | None,
                   dry_run: bool, progress: bool | None) -> None:
    """Import an export (`cortex import PATH`): the whole file is checked first and written in one transaction, or
    nothing is (each problem named: the memory, the property, what is wrong). PATH '-' reads stdin (give --format).

    Or another memory system's files (`cortex import SYSTEM PATH --agent NAME`): beads (.beads/memory/knowledge.jsonl,
    or the directory: its archive too), mem0 (the JSON of get_all), mcp-memory (the MCP memory server's
    memory.jsonl), claude (CLAUDE.md, or ~/.claude/projects/<project>/memory: this project's when PATH is left
    out), codex (~/.codex/memories when PATH is left out: the task groups of this project, the summary, the
    skills). Idempotent (a second run imports nothing new), each file checked whole, then embedded and written in
    atomic batches of 1,000 memories (reads go on meanwhile; a run stopped midway keeps the batches written, the
    next run writes the rest); prints the report (imported, skipped, failed with the file and line)."""
    if file is not None:
        _import_system(state, path, file, agent, dry_run, progress, fmt, team)
        return
    if path in DISCOVERED and not Path(path).exists():
        _import_system(state, path, _discovered(state, path), agent, dry_run, progress, fmt, team)
        return
    if path in IMPORT_SYSTEMS and not Path(path).exists():
        raise click.UsageError(f"`cortex import {path} PATH --agent NAME`: give the file (or directory) to import")
    if dry_run:
        raise click.UsageError("--dry-run is for `cortex import SYSTEM PATH` (an RDF import is checked whole anyway)")
    if path != "-" and Path(path).is_dir():
        raise click.BadParameter(f"{path!r} is a directory (an RDF export is a file; a system's directory: "
                                 f"`cortex import SYSTEM {path}`)", param_hint="'[SYSTEM] PATH'")
    source: Any = sys.stdin.buffer.read() if path == "-" else Path(path)
    cx = state.cortex()
    with _progress(progress) as report:
        imported = cx.import_rdf(source, format=fmt, agent=agent, team=team, progress=report)
    _emit({"imported": imported})


def _discovered(state: _State, system: str) -> str:
    """Where ``system`` keeps its memories for this project: Claude Code's auto-memory directory of the project
    root, Codex's memory folder (a usage error naming it when it is not there)."""
    from cortex.importers import claude, codex

    found = claude.memory_dir(state.root) if system == "claude" else codex.memory_dir()
    if not found.is_dir():
        raise click.UsageError(f"`cortex import {system}`: {found} does not exist ({system}'s memories of this "
                               f"project); give the file or directory: `cortex import {system} PATH --agent NAME`")
    return str(found)


def _import_system(state: _State, system: str, path: str, agent: str | None, dry_run: bool, progress: bool | None,
                   fmt: str | None, team: str | None) -> None:
    """`cortex import SYSTEM PATH --agent NAME`."""
    if system not in IMPORT_SYSTEMS:
        raise InvalidInputError("system", f"unknown system {system!r}; use one of {', '.join(IMPORT_SYSTEMS)}, or "
                                          "`cortex import FILE` for an RDF export")
    if agent is None:
        raise click.UsageError(f"`cortex import {system}` needs --agent NAME: the agent whose memory it goes to")
    if fmt is not None or team is not None:
        raise click.UsageError("--format and --team are for an RDF import (`cortex import FILE`)")
    source: Any = sys.stdin.buffer.read() if path == "-" else path
    cx = state.cortex()
    with _progress(progress, _MEMORY_STAGES) as report, _as_json(cx) as api:
        done = api.import_from(system, source, agent=agent, dry_run=dry_run, progress=report,
                               name="stdin" if path == "-" else None)
    data = done if isinstance(done, dict) else done.model_dump(mode="json")
    _emit(data)
    if human.wanted():  # the terminal showed the first rows: the whole report goes to a file
        written = _write_report(state.root, system, data)
        click.echo(f"cortex: the full report: {written} (a pipe prints it whole)", err=True)
    imported = [i for i in data["imported"] if i.get("kind") == "memory"]
    relations = len(data["imported"]) - len(imported)
    click.echo(f"cortex: {'would import' if dry_run else 'imported'} {len(imported)} memories"
               + (f" and {relations} relations" if relations else "")
               + f" from {', '.join(data['files'])}; {len(data['skipped'])} skipped, {len(data['failed'])} failed",
               err=True)
    for item in data["failed"][:20]:
        click.echo(f"cortex: failed: {item['where']}: {item['reason']}", err=True)
    if len(data["failed"]) > 20:
        click.echo(f"cortex: ... and {len(data['failed']) - 20} more failures (in the report)", err=True)


def _write_report(root: Path, system: str, data: dict[str, Any]) -> Path:
    """Write an import's full report as JSON to ``.cortex/logs/import-SYSTEM-TIME.json``; its path."""
    import json
    import time

    from cortex.files import private_dir

    path = private_dir(root / ".cortex" / "logs") / f"import-{system}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


@command("validate_store")
@click.option("--agent", default=None, help="Only this agent's own memories.")
@click.option("--team", default=None, help="Only this team's memories.")
@pass_state
def validate_store_command(state: _State, agent: str | None, team: str | None) -> None:
    """Check the store against the SHACL shapes of what Cortex writes; each violation names the memory, the
    property and the problem (exit 1 when there is one)."""
    found = state.cortex(read_only=True).validate_store(agent=agent, team=team)
    for violation in found:
        click.echo(str(violation))
    click.echo(f"cortex: {len(found)} violation(s)" if found else "cortex: the store conforms", err=True)
    if found:
        raise SystemExit(1)


@command("sparql")
@click.argument("query", required=False)
@click.option("-f", "--file", "path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read the query from this file ('-': stdin) instead of QUERY.")
@click.option("--agent", default=None, help="See only the graphs this agent reads (default: the whole store).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "tsv", "xml", "turtle", "ntriples"]),
              default="table", show_default=True, help="table and the SPARQL result formats; turtle/ntriples "
                                                        "for CONSTRUCT and DESCRIBE.")
@click.option("--limit", type=int, default=None, help="Rows at most (default: CORTEX_SPARQL_LIMIT or 10000).")
@click.option("--timeout", type=float, default=None, help="Seconds at most (default: CORTEX_SPARQL_TIMEOUT or 30).")
@pass_state
def sparql_command(state: _State, query: str | None, path: Path | None, agent: str | None, fmt: str,
                   limit: int | None, timeout: float | None) -> None:
    """Run a read-only SPARQL QUERY over the store (docs/sparql.md has useful ones). Updates are refused."""
    from cortex import sparql

    if (query is None) == (path is None):
        raise InvalidInputError("query", "give the query as QUERY or with -f FILE (one of them)")
    try:
        text = _read_content(query) if query is not None else (
            sys.stdin.read() if str(path) == "-" else Path(path).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    except OSError as exc:
        raise InvalidInputError("file", f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    result = state.cortex(read_only=True).sparql(
        text, agent=agent, limit=limit if limit is not None else sparql.configured_limit(),
        timeout=timeout if timeout is not None else sparql.configured_timeout())
    if fmt != "table":
        if fmt == "json" and result.kind == "graph":
            fmt = "ntriples"
        sys.stdout.write(result.serialize(fmt).decode("utf-8"))
    elif result.kind == "boolean":
        click.echo("true" if result.boolean else "false")
    elif result.kind == "graph":
        sys.stdout.write(result.serialize("turtle").decode("utf-8"))
    else:
        rows = [[_term_text(row.get(v)) for v in result.variables] for row in result.rows]
        click.echo(_table(rows, result.variables))
    if result.truncated:
        click.echo(f"cortex: note: the result was cut at {len(result)} rows (--limit)", err=True)


def _term_text(term: Any) -> str:
    """A term for a terminal: a literal's text, an IRI, or '' for an unbound variable."""
    return "" if term is None else str(getattr(term, "value", term))


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (export_command, import_command, validate_store_command, sparql_command)
