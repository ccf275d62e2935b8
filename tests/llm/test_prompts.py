"""The prompts, frozen: each prompt's text (as the code holds it, placeholders and all) and the request it makes
for fixed input (system and user messages, the response format's name and schema) equal the golden files in
``tests/golden/prompts/``. A prompt that changes on purpose gets a new ``VERSION`` and its files are written with
``CORTEX_UPDATE_GOLDEN=1 python -m pytest tests/llm/test_prompts.py`` and reviewed in the diff."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cortex import llm
from cortex.consolidation import contradictions, distil, team
from cortex.model import Memory, Source
from tests.paths import TESTS

GOLDEN = TESTS / "golden" / "prompts"
UPDATE = os.environ.get("CORTEX_UPDATE_GOLDEN") == "1"

T0 = datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc)


def check(name: str, text: str) -> None:
    """``text`` equals the golden file ``name`` byte for byte (written instead with CORTEX_UPDATE_GOLDEN=1)."""
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"no golden file {path}: write it with CORTEX_UPDATE_GOLDEN=1"
    assert path.read_bytes().decode("utf-8") == text, f"the prompt changed: golden/prompts/{name}"


class Recorder:
    """Stands in for :class:`cortex.llm.LLMClient`: records the request and answers ``answer`` validated."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []

    def complete_json(self, system: str, user: str, schema: Any, name: str) -> Any:
        self.requests.append({"name": name, "system": system, "user": user, "schema": llm.strict_schema(schema)})
        return schema.model_validate(self.answer)


def memory(mid: str, content: str, days: int, **fields: Any) -> Memory:
    created = T0 + timedelta(days=days)
    return Memory(id=mid, agent="reviewer", content=content, type="convention", project="shop", confidence=0.7,
                  usage_count=2, created_at=created, last_used_at=created, **fields)


TRANSCRIPT = "user: the deploy failed\nassistant: migrations must run first\nuser: thanks, \u00e9t\u00e9 \"quoted\""


def ask_extract(client: Any) -> None:
    llm.extract(client, TRANSCRIPT, 3)


def ask_summary(client: Any) -> None:
    llm.summarize(client, TRANSCRIPT)


def ask_contradictions(client: Any) -> None:
    a = memory("01a", "Tests run with pytest -n 4", 0)
    b = memory("01b", "Tests never run with pytest -n 4", 3, validated_at=T0 + timedelta(days=4))
    c = memory("01c", "The cache is Redis \u00e0 6379", 1, used_count=3)
    d = memory("01d", "The cache is Redis on 6380", 2)
    contradictions.judge(client, [contradictions.Pair(a, b, 0.8), contradictions.Pair(c, d, 0.5)])


def ask_distil(client: Any) -> None:
    session = distil.Session(["transcript:/x.jsonl#10"], "x.jsonl (s1, bytes 0-10)", T0, 5,
                             "user: hi\nassistant: LESSON: use uv\n\nRecorded for this session:\n- [task_completion] done")
    distil.distil(client, session, 4)


def ask_team(client: Any) -> None:
    existing = [memory("01e", "The team uses Postgres 15", 0, tags=("team-memory", "decision"), scope="team:core")]
    outcomes = [memory("01f", "Migrated the orders table", 2, source=Source.TASK_COMPLETION, author="worker")]
    learnings = [memory("01g", "Alembic needs --autogenerate off for views", 1, author="worker2")]
    text = team.round_text(existing, outcomes, learnings, 10_000)
    team.extract(client, text, {"01e"}, 7)


#: prompt name -> (its text, the call that sends it, the answer the stand-in gives)
PROMPTS: dict[str, tuple[Callable[[], str], Callable[[Any], None], dict[str, Any]]] = {
    "extract": (lambda: llm.EXTRACT_SYSTEM, ask_extract, {"memories": []}),
    "summary": (lambda: llm.SUMMARY_SYSTEM, ask_summary, {"summary": "done"}),
    "contradictions": (lambda: contradictions.SYSTEM, ask_contradictions, {"contradictions": []}),
    "distil": (lambda: distil.SYSTEM, ask_distil, {"memories": []}),
    "team": (lambda: team.SYSTEM, ask_team, {"entries": []}),
}


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_the_prompt_text_is_unchanged(name: str) -> None:
    text, _, _ = PROMPTS[name]
    check(f"{name}.txt", text())


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_the_request_is_unchanged(name: str) -> None:
    _, ask, answer = PROMPTS[name]
    client = Recorder(answer)
    ask(client)
    assert len(client.requests) == 1
    check(f"{name}.request.json", json.dumps(client.requests[0], indent=1, sort_keys=True, ensure_ascii=False) + "\n")


#: Prompts changed on purpose since their first version (team 2: the members' text is quoted data).
VERSIONS = {"team": 2}


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_each_prompt_lives_in_its_module_with_a_version(name: str) -> None:
    """The text every caller uses is its prompt module's; a changed text comes with a new VERSION."""
    from importlib import import_module

    module = import_module(f"cortex.llm.prompts.{name}")
    assert module.SYSTEM is PROMPTS[name][0]()
    assert module.VERSION == VERSIONS.get(name, 1)
