"""The contradictions prompt: which pairs of an agent's memories contradict, and which of each pair to keep
(consolidation, :mod:`cortex.consolidation.contradictions`; its answer is a ``Contradictions`` there)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from cortex.model import Memory

VERSION = 1

SYSTEM = """You check an AI coding agent's long-term memory for contradictions.
You get pairs of memories (each with its id, when it was written, how often it was used and validated).
A pair contradicts when both cannot be true at once for the same project: a convention and its replacement, two
different values of the same setting, a rule and its negation. Two memories about different things, or one more
specific than the other, do not contradict.
For each pair that contradicts, name the memory to keep and the one to supersede: keep the newer one, unless the
older one is clearly better supported (validated or used much more). Give a short reason.
Answer with JSON only: {"contradictions": [{"keep": "<id>", "supersede": "<id>", "reason": "..."}]}; an empty
list when none contradicts. Use only the ids given."""


def shown(memory: Memory) -> dict[str, object]:
    """What the model is shown of one memory of a pair."""
    return {"id": memory.id, "content": memory.content[:1000], "written": memory.created_at.date().isoformat(),
            "validated": memory.validated_at.date().isoformat() if memory.validated_at else None,
            "used": memory.usage_count + memory.used_count, "confidence": memory.confidence}


def messages(pairs: Sequence[tuple[Memory, Memory]]) -> tuple[str, str]:
    """The system and user messages asking about ``pairs`` (each the older memory first), numbered from 1."""
    lines = [json.dumps({"pair": n + 1, "a": shown(a), "b": shown(b)}, ensure_ascii=False)
             for n, (a, b) in enumerate(pairs)]
    return SYSTEM, "The pairs, one JSON object per line:\n" + "\n".join(lines)
