"""The commands for what an agent's work leaves (domain ``sessions``): end, task-done, capture, used."""

from __future__ import annotations

import os
from typing import Any

import click

from cortex.cli.options import command
from cortex.cli.output import _as_json, _emit, _memory_json, _read_content
from cortex.cli.state import _State, pass_state


@command("agent_end")
@click.argument("agent")
@click.option("--project", default=None, help="Project of the captured memories (default: the agent's cortex.project, else global).")
@click.option("--output", "output_file", type=click.File("r", encoding="utf-8"), default="-",
              help="File with the agent's output (default: stdin).")
@pass_state
def end(state: _State, agent: str, project: str | None, output_file: Any) -> None:
    """Capture LEARNED:/PATTERN:/... lines from an agent's output; print what was stored or refreshed."""
    _emit([_memory_json(m) for m in state.cortex().agent_end(agent, output_file.read(), project=project)])


@command("record_task")
@click.argument("agent")
@click.argument("task")
@click.argument("output", required=False, default="")
@click.option("--status", type=click.Choice(["ok", "failed"]), default="ok", show_default=True,
              help="How the task ended (a failed one should say what went wrong in OUTPUT).")
@click.option("--project", default=None, help="Project of the task (default: the agent's cortex.project).")
@pass_state
def task_done(state: _State, agent: str, task: str, output: str, status: str, project: str | None) -> None:
    """Record that AGENT finished TASK: OUTPUT ('-': stdin) is what came of it; kept as a task_completion
    memory (7 days by default) that a later start on a similar task shows."""
    with _as_json(state.cortex()) as cx:
        memory = cx.record_task(agent, task, _read_content(output) if output else "", status, project=project)
    _emit(_memory_json(memory))


@command("capture_transcript")
@click.argument("agent")
@click.option("--transcript", "path", default=None, type=click.Path(dir_okay=False),
              help="The session transcript: Claude Code JSONL, a Codex CLI session file, a Cursor or Gemini CLI "
                   "transcript, a JSON list of messages or plain text.")
@click.option("--format", "fmt", type=click.Choice(["claude", "codex", "cursor", "gemini", "messages", "text"]),
              default=None, help="The transcript's format (default: detected).")
@click.option("--project", default=None, help="Project of what it captures (default: the agent's cortex.project).")
@click.option("--no-markers", is_flag=True, help="Leave marker lines to the hooks that already captured them.")
@click.option("--no-summary", is_flag=True, help="No session summary (with a language model).")
@click.option("--no-tasks", is_flag=True, help="Do not record the subagent task outcomes it shows.")
@click.option("--queue", "queued", is_flag=True, help="Through a running server: queue it there and return at once.")
@click.option("--dry-run", is_flag=True, help="Report what it would store, confirm and supersede; write nothing.")
@click.option("--undo", "undo", default=None, metavar="RUN",
              help="Instead: undo capture run RUN (as a capture's report gave it) or 'last'.")
@click.option("--force", is_flag=True, help="With --undo: undo even over memories changed since the capture.")
@click.option("--runs", is_flag=True, help="Instead: list AGENT's capture runs, the latest first (undone ones too).")
@click.option("--model-first", is_flag=True, hidden=True,
              help="Ask the language model before opening the store (a hook's detached capture: the store is not "
                   "held while the model works).")
@pass_state
def capture(state: _State, agent: str, path: str | None, fmt: str | None, project: str | None, no_markers: bool,
            no_summary: bool, no_tasks: bool, queued: bool, dry_run: bool, undo: str | None, force: bool,
            runs: bool, model_first: bool) -> None:
    """Capture what a session transcript holds for AGENT since its last capture: marker lines, with a language
    model (CORTEX_LLM_URL) learnings and a session summary, subagent task outcomes, and which shown memories it
    used. Redacted, through the quality gate; running it again stores nothing new. Prints the report, whose run
    --undo takes (--dry-run: what it would do, nothing written; --runs: the runs)."""
    if runs:
        if path is not None or dry_run or queued or undo is not None or force:
            raise click.UsageError("--runs lists the runs: no --transcript, --dry-run, --queue or --undo with it")
        with _as_json(state.cortex()) as cx:
            _emit([_dump(r) for r in cx.capture_runs(agent)])
        return
    if undo is not None:
        if path is not None or dry_run or queued:
            raise click.UsageError("--undo RUN undoes a capture: no --transcript, --dry-run or --queue with it")
        with _as_json(state.cortex()) as cx:
            _emit(_dump(cx.undo_capture(agent, undo, force=force)))
        return
    if path is None:
        raise click.UsageError("give --transcript FILE (or --undo RUN)")
    if force:
        raise click.UsageError("--force goes with --undo")
    if dry_run and queued:
        raise click.UsageError("--dry-run reports at once: not with --queue")
    prepared = None
    if model_first:
        from cortex.capture.session import prepare
        from cortex.llm import llm_settings

        settings = llm_settings(project_root=state.root)
        if settings is not None:
            prepared = prepare(state.state_dir / "capture.json" if state.state_dir is not None else None, agent,
                               os.path.abspath(path), settings, summary=not no_summary, format=fmt)
    cx = state.cortex()
    if prepared is not None and hasattr(cx, "adopt_extraction"):
        cx.adopt_extraction(*prepared)
    options: dict[str, Any] = {"format": fmt, "project": project, "markers": not no_markers,
                               "summary": not no_summary, "tasks": not no_tasks}
    if dry_run:
        options["dry_run"] = True
    if queued:
        queue = getattr(cx, "queue_transcript", None)
        if queue is None:
            raise click.UsageError("--queue needs a running server (cortex serve); without one, capture runs here")
        _emit(queue(agent, os.path.abspath(path), **options))
        return
    agent = cx.resolve_agent(agent) or agent  # a hook names a coding agent's type, maybe an alias
    with _as_json(cx) as json_cx:
        report = json_cx.capture_transcript(agent, os.path.abspath(path), **options)
    data = _dump(report)
    _emit(data)
    if data.get("dry_run"):
        click.echo("cortex: dry run: nothing was written (no memory, no use, no checkpoint)", err=True)
    elif data.get("run"):
        click.echo(f"cortex: capture run {data['run']} (undo: cortex capture {agent} --undo {data['run']})", err=True)
    queues = sorted({_review_args(str(h.get("scope", ""))) for h in data.get("held") or []})
    if queues:
        click.echo(f"cortex: {len(data['held'])} held for review, not written: see "
                   + ", ".join(f"`cortex review {args}`" for args in queues), err=True)
    if data.get("note"):
        click.echo(f"cortex: {data['note']}", err=True)
    for problem in data.get("problems", [])[:20]:
        click.echo(f"cortex: {problem}", err=True)


def _review_args(scope: str) -> str:
    """The arguments of `cortex review` that list the queue of ``scope`` (``agent:NAME``, ``team:NAME``, ``swarm``)."""
    kind, _, name = scope.partition(":")
    return "--swarm" if kind == "swarm" else f"--team {name}" if kind == "team" else name


def _dump(answer: Any) -> Any:
    """An answer as JSON data (a client may answer JSON already)."""
    return answer if isinstance(answer, dict) else answer.model_dump(mode="json")


@command("record_use")
@click.argument("agent")
@click.argument("output", default="-")
@click.option("--session", default=None, help="The session whose start showed the memories (default: none).")
@pass_state
def used(state: _State, agent: str, output: str, session: str | None) -> None:
    """Mark the memories shown at AGENT's latest start that OUTPUT ('-': stdin) drew on (cited, repeated or
    applied): usedCount + 1, which ranking prefers to having been shown. Prints the memories marked."""
    with _as_json(state.cortex()) as cx:
        marked = cx.record_use(agent, _read_content(output), session=session)
    _emit([_memory_json(m) for m in marked])


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (end, task_done, capture, used)
