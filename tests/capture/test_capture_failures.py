"""Three failures of the capture features themselves (issue 29, finding 15): a ``LEARNED:`` line inside a fenced
code block that a transcript splits over several text blocks or lines is code, not a learning; a team's round end
whose model names the same entry twice merges the duplicates; a capture the SessionEnd hook starts records the
hook and the session as its provenance, not the CLI."""

from __future__ import annotations

import json

import pytest

from cortex.markers import marker_lines_of_parts
from tests.conftest import open_agents


def said(*blocks: str, message: str = "msg_1", role: str = "assistant") -> str:
    return json.dumps({"type": role, "sessionId": "s1", "message": {
        "id": message, "role": role, "content": [{"type": "text", "text": b} for b in blocks]}})


def tool_call() -> str:
    return json.dumps({"type": "assistant", "sessionId": "s1", "message": {"id": "msg_2", "role": "assistant",
                       "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}})


@pytest.mark.parametrize("lines", [
    [said("Example:\n```python\n", "LEARNED: code in a second text block\n```")],
    [said("Example:\n```python"), said("LEARNED: code on a second line of the answer\n```")],
    [said("Example:\n~~~"), said("  LEARNED: code under a tilde fence"), said("~~~\nLEARNED: the real one")],
], ids=["two-text-blocks", "two-transcript-lines", "three-lines-tilde"])
def test_a_marker_line_in_a_code_block_split_over_parts_is_not_captured(tmp_path, lines):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    with open_agents(None, "dev") as cx:
        stored = [m.content for m in cx.capture_transcript("dev", transcript).stored]
    assert all("code" not in s for s in stored), stored
    assert stored == (["the real one"] if "tilde" in lines[-1] or "real" in lines[-1] else [])


def test_a_fence_left_open_closes_with_its_message(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join([said("Unclosed:\n```"), tool_call(), said("LEARNED: after the tool call"),
                                     said("```", message="msg_3"), said("hi", role="user"),
                                     said("LEARNED: after the user", message="msg_4")]) + "\n")
    with open_agents(None, "dev") as cx:
        stored = sorted(m.content for m in cx.capture_transcript("dev", transcript).stored)
    assert stored == ["after the tool call", "after the user"]


def test_the_hooks_read_a_message_split_over_lines_as_one(tmp_path):
    from cortex.service.harnesses.claude import parts
    from cortex.service.hooks.end import marker_text

    entries = [json.loads(said("Example:\n```")), json.loads(said("LEARNED: code")),
               json.loads(said("```\nLEARNED: real")), json.loads(tool_call()),
               json.loads(said("```", message="msg_5")), json.loads(said("LEARNED: next message", message="msg_6"))]
    assert marker_text(parts(entries)).splitlines() == ["LEARNED: real", "LEARNED: next message"]
    assert marker_lines_of_parts([(True, None, "```"), (True, None, "LEARNED: no id, its own message")]) == \
        "LEARNED: no id, its own message"


# -- (b) a round end whose model names the same entry twice ------------------------------------------------------


@pytest.fixture
def team(tmp_path):
    from cortex import Cortex
    from cortex.agents import AgentSettings
    from cortex.consolidation.settings import ConsolidationSettings
    from cortex.llm import LLMSettings
    from tests.llm_standin import StandIn

    with StandIn() as llm, Cortex.open(tmp_path / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("rev", settings=AgentSettings(teams=("backend",)))
        cx.agents.register("boss", settings=AgentSettings(teams=("backend",), lead=True))
        cx.llm = LLMSettings(url=llm.url, model="standin")
        cx.consolidation = ConsolidationSettings()
        yield cx, llm


def entries(cx) -> list[str]:
    return sorted(m.content for m in cx.list_memories("rev", scope="team:backend", tags=["team-memory"]).items)


def test_the_same_new_entry_twice_in_the_answer_is_stored_once(team):
    cx, llm = team
    cx.record_task("rev", "Pick a database", "We chose Postgres")
    same = {"category": "decision", "content": "The team uses Postgres 16", "replaces": None}
    llm.script({"entries": [same, dict(same), {**same, "content": "the team uses  Postgres 16."}]})
    report = cx.team_round_end("backend")
    assert report.run is not None, report.problems
    assert entries(cx) == ["The team uses Postgres 16"]
    assert report.skipped.get("duplicate-in-answer") == 2
    assert not report.problems


def test_the_same_entry_replaced_twice_is_replaced_once(team):
    cx, llm = team
    cx.record_task("rev", "Pick a database", "DECISION: the team uses Postgres 15")
    [old] = cx.team_round_end("backend").created
    cx.record_task("rev", "Upgrade", "We moved to Postgres 16")
    llm.script({"entries": [{"category": "decision", "content": "the team uses Postgres 16", "replaces": old.id},
                            {"category": "decision", "content": "the team uses Postgres 16", "replaces": old.id},
                            {"category": "lesson", "content": "upgrade Postgres with pg_upgrade --link",
                             "replaces": old.id}]})
    report = cx.team_round_end("backend")
    assert report.run is not None, report.problems
    assert entries(cx) == ["the team uses Postgres 16", "upgrade Postgres with pg_upgrade --link"]
    assert [s.old for s in report.superseded] == [old.id]  # replaced once, by the first entry naming it
    assert cx.get("rev", old.id).superseded_by == report.superseded[0].new
    assert report.skipped.get("duplicate-in-answer") == 1


def test_apply_names_a_plan_that_confirms_what_it_creates(team):
    from cortex.consolidation import runs
    from cortex.errors import InvalidInputError
    from cortex.model import ConsolidationReport, Scope

    cx, _ = team
    memory = cx.store("boss", "the team ships on Tuesdays", scope="team:backend")
    plan = runs.Plan(Scope.team("backend"), "boss", "round-end", memory.created_at)
    plan.created = [memory.model_copy(update={"id": "01" + "f" * 26})]
    plan.confirm = [(plan.created[0].id, "repeats"), (memory.id, "repeats"), (memory.id, "again")]
    report = ConsolidationReport(scope="team:backend", actor="boss", started_at=memory.created_at)
    with pytest.raises(InvalidInputError, match="creates and confirms"):
        runs.apply(cx._memories, plan, report, memory.created_at)


# -- (c) a capture the SessionEnd hook starts names the hook -----------------------------------------------------


def test_a_detached_capture_started_by_session_end_records_the_hook_and_its_session(tmp_path):
    import time

    from cortex import Cortex
    from tests.capture.test_capture_transcripts import Replay, append, text
    from tests.llm_standin import StandIn
    from tests.service_helpers import make_project

    project = make_project(tmp_path / "proj", "lead")
    with StandIn() as llm:
        replay = Replay(project, tmp_path / "claude", llm.url)
        append(replay.main, text("user", "Speed up the build"),
               text("assistant", "Profiled it.\nLESSON: The build caches wheels in .cache/pip-wheels"))
        replay.hook("SessionEnd", "lead", reason="logout")
        deadline, found = time.monotonic() + 60, None
        while time.monotonic() < deadline and found is None:
            time.sleep(0.3)
            try:
                with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"],
                                 embeddings=None) as cx:
                    learned = [m for m in cx.list_memories("lead").items if "pip-wheels" in m.content]
                    found = cx.provenance("lead", learned[0].id).generated_by if learned else None
            except Exception:  # noqa: BLE001 - the detached capture holds the store
                continue
    assert found is not None, (project / ".cortex" / "logs" / "capture.log").read_text()
    assert (found.surface, found.event, found.session) == ("hook", "SessionEnd", "sess-1")
    assert found.tool == "capture" and found.channel == "llm"


def test_only_a_hook_activity_is_handed_to_a_process():
    from cortex import provenance

    env = {"CORTEX_ACTIVITY_SURFACE": "hook", "CORTEX_ACTIVITY_EVENT": "SessionEnd", "CORTEX_ACTIVITY_SESSION": "s1"}
    got = provenance.Activity.from_environment(env, "cli")
    assert (got.surface, got.event, got.session) == ("hook", "SessionEnd", "s1")
    assert provenance.Activity.from_environment({**env, "CORTEX_ACTIVITY_SURFACE": "http"}, "cli") == \
        provenance.Activity(surface="cli")
    bad = provenance.Activity.from_environment({**env, "CORTEX_ACTIVITY_SESSION": "s1\nforged"}, "cli")
    assert bad.surface == "hook" and bad.session is None
    assert got.environment() == env and provenance.Activity(surface="cli", event="x").environment() == {}
