"""Transcript capture: what a finished (or growing) session transcript yields (docs/capture.md, "Transcripts").

The rules live here; :mod:`cortex.capture.pipeline` (driven by :meth:`cortex.app.Cortex.capture_transcript`)
stores what they decide:

* whose lines: a Claude Code main transcript carries its subagents' lines too (``isSidechain``); a capture for
  the main agent reads only its own, a subagent's own transcript is all its (:func:`own_messages`);
* marker lines (``LEARNED:``...) of the agent's text, as at agent end (:func:`marker_text`);
* with a language model (:mod:`cortex.llm`): the session compressed to the token budget (oldest tool output
  dropped first), at most N learnings and a summary (:func:`extract`); without one, marker lines only, said;
* the subagent calls the transcript shows, with their outcome (:func:`subagent_outcomes`);
* what the agent's text and tool calls drew on, for the "used" signal (:func:`output_text`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex.capture.tasks import task_status
from cortex.capture.transcripts import Message, SubagentCall, render

if TYPE_CHECKING:
    from typing import BinaryIO

    from cortex.capture.checkpoints import Checkpoints
    from cortex.llm import LLMSettings

log = logging.getLogger("cortex")

#: Messages of text (user and assistant) a session needs before it is worth a summary.
MIN_SUMMARY_MESSAGES = 2
#: Confidence given to an extracted learning at most (a model's guess is not a validated fact).
MAX_EXTRACTED_CONFIDENCE = 0.8
#: Characters of a subagent's result a task outcome keeps (the task memory bounds it again).
MAX_RESULT_CHARS = 4000



def own_messages(messages: Sequence[Message]) -> list[Message]:
    """The messages of the transcript's own agent: without the sidechain (subagent) lines of a main transcript;
    every line of a transcript that has only sidechain lines (a subagent's own)."""
    main = [m for m in messages if not m.sidechain]
    return main if main else list(messages)


def marker_text(messages: Sequence[Message]) -> str:
    """The marker lines of the assistant's text, message by message (a code fence spans the text blocks of one
    message; one left open in a message does not hide the next one's markers)."""
    from cortex.markers import marker_lines_of_parts

    return marker_lines_of_parts((m.role == "assistant" and m.kind == "text", m.message_id, m.text)
                                 for m in messages)


def output_text(messages: Sequence[Message]) -> str:
    """What the agent wrote and did: its text and its tool calls' inputs (what the "used" signal reads)."""
    return "\n".join(m.text for m in messages if m.role == "assistant" and m.kind in ("text", "tool_use"))


def worth_summary(messages: Sequence[Message]) -> bool:
    """Whether the messages hold a conversation (a user's and an assistant's text at least)."""
    texts = [m for m in messages if m.kind == "text" and m.text.strip()]
    return len(texts) >= MIN_SUMMARY_MESSAGES and {m.role for m in texts} >= {"user", "assistant"}


def subagent_outcomes(calls: Sequence[SubagentCall]) -> list[tuple[str, str, str, str]]:
    """(agent type, task, outcome text, status) of each subagent call whose result the transcript holds."""
    found = []
    for call in calls:
        if call.result_text is None or not call.agent_type:
            continue
        task = " ".join(filter(None, (call.description, call.prompt))) or call.agent_type
        result = call.result_text[-MAX_RESULT_CHARS:]
        found.append((call.agent_type, task, result, task_status(result, call.is_error)))
    return found


def matched(calls: Sequence[SubagentCall], earlier: Sequence[SubagentCall]) -> list[SubagentCall]:
    """``calls`` with each notified outcome whose call was read in an earlier part (an empty agent type) given the
    call of ``earlier`` it names (by tool use id, else by the agent id of its background launch); one that names
    none stays as it is (and records nothing)."""
    from dataclasses import replace

    by_tool = {c.tool_use_id: c for c in earlier if c.agent_type and c.tool_use_id}
    by_task = {c.task_id: c for c in earlier if c.agent_type and c.task_id}
    out = []
    for call in calls:
        found = None if call.agent_type else by_tool.get(call.tool_use_id) or by_task.get(call.task_id or "")
        out.append(replace(found, result_text=call.result_text, is_error=call.is_error) if found else call)
    return out


@dataclass
class Extraction:
    """What the model made of a session: learnings (content, type, confidence, tags), a summary, and what failed
    (``pending``: a failure that may pass, so the part is not checkpointed)."""

    learnings: list[dict[str, Any]] = field(default_factory=list)
    summary: str | None = None
    problems: list[str] = field(default_factory=list)
    pending: bool = False
    calls: int = 0


def outbound() -> "Callable[[str], str]":
    """What a text passes before it is sent to a model: the redaction the environment configures (the same
    rules as what is stored; a secret never leaves the machine in a prompt)."""
    from cortex.capture.redact import Redactor

    redactor = Redactor.from_env()
    return lambda text: redactor.redact(text).text


def extract(messages: Sequence[Message], settings: "LLMSettings", *, summary: bool = True) -> Extraction:
    """Ask the model for at most ``settings.max_memories`` learnings and (with ``summary``, when the messages
    hold a conversation) a summary of the session. A model that cannot be reached leaves the result
    ``pending``; one that answers garbage twice (:class:`~cortex.errors.LLMOutputError`) is logged and its part
    skipped (retrying would get the same answer)."""
    from cortex import llm
    from cortex.errors import LLMError, LLMOutputError

    result = Extraction()
    text = render(messages, settings.token_budget)
    if not text.strip():
        return result
    client = llm.LLMClient(settings, redact=outbound())
    try:
        try:
            for item in llm.extract(client, text, settings.max_memories):
                result.learnings.append({"content": item.content, "type": item.type,
                                         "confidence": min(MAX_EXTRACTED_CONFIDENCE, max(0.0, item.confidence)),
                                         "tags": list(item.tags)})
        except LLMOutputError as exc:
            result.problems.append(f"extraction skipped: {exc}")
            log.warning("transcript capture: extraction skipped: %s", exc)
        if summary and worth_summary(messages):
            try:
                result.summary = llm.summarize(client, text).strip() or None
            except LLMOutputError as exc:
                result.problems.append(f"summary skipped: {exc}")
                log.warning("transcript capture: summary skipped: %s", exc)
    except LLMError as exc:  # unreachable, timed out, refused: the next run tries this part again
        result.problems.append(f"language model failed ({type(exc).__name__}: {exc}); this part is retried next run")
        result.pending = True
        log.warning("transcript capture: %s", exc)
    result.calls = client.calls
    return result


def tags_of(raw: Sequence[str]) -> list[str]:
    """The model's tags as Cortex tags (lowercase slugs; others dropped), then ``extracted``."""
    out = []
    for tag in raw:
        slug = re.sub(r"[^a-z0-9._-]+", "-", str(tag).strip().casefold()).strip("-._")[:64]
        if slug and slug not in out:
            out.append(slug)
    return [*out[:8], "extracted"]


def metadata(session: str | None, transcript: str, model: str | None = None) -> dict[str, Any]:
    """Where a captured memory came from (the transcript's file name, not its path: paths name users)."""
    from pathlib import Path

    data: dict[str, Any] = {"transcript": Path(transcript).name}
    if session:
        data["session"] = session
    if model:
        data["extractor"] = model
    return data


def prepare(checkpoints: Path | None, agent: str, transcript: str, settings: "LLMSettings", *, summary: bool = True,
            format: str | None = None, kept: "Checkpoints | None" = None, handle: "BinaryIO | None" = None
            ) -> tuple[tuple[str, str, int, int], Extraction]:
    """The model's part of a capture, done before any lock is taken (and, in a hook's detached capture, before
    the store is opened): the capture then holds them only to write, not for the seconds the model takes.
    Returns the key the capture recognises it by (agent, transcript, from, to) and the extraction. ``kept``:
    the checkpoints to read (default: those in the file ``checkpoints``); ``handle``: the transcript opened once
    and checked (:func:`cortex.files.open_input`), read instead of the path."""
    import os

    from cortex.capture.checkpoints import Checkpoints
    from cortex.capture.transcripts import read

    real = transcript if handle is not None else os.path.realpath(transcript)
    start = (kept if kept is not None else Checkpoints(checkpoints)).get(agent, real)["llm"]
    part = read(real, start, format=format, handle=handle)
    return (agent, real, start, part.end), extract(own_messages(part.messages), settings, summary=summary)
