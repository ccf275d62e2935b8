"""Gemini CLI puts its ``<hook_context>`` blocks (a hook's context, escaped) before the prompt a hook receives:
the task Cortex reads is the user's own text (issue 33, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortex.service.harnesses.gemini import HARNESS, user_prompt

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "gemini"
#: The context as Gemini CLI 0.61 hands it on: ``<`` and ``>`` escaped, wrapped in its own tag.
WRAPPED = "<hook_context>Agent memory (developer):\n- money is Decimal &lt;never float&gt;</hook_context>"


def recorded(event: str) -> dict[str, object]:
    """A recorded Gemini CLI payload."""
    payload: dict[str, object] = json.loads((FIXTURES / f"{event}.json").read_text())
    return payload


@pytest.mark.parametrize("event", ["BeforeAgent", "AfterAgent"])
def test_the_task_is_the_prompt_without_the_clis_hook_context(event: str) -> None:
    payload = recorded(event)
    typed = payload["prompt"]
    wrapped = payload | {"prompt": f"{WRAPPED}\n\n{WRAPPED}\n\n{typed}"}
    assert user_prompt(wrapped) == typed
    assert user_prompt(payload) == typed
    if event == "BeforeAgent":
        assert HARNESS.call(event, wrapped).task == typed


@pytest.mark.parametrize("prompt, task", [
    ("<hook_context>unclosed and typed by the user", "<hook_context>unclosed and typed by the user"),
    (f"{WRAPPED}", None),
    (f"{WRAPPED}   \n ", None),
    ("ask about <hook_context>x</hook_context> later", "ask about <hook_context>x</hook_context> later"),
    (f"{WRAPPED}Ｆix «quotes\" ＞ and\nnewlines", "Ｆix «quotes\" ＞ and\nnewlines"),
    (f"{WRAPPED}\n" + "y" * 200_000, "y" * 200_000),
    ("<HOOK_CONTEXT>not the CLI's tag</HOOK_CONTEXT> go", "<HOOK_CONTEXT>not the CLI's tag</HOOK_CONTEXT> go"),
])
def test_only_the_clis_leading_blocks_are_taken_away(prompt: str, task: str | None) -> None:
    assert user_prompt({"prompt": prompt}) == task
    assert HARNESS.call("BeforeAgent", {"prompt": prompt}).task == task


def test_a_prompt_that_is_not_text_is_no_task() -> None:
    assert user_prompt({"prompt": ["garbage"]}) is None
    assert HARNESS.call("BeforeAgent", {"prompt": 42}).task is None
