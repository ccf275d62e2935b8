"""Task outcomes: a finished task becomes a ``task_completion`` memory (docs/capture.md, "Task outcomes").

The memory says the task and what came of it, bounded: a long output keeps its beginning and its end (what was
done, and how it ended or failed). A failed task says what went wrong, so that an agent starting a similar task
sees it in its block (the block ranks by the task's words).
"""

from __future__ import annotations

import re
from typing import Any

from cortex.errors import InvalidInputError

STATUSES = ("ok", "failed")
#: Characters of the task and of the outcome a task memory keeps.
MAX_TASK_CHARS = 300
MAX_OUTCOME_CHARS = 1500


def _bounded(text: str, limit: int) -> str:
    """``text``, or its beginning and end around " … " when it is longer than ``limit``."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half].rstrip()} … {text[-half:].lstrip()}"


def task_entry(task: Any, output: Any, status: Any) -> dict[str, Any]:
    """The fields of the memory that records ``task`` ending with ``status`` after writing ``output``
    (:class:`InvalidInputError` names a bad field)."""
    if status not in STATUSES:
        raise InvalidInputError("status", f"must be ok or failed, not {status!r}")
    if not isinstance(task, str) or not task.strip():
        raise InvalidInputError("task", "must say what the task was (a non-empty text)")
    if not isinstance(output, str):
        raise InvalidInputError("output", f"must be text, not {type(output).__name__}")
    shown = _bounded(" ".join(task.split()), MAX_TASK_CHARS)
    outcome = _bounded(output, MAX_OUTCOME_CHARS)
    if status == "failed":
        content = f"Task failed: {shown}" + (f"\nWhat went wrong: {outcome}" if outcome else "")
    else:
        content = f"Task done: {shown}" + (f"\nOutcome: {outcome}" if outcome else "")
    return {"content": content, "type": "insight", "source": "task_completion",
            "tags": ["task-outcome", f"task-{status}"], "metadata": {"task": shown, "status": status}}


_FAILED = re.compile(r"\b(?:failed|failure|fail|could not|couldn't|unable to|cannot|can't|did not (?:succeed|work|pass)|"
                     r"didn't (?:succeed|work|pass)|gave up|blocked by|not able to|was not possible)\b|"
                     r"\b(?:error|exception|traceback)\b:?", re.IGNORECASE)
_SUCCEEDED = re.compile(r"\b(?:all (?:\d+ )?tests pass(?:ed)?|succeeded|successfully|completed|done|fixed|passes|"
                        r"passing)\b", re.IGNORECASE)


def task_status(text: str, is_error: bool = False) -> str:
    """``failed`` when the call ended in an error, or when the final message says it failed (its opening or its
    last lines name a failure and do not claim success after it); else ``ok``. A heuristic: a harness that
    reports the outcome itself should call ``record_task`` with it."""
    if is_error:
        return "failed"
    text = text.strip()
    if not text:
        return "ok"
    head, tail = text[:300], text[-300:]
    for part in (head, tail):
        failure = _FAILED.search(part)
        if failure and not _SUCCEEDED.search(part[failure.end():]):
            return "failed"
    return "ok"
