"""What every harness adapter shares: a hook call in Cortex's terms (:class:`Call`), what an adapter read of an
agent's own new output (:class:`Reading`), the :class:`Harness` base class, and the hook log and path checks every
hook makes. Standard library only (the hook path, :mod:`cortex.service.hooks`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from cortex import config

# -- what Cortex does for an event (each adapter maps its tool's events to these) --------------------------------
#: the main session starts: inject its agent's block
START = "start"
#: a subagent starts: inject its agent's block, ranked for its task
SUBAGENT_START = "subagent_start"
#: the main agent ended a turn: capture the marker lines of what it wrote
STOP = "stop"
#: a subagent ended: capture what it wrote, record its task outcome, queue its transcript for a model
SUBAGENT_STOP = "subagent_stop"
#: the session ended: capture what is left, queue its transcript for a model
SESSION_END = "session_end"
#: a tool ran: the marker lines of a Beads comment, a notes file written
TOOL = "tool"
#: the user submitted a prompt (``Call.task``): add the memories it needs that the context lacks
PROMPT = "prompt"
ENDS = (STOP, SUBAGENT_STOP, SESSION_END)
STARTS = (START, SUBAGENT_START)


@dataclass
class Call:
    """One hook call as Cortex needs it, whatever the tool that made it. A field the payload lacks (another
    version of the tool, a malformed payload) is None, empty or false: never an error."""

    action: str | None
    #: the agent the payload names (a subagent's type); else the hook command's ``--agent``
    agent_type: str | None = None
    session: str | None = None
    #: the directory the payload names as the session's (checked by the shared code); None: the current one
    cwd: Any = None
    #: a start of a session that started before (resumed, compacted, cleared): its memories are not touched again;
    #: None when the tool does not say (then a session that was shown a block before is one)
    repeated: bool | None = False
    task: str | None = None
    #: the text the agent ended with (its last message, a subagent's summary)
    last_message: str | None = None
    #: the tool runs the hook again for a stop the hook itself prolonged: capture nothing
    stop_hook_active: bool = False
    #: how a subagent ended when the tool says (``completed``, ``error``, ``aborted``)
    status: str | None = None
    #: a shell command that ran (TOOL)
    command: str | None = None
    #: files a tool wrote (TOOL)
    files: tuple[str, ...] = ()
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reading:
    """What an adapter read of the stopping agent's own new output: ``parts`` are ``("text", text)`` for what it
    wrote and ``("tool_use", input)`` for its tool calls, in order. ``key`` names the offset to move to ``end`` once
    the capture is delivered (None: nothing to remember); ``file`` is the transcript a language model may read;
    ``beads`` the (bead, comment) of the Beads comments its commands added, when the transcript says they
    succeeded and the tool's PostToolUse could not (Codex)."""

    parts: list[tuple[str, str]]
    key: str | None = None
    end: int = 0
    file: str | None = None
    beads: list[tuple[str, str]] = field(default_factory=list)


#: The offset reached in a transcript: ``offset(transcript, key)``.
Offset = Callable[[str, str], int]


class Harness:
    """A coding agent's hooks: its event names, how its payloads map to a :class:`Call`, where it keeps
    transcripts and what it reads on stdout. Subclasses override what differs."""

    name: ClassVar[str] = ""
    #: the tool's name in messages
    title: ClassVar[str] = ""
    #: the tool's events Cortex handles, and what it does for each
    events: ClassVar[dict[str, str]] = {}
    #: the tool shows a hook's stderr to its user: a hook that worked prints nothing there
    quiet: ClassVar[bool] = False
    #: the most characters of context injected (Claude Code truncates additionalContext beyond 10,000)
    max_context: ClassVar[int] = 9_500

    #: the fields every payload of the tool has, and those of each event, in the version the adapter was built
    #: against (a payload without one is handled with what it has, and said in the log)
    common_fields: ClassVar[tuple[str, ...]] = ()
    fields: ClassVar[dict[str, tuple[str, ...]]] = {}

    def call(self, event: str, payload: dict[str, Any]) -> Call:
        """The payload of ``event`` in Cortex's terms."""
        raise NotImplementedError

    def expected(self, event: str) -> tuple[str, ...]:
        """The fields a payload of ``event`` has in the version the adapter was built against."""
        return (*self.common_fields, *self.fields.get(event, ())) if event in self.events else ()

    def transcript_dirs(self) -> list[Path]:
        """Where the tool keeps its transcripts (besides the project): the only places a hook reads one from."""
        return []

    def readable(self, root: Path, path: Any) -> str | None:
        """``path`` when it is a transcript a hook may read (:func:`readable_transcript`)."""
        return readable_transcript(root, path, self.transcript_dirs(), f"{self.title}'s directory")

    def read_own(self, root: Path, call: Call, offset: Offset) -> Reading | None:
        """The stopping agent's new output (from ``offset`` on in its transcript), or None when there is nothing to
        read (the capture then takes only ``call.last_message``)."""
        return None

    def subagent_task(self, root: Path, call: Call, agent_type: str) -> str | None:
        """What the subagent ``agent_type`` was asked to do."""
        return call.task

    def context(self, block: str, agent: str) -> str:
        """The ``<agent-memory>`` block as this tool should receive it."""
        return block

    def answer(self, event: str, context: str | None) -> str:
        """What to print on stdout for ``event``: ``context`` injected, or (None) nothing to add."""
        return ""

    def label(self, event: str) -> str:
        """The hook event as its PROV-O activity names it."""
        return f"{self.name}:{event}"


def text(payload: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` whose value is a non-empty string."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None


# -- the log, and where a hook may read and write -------------------------------------------------------------

_quiet: ContextVar[bool] = ContextVar("cortex_hook_quiet", default=False)


def quietly(quiet: bool) -> Any:
    """Set whether this hook keeps stderr empty (its tool shows stderr to the user); returns the token to reset."""
    return _quiet.set(quiet)


def reset_quiet(token: Any) -> None:
    _quiet.reset(token)


def say(message: str) -> None:
    """``message`` on stderr, unless the hook's tool shows stderr to its user (then nothing)."""
    if not _quiet.get():
        print(f"cortex: hook: {message}", file=sys.stderr)


def log(root: Path, message: str) -> None:
    """One line in ``<root>/.cortex/logs/hooks.log`` (never through a symbolic link; in a directory that is not a
    Cortex project, on stderr only: a hook creates nothing there)."""
    line = f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} {message}\n"
    if not is_project(root) or linked(root):
        say(message)
        return
    try:
        from cortex.files import append_private, private_dir

        logs = root / ".cortex" / "logs"
        if logs.is_symlink() or (root / ".cortex").is_symlink():
            raise OSError("the log directory is a symbolic link")
        append_private(private_dir(logs) / "hooks.log", line)
    except OSError:
        pass  # nowhere to log: still exit 0


def is_project(root: Path) -> bool:
    """Whether ``root`` uses Cortex: it has ``.cortex/`` or an agent directory. A hook run anywhere else (a
    payload's ``cwd`` of ``/etc``) reads and writes nothing there."""
    return (root / ".cortex").is_dir() or bool(config.discover_agent_dirs(root))


#: Where a hook writes in a project: never through a symbolic link (a cloned repository may carry one pointing
#: anywhere), unless the store is named explicitly ($CORTEX_STORE).
OWN_PATHS = (".cortex", ".cortex/store", ".cortex/state", ".cortex/logs")


def linked(root: Path) -> str | None:
    """The first of the project's Cortex paths that is a symbolic link, or None."""
    for part in OWN_PATHS:
        if part != ".cortex/store" or not os.environ.get(config.STORE_ENV):
            if (root / part).is_symlink():
                return part
    return None


def readable_transcript(root: Path, path: Any, dirs: list[Path], where: str) -> str | None:
    """``path`` when it is a transcript a hook may read: a regular file inside the project or one of ``dirs`` (the
    tool's own directories, named ``where`` in the log; symbolic links resolved first); else None (logged)."""
    if not isinstance(path, str) or not path:
        return None
    try:
        real = Path(path).resolve()
        allowed = [root.resolve(), *(d.resolve() for d in dirs)]
    except (OSError, RuntimeError, ValueError):
        return None
    if not any(real.is_relative_to(d) for d in allowed):
        log(root, f"transcript {path!r} is outside the project and {where}: not read")
        return None
    return str(real) if real.is_file() else None


def home_dir(variable: str | None, default: str) -> Path:
    """``$variable`` when set, else ``~/<default>``."""
    configured = os.environ.get(variable) if variable else None
    return Path(configured).expanduser() if configured else Path.home() / default
