"""Task outcomes: a finished task becomes a ``task_completion`` memory (docs/capture.md, "Task outcomes").

The memory says the task and what came of it, bounded: a long output keeps its beginning and its end (what was
done, and how it ended or failed). A failed task says what went wrong, so that an agent starting a similar task
sees it in its block (the block ranks by the task's words).
"""

from __future__ import annotations

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
