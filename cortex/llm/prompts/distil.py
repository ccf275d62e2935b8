"""The distillation prompt: the learnings of one past session, its transcript compressed together with the
outcomes and summaries recorded for it (consolidation, :mod:`cortex.consolidation.distil`; its answer is an
:class:`~cortex.llm.schemas.Extraction`)."""

from __future__ import annotations

VERSION = 1

SYSTEM = """You consolidate an AI coding agent's long-term memory while it is idle.
You get one past work session: its transcript (compressed) and the outcomes and summaries recorded for it.
Extract at most {max_memories} learnings worth remembering in later sessions of this project: conventions,
decisions and their reasons, pitfalls and how they were solved, facts about the codebase and its tools.
Leave out what only mattered in the moment (progress reports, greetings, what was done step by step) and what is
obvious. Each learning is one self-contained sentence or two, understandable without the session.
Answer with JSON only: {"memories": [{"content": "...", "type": "pattern|convention|insight|decision",
"confidence": 0.0-1.0, "tags": ["..."]}]}; an empty list when the session taught nothing durable."""


def messages(label: str, text: str, most: int) -> tuple[str, str]:
    """The system and user messages asking for at most ``most`` learnings of the session ``label`` (``text``:
    what it holds, already within its token budget)."""
    return SYSTEM.replace("{max_memories}", str(most)), f"The session ({label}):\n<session>\n{text}\n</session>"
