"""One adapter per coding agent (``cortex hook <tool> EVENT``, ``cortex install <tool>``): each maps its tool's
events and payload fields to what Cortex does (:mod:`~cortex.service.harnesses.base`) and renders its tool's
output format; :mod:`cortex.service.hooks` does the work they share.

* :mod:`~cortex.service.harnesses.claude`: Claude Code;
* :mod:`~cortex.service.harnesses.codex`: OpenAI Codex CLI;
* :mod:`~cortex.service.harnesses.cursor`: Cursor (IDE and ``cursor-agent``);
* :mod:`~cortex.service.harnesses.gemini`: Gemini CLI;
* :mod:`~cortex.service.harnesses.tools`: what a tool call did (Beads comments, files a patch wrote).

Standard library only, each imported when its tool's hook runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex.service.harnesses.base import Harness

NAMES = ("claude", "codex", "cursor", "gemini")


def get(name: str) -> Harness | None:
    """The adapter of the tool ``name``, or None for a name Cortex has none for."""
    if name == "claude":
        from cortex.service.harnesses import claude

        return claude.HARNESS
    if name == "codex":
        from cortex.service.harnesses import codex

        return codex.HARNESS
    if name == "cursor":
        from cortex.service.harnesses import cursor

        return cursor.HARNESS
    if name == "gemini":
        from cortex.service.harnesses import gemini

        return gemini.HARNESS
    return None
