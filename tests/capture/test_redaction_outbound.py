"""Nothing secret leaves the machine for the model (issue 29, finding 10, first half): every chat-completions
request (transcript extraction and summary, consolidation's contradictions and distillation, the lead's team
memory) is redacted by the one place every request passes, the LLM client, which the engine gives the capture's
redaction. The stand-in server keeps every request body as sent."""

from __future__ import annotations

import json
import warnings

import pytest

from tests.llm_standin import StandIn
from tests.teams import backend_team

GITHUB = "ghp_" + "Qm7Rt2Xv9Lp4Kd8Wn3Hs6Jf1Zc5Bg0Ny2Ta4"
AWS = "AKIAQ3N7W2XK9RLT5MPD"
PASSWORD = "postgres://app:Vt8q2LmZr4Kx9Wn@db:5432/app"
SECRETS = (GITHUB, AWS, "Vt8q2LmZr4Kx9Wn")


def sent(llm: StandIn) -> str:
    """Every request body the model received, as one text."""
    assert llm.requests, "the model was never asked"
    return "\n".join(json.dumps(r) for r in llm.requests)


@pytest.fixture
def llm():
    with StandIn() as standin:
        yield standin


@pytest.fixture
def cx(tmp_path, llm):
    with backend_team(tmp_path, llm.url) as cx:
        yield cx


def line(kind: str, content: object) -> dict:
    return {"type": kind, "message": {"role": kind, "content": content}, "sessionId": "s-1",
            "timestamp": "2026-11-24T10:00:00Z"}


def test_a_transcripts_secrets_never_reach_the_model(cx, llm, tmp_path):
    path = tmp_path / "s.jsonl"
    entries = [line("user", f"Deploy with {GITHUB} and the database {PASSWORD}"),
               line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": f"AWS_ACCESS_KEY_ID={AWS}"}]),
               line("assistant", [{"type": "text", "text": f"Done.\nLESSON: the deploy token is {GITHUB}\n"
                                                           "LESSON: staging listens on port 5433"}])]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = cx.capture_transcript("coder", path)
    assert report.llm and len(llm.requests) >= 1
    body = sent(llm)
    assert not [s for s in SECRETS if s in body]
    assert "[REDACTED:github-token]" in body
    stored = json.dumps([m.model_dump(mode="json") for m in cx.list_memories("coder", limit=100).items])
    assert not [s for s in SECRETS if s in stored]


def test_consolidation_and_team_memory_send_no_secret(cx, llm):
    cx.store("rev", f"The API server listens on port 8080 behind {PASSWORD}")  # explicit: kept as written
    cx.store("rev", f"The API server does not listen on port 8080 behind {PASSWORD}")
    cx.store("coder", f"LESSON: the CI token is {GITHUB}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cx.record_task("rev", "Choose the queue", f"DECISION: the team uses Redis streams; key {AWS}")
        cx.consolidate("rev")
        cx.team_round_end("backend")
    names = {r["response_format"]["json_schema"]["name"] for r in llm.requests}
    assert {"contradictions", "team_memory"} <= names
    body = sent(llm)
    assert not [s for s in SECRETS if s in body]
