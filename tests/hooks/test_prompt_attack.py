"""The recall at each prompt through the real hook process, attacked: a session id that climbs (``../``) or
weighs a megabyte, a payload of invalid UTF-8 or with raw NUL bytes, another agent's memories. The hook exits 0,
answers nothing harmful, and leaves the store's state bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cortex import Cortex
from tests.hooks.test_prompt_recall import NEEDED, PROMPTS, context, hook, homes, log, payload, seed
from tests.service_helpers import env, make_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "shop", "developer", "intruder")


def raw_hook(project: Path, tool: str, raw: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cortex", "hook", tool, PROMPTS[tool], "--agent", "developer"],
                          input=raw, cwd="/", capture_output=True, env=env(**homes(project)), timeout=120)


def state_files(project: Path) -> dict[str, int]:
    root = project / ".cortex"
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()
            and "store" not in p.relative_to(root).parts}


@pytest.mark.parametrize("session", ["../../../../etc/passwd", "../" * 50 + "x", "a/b\\c\x00d", "\u202e\ud83d\ude00",
                                     "s" * 1_000_000], ids=["etc", "climb", "separators", "bidi", "megabyte"])
def test_hostile_session_ids_stay_inside_and_bounded(project: Path, session: str) -> None:
    seed(project, NEEDED)
    outside = {p for p in project.parent.rglob("*")}
    for tool in sorted(PROMPTS):
        data = payload(tool, PROMPTS[tool], project, prompt="how are order totals quantized?", session_id=session)
        result = hook(project, tool, PROMPTS[tool], data)
        assert result.returncode == 0, result.stderr
        context(tool, PROMPTS[tool], result)
    created = {p for p in project.parent.rglob("*")} - outside
    assert all(project / ".cortex" in p.parents for p in created), created
    assert sum(state_files(project).values()) < 200_000, state_files(project)  # a session id is no storage
    assert "Traceback" not in log(project)


@pytest.mark.parametrize("raw", [b"\xff\xfe{\"prompt\": \"order totals\"}", b'{"prompt": "order \xc3\x28 totals"}',
                                 b'{"prompt": "order\x00totals", "session_id": "n"}', b"\x00" * 1000,
                                 b'{"prompt": "' + b"\xed\xa0\x80" * 1000 + b'"}'])
def test_undecodable_payloads_exit_0_and_log_one_line(project: Path, raw: bytes) -> None:
    seed(project, NEEDED)
    for tool in sorted(PROMPTS):
        before = log(project).count("\n")
        result = raw_hook(project, tool, raw)
        assert result.returncode == 0 and result.stdout in (b"", b"{}\n"), (tool, result.stdout[:200])
        assert log(project).count("\n") - before <= 1, log(project)[-2000:]
    assert "Traceback" not in log(project)


def test_another_agents_memories_are_never_recalled(project: Path) -> None:
    seed(project, NEEDED)
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("intruder")
        cx.store_many("intruder", [{"content": "order totals are secretly rounded down by the intruder",
                                    "confidence": 0.99}])
    for tool in sorted(PROMPTS):
        data = payload(tool, PROMPTS[tool], project, prompt="how are order totals quantized and rounded?",
                       session_id=f"x-{tool}")
        text = context(tool, PROMPTS[tool], hook(project, tool, PROMPTS[tool], data)) or ""
        assert "intruder" not in text and NEEDED in text, text
