"""Recall at each prompt: ``UserPromptSubmit`` (Claude Code, Codex) and ``BeforeAgent`` (Gemini CLI) add the few
memories the prompt needs that the session's context does not hold yet (``Cortex.agent_prompt``: not in its
start's block, nor added by an earlier prompt, nor written by the session itself), within a small budget.

A prompt that asks for nothing to recall ("ok", "thanks", "continue", "yes please", a slash command, a shell
escape, a background task's notification) is answered at once, before the store is reached
(:func:`worth_recall`): a hook that runs before every turn must cost nothing when it has nothing to add.
Standard library only (the hook path).
"""

from __future__ import annotations

import re
from typing import Any

from cortex.service.harnesses.base import Call, Harness
from cortex.service.hooks.offsets import Offsets
from cortex.service.hooks.session import MAX_TASK_CHARS, HookSession

#: The most characters a prompt adds (the facade's default budget, config.DEFAULT_PROMPT_MAX_CHARS).
PROMPT_MAX_CHARS = 1500
#: Words that carry no topic: acknowledgements, go-aheads and fillers ("ok", "thanks", "yes, continue").
ACKS = frozenset("""
    ok okay k kk yes yep yeah yup ya y no nope nah n sure thanks thank thx ty cheers please pls plz continue
    go ahead proceed next done good great nice cool perfect fine lgtm sgtm sounds looks look right correct agreed
    alright again retry keep going carry on do it that this these those works worked and the a an to of for me
    you we i so then now just please yes wait stop hmm hm ah oh wow
""".split())
#: What a user types that is not a request to work on something: a slash command (``/compact``), a shell escape
#: (``!ls``), and what the agent itself queues as a prompt (a background subagent's ``<task-notification>``).
NOT_A_REQUEST = re.compile(r"\s*(?:[/!]|<(?:task-notification|system-reminder|command-|local-command))")
_WORD = re.compile(r"\w+")


def worth_recall(prompt: Any) -> bool:
    """Whether ``prompt`` names something to recall memories for: at least two words that are not
    acknowledgements or fillers (with 8 letters between them), or one long one (a language written without
    spaces); never a slash command, a shell escape or a notification the agent queued."""
    if not isinstance(prompt, str) or NOT_A_REQUEST.match(prompt):
        return False
    words = [w for w in _WORD.findall(prompt[:MAX_TASK_CHARS].casefold()) if w not in ACKS and not w.isdigit()]
    return (len(words) >= 2 and sum(len(w) for w in words) >= 8) or any(len(w) >= 10 for w in words)


def prompt(session: HookSession, adapter: Harness, event: str, call: Call, agent_type: str) -> str:
    """The memories the prompt of ``call`` needs, as ``adapter``'s answer to ``event`` (its "nothing" when none)."""
    text = (call.task or "")[:MAX_TASK_CHARS]
    shown_as = Offsets(session.root).shown_as(agent_type, call.session)
    if shown_as is not None:
        session.hint(agent_type, shown_as)  # the name the start resolved: with a server, a request saved
    name, block = session.with_agent(agent_type, lambda cx, name: (name, cx.agent_prompt(
        name, text, max_chars=min(adapter.max_context, PROMPT_MAX_CHARS))))
    return adapter.answer(event, adapter.context(block, name) if block else None)
