"""Consolidation (docs/consolidation.md) through the Python API, on a real on-disk store with the chat-completions
stand-in: merges, contradictions (applied or for review), distilled sessions, a team's round end, the run's
record in provenance, the exact undo, and bad model output changing nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.agents import AgentSettings
from cortex.consolidation.settings import ConsolidationSettings, consolidation_settings
from cortex.errors import InvalidInputError, PermissionDeniedError, RunNotFoundError, UndoConflictError
from cortex.llm import LLMSettings
from tests.llm_standin import Delay, Garbage, StandIn
from tests.teams import backend_team

DUP_A = "Run the tests with `uv run pytest -n 4` before pushing"
DUP_B = "Always run the tests with `uv run pytest -n 4` before pushing!"
DUP_C = "run the tests with `uv run pytest -n 4` before pushing."
NEAR_MISS = "Run the tests with `uv run pytest -n 8` before pushing"
OLD_RULE = "The API server listens on port 8080"
NEW_RULE = "The API server does not listen on port 8080"


@pytest.fixture
def llm():
    with StandIn() as standin:
        yield standin


@pytest.fixture
def cx(tmp_path, llm):
    temp = AgentSettings(teams=("sprint-1",), parents={"sprint-1": "backend"})
    with backend_team(tmp_path, llm.url, temp=temp) as cx:
        yield cx


def snapshot(cx: Cortex, agent: str) -> dict:
    """Every memory of the agent with its full state, and what each was derived from."""
    page = cx.list_memories(agent, scope="agent", include_superseded=True, include_expired=True, limit=1000)
    return {m.id: (m.model_dump(), cx.provenance(agent, m.id).derived_from) for m in page.items}


def current_ids(cx: Cortex, agent: str) -> set[str]:
    return {m.id for m in cx.list_memories(agent, scope="agent", limit=1000).items}


def transcript(path: Path, rounds: int, lessons: list[str]) -> Path:
    messages = []
    for n in range(rounds):
        messages.append({"role": "user", "content": f"Step {n}: please continue with the migration work."})
        body = f"Worked on step {n}."
        if n == rounds - 1:
            body += "\n" + "\n".join(f"LESSON: {lesson}" for lesson in lessons)
        messages.append({"role": "assistant", "content": body})
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


# -- merges ----------------------------------------------------------------------------------------------------

def test_near_duplicates_are_merged_into_the_most_used_with_summed_usage_tags_and_derivation(cx):
    a = cx.store("rev", DUP_A, tags=["testing"])
    b = cx.store("rev", DUP_B, tags=["ci"])
    c = cx.store("rev", DUP_C)
    miss = cx.store("rev", NEAR_MISS)
    for _ in range(3):
        cx.touch("rev", b.id)
    cx.touch("rev", a.id)
    report = cx.consolidate("rev")
    assert report.run and len(report.merges) == 1
    merge = report.merges[0]
    assert merge.survivor == b.id and sorted(merge.merged) == sorted([a.id, c.id])
    survivor = cx.get("rev", b.id)
    assert survivor.usage_count == 4 and survivor.tags == ("ci", "testing") and survivor.superseded_by is None
    for old in (a, c):
        gone = cx.get("rev", old.id)
        assert gone.superseded_by == b.id and "near duplicates merged" in gone.superseded_reason
    assert sorted(cx.provenance("rev", b.id).derived_from) == sorted([a.id, c.id])
    assert current_ids(cx, "rev") == {b.id, miss.id}  # the different number is a different fact
    assert [h.memory.id for h in cx.search("rev", "pytest before pushing", mode="bm25").hits
            if h.memory.id in (a.id, c.id)] == []


def test_a_dry_run_shows_exactly_what_the_run_does_and_writes_nothing(cx):
    cx.store("rev", DUP_A)
    cx.store("rev", DUP_B)
    cx.store("rev", OLD_RULE)
    cx.store("rev", NEW_RULE)
    before = snapshot(cx, "rev")
    dry = cx.consolidate("rev", dry_run=True)
    assert dry.dry_run and dry.run is None and dry.merges and dry.review
    assert snapshot(cx, "rev") == before and cx.consolidation_runs("rev") == []
    real = cx.consolidate("rev")
    strip = lambda r: r.model_dump(exclude={"run", "dry_run", "started_at", "created"})  # noqa: E731
    assert strip(real) == strip(dry)


def test_a_second_run_finds_nothing_new_to_do(cx):
    cx.store("rev", DUP_A)
    cx.store("rev", DUP_B)
    cx.store("rev", OLD_RULE)
    cx.store("rev", NEW_RULE)
    first = cx.consolidate("rev")
    assert first.merges and first.review
    second = cx.consolidate("rev")
    assert second.run is None and not second.merges and not second.review and second.llm_calls == 0
    assert len(cx.review("rev")) == 1  # still open: listed until someone decides


# -- contradictions --------------------------------------------------------------------------------------------

def test_contradictions_are_listed_for_review_unless_configured(cx):
    old = cx.store("rev", OLD_RULE)
    new = cx.store("rev", NEW_RULE)
    report = cx.consolidate("rev")
    assert [(r.keep, r.supersede) for r in report.review] == [(new.id, old.id)] and not report.superseded
    assert cx.get("rev", old.id).superseded_by is None
    [item] = cx.review("rev")
    assert item.run == report.run and item.reason and item.supersede_content == OLD_RULE
    cx.supersede("rev", item.supersede, by=item.keep, reason=item.reason)
    assert cx.review("rev") == []


def test_contradictions_are_superseded_when_configured(cx):
    cx.consolidation = replace(cx.consolidation, apply_contradictions=True)
    old = cx.store("rev", OLD_RULE)
    new = cx.store("rev", NEW_RULE)
    report = cx.consolidate("rev")
    assert [(s.old, s.new) for s in report.superseded] == [(old.id, new.id)]
    gone = cx.get("rev", old.id)
    assert gone.superseded_by == new.id and "contradicted by" in gone.superseded_reason
    assert cx.review("rev") == []


@pytest.mark.parametrize("answers", [(Garbage, Garbage),  # a bad answer is retried once
                                     ({"contradictions": [{"keep": "01nonexistent", "supersede": "x",
                                                           "reason": "made up"}]},),
                                     (Delay(3, {"contradictions": []}),)], ids=["garbage", "unknown-ids", "time-out"])
def test_bad_model_output_changes_nothing_and_is_reported(cx, llm, answers):
    cx.llm = LLMSettings(url=llm.url, model="standin", timeout=0.5)
    cx.store("rev", OLD_RULE)
    cx.store("rev", NEW_RULE)
    before = snapshot(cx, "rev")
    llm.script(*answers)
    report = cx.consolidate("rev")
    assert report.run is None and not report.review and not report.superseded
    assert report.problems or report.pending
    assert snapshot(cx, "rev") == before
    # asked again by the next run (nothing was checkpointed)
    again = cx.consolidate("rev")
    assert len(again.review) == 1


# -- distillation ----------------------------------------------------------------------------------------------

def test_sessions_are_distilled_within_bounds_and_recurring_learnings_gain_confidence(cx, llm, tmp_path):
    known = cx.store("rev", "Use alembic revision --autogenerate for schema migrations", confidence=0.4)
    saved, cx.llm = cx.llm, None
    for n in range(11):
        path = transcript(tmp_path / f"s{n}.json", 5, [f"Migration {n} needs the `--sql` flag in offline mode",
                                                        "Use alembic revision --autogenerate for schema migrations"])
        cx.capture_transcript("rev", path)
    cx.capture_transcript("rev", transcript(tmp_path / "short.json", 2, ["Short sessions are skipped here"]))
    cx.llm = saved
    report = cx.consolidate("rev")
    assert len(report.sessions) == 10 and report.skipped == {"too-few-rounds": 1, "over-max-sessions": 1}
    contents = sorted(m.content for m in report.created)
    assert len(contents) == 10 and all("needs the `--sql` flag" in c for c in contents)
    assert all("distilled" in m.tags for m in report.created)
    confirmed = cx.get("rev", known.id)
    assert confirmed.confidence == pytest.approx(0.4 + 10 * 0.05) and confirmed.validated_at is not None
    made = cx.get("rev", report.created[0].id)
    prov = cx.provenance("rev", made.id)
    assert prov.generated_by.run == report.run and prov.generated_by.channel == "consolidation"
    # the eleventh session is left for the next run; nothing is distilled twice
    later = cx.consolidate("rev")
    assert len(later.sessions) == 1 and len(later.created) == 1
    assert cx.consolidate("rev").sessions == []


def test_a_failed_session_is_retried_by_the_next_run(cx, llm, tmp_path):
    saved, cx.llm = cx.llm, None
    cx.capture_transcript("rev", transcript(tmp_path / "s.json", 4, ["Redis keys expire after 15 minutes here"]))
    cx.llm = saved
    llm.script(Garbage, Garbage)
    first = cx.consolidate("rev")
    assert first.run is None and first.problems and not first.created
    second = cx.consolidate("rev")
    assert [m.content for m in second.created] == ["Redis keys expire after 15 minutes here"]


def test_old_sessions_are_skipped(cx, llm, tmp_path):
    import os
    import time

    saved, cx.llm = cx.llm, None
    path = transcript(tmp_path / "old.json", 6, ["Old lessons are not distilled"])
    cx.capture_transcript("rev", path)
    old = time.time() - 40 * 86400
    os.utime(path, (old, old))
    cx.llm = saved
    report = cx.consolidate("rev")
    assert report.skipped.get("too-old") == 1 and not report.created


# -- undo ------------------------------------------------------------------------------------------------------

def test_undo_restores_exactly_the_state_before_the_run(cx, tmp_path):
    cx.consolidation = replace(cx.consolidation, apply_contradictions=True)
    for content in (DUP_A, DUP_B, DUP_C, OLD_RULE, NEW_RULE, "Keep migrations reversible"):
        cx.store("rev", content)
    saved, cx.llm = cx.llm, None
    cx.capture_transcript("rev", transcript(tmp_path / "s.json", 4, ["Keep migrations reversible",
                                                                      "Docs live in docs/ as Markdown"]))
    cx.llm = saved
    before = snapshot(cx, "rev")
    report = cx.consolidate("rev")
    assert report.merges and report.superseded and report.created and report.confirmed
    assert snapshot(cx, "rev") != before
    undone = cx.undo_consolidation(report.run)
    assert undone.run == report.run and set(undone.removed) == {m.id for m in report.created}
    assert snapshot(cx, "rev") == before
    [info] = cx.consolidation_runs("rev")
    assert info.undone_at is not None
    with pytest.raises(UndoConflictError):
        cx.undo_consolidation(report.run)
    # an undone run's sessions are distilled again by the next run
    again = cx.consolidate("rev")
    assert again.created and again.run != report.run
    assert cx.validate_store(agent="rev") == []


def test_undo_last_and_refusals(cx):
    cx.store("rev", DUP_A)
    b = cx.store("rev", DUP_B)
    report = cx.consolidate("rev")
    assert report.merges[0].merged == [b.id]
    with pytest.raises(RunNotFoundError):
        cx.undo_consolidation("20200101T000000-abcdef")
    with pytest.raises(InvalidInputError):
        cx.undo_consolidation("'; DROP ALL")
    survivor = report.merges[0].survivor
    cx.touch("rev", survivor)  # a use since the run does not stop an undo; an edit does
    cx.update("rev", survivor, content="Run the tests with `uv run pytest -n 4` before every push")
    with pytest.raises(UndoConflictError):
        cx.undo_consolidation("last")  # would overwrite the edit made since
    assert cx.get("rev", b.id).superseded_by is not None  # nothing changed
    done = cx.undo_consolidation("last", force=True)
    assert done.run == report.run and cx.get("rev", b.id).superseded_by is None
    assert cx.get("rev", survivor).usage_count == 1  # the use since the run is kept
    with pytest.raises(RunNotFoundError):
        cx.undo_consolidation("last")


def test_one_target_is_named(cx):
    with pytest.raises(InvalidInputError):
        cx.consolidate()
    with pytest.raises(InvalidInputError):
        cx.consolidate("rev", team="backend")
    with pytest.raises(InvalidInputError):
        cx.consolidate(team="nobody")


# -- team memory -----------------------------------------------------------------------------------------------

def test_round_end_distils_the_round_into_the_team_memory_within_its_bound(cx):
    cx.record_task("rev", "Choose the queue", "DECISION: the team uses Redis streams for the job queue")
    cx.store("coder", "LESSON: flaky tests in CI come from the shared tmp dir")
    cx.record_task("coder", "Profile the API", "MEMBER: coder owns the profiling harness")
    report = cx.team_round_end("backend")
    assert report.run and report.actor == "boss" and len(report.created) == 3
    entries = cx.list_memories("rev", scope="team:backend", tags=["team-memory"]).items
    assert sorted(tuple(sorted(set(m.tags) - {"team-memory"})) for m in entries) == [
        ("decision",), ("lesson",), ("member",)]
    assert all(m.author == "boss" for m in entries)
    # members read it, only the extractor writes it
    with pytest.raises(PermissionDeniedError):
        cx.store("rev", "DECISION: members cannot write this", scope="team:backend", tags=["team-memory"])
    with pytest.raises(PermissionDeniedError):
        cx.forget("rev", entries[0].id)
    # a round with nothing new changes nothing; the next round's repeat confirms, over the bound evicts
    assert cx.team_round_end("backend").run is None
    cx.consolidation = replace(cx.consolidation, team_bound=3)
    cx.record_task("rev", "Choose the queue again", "DECISION: the team uses Redis streams for the job queue")
    cx.record_task("coder", "Set up staging", "CONTEXT: staging runs on the k3s cluster in eu-west")
    second = cx.team_round_end("backend")
    assert len(second.confirmed) == 1 and len(second.created) == 1 and len(second.evicted) == 1
    assert len(cx.list_memories("rev", scope="team:backend", tags=["team-memory"]).items) == 3
    cx.undo_consolidation("last", team="backend")
    assert len(cx.list_memories("rev", scope="team:backend", tags=["team-memory"]).items) == 3
    assert {m.id for m in cx.list_memories("rev", scope="team:backend", tags=["team-memory"]).items} == \
        {m.id for m in entries}


def test_round_end_updates_an_entry_by_supersession_and_refuses_unknown_ids(cx, llm):
    cx.record_task("rev", "Pick a database", "DECISION: the team uses Postgres 15")
    first = cx.team_round_end("backend")
    [entry] = first.created
    cx.record_task("rev", "Upgrade", "We moved to Postgres 16")
    llm.script({"entries": [{"category": "decision", "content": "the team uses Postgres 16", "replaces": "01bogus"}]})
    bad = cx.team_round_end("backend")
    assert bad.run is None and bad.problems and cx.get("rev", entry.id).superseded_by is None
    llm.script({"entries": [{"category": "decision", "content": "the team uses Postgres 16",
                             "replaces": entry.id}]})
    good = cx.team_round_end("backend")
    [new] = good.created
    assert cx.get("rev", entry.id).superseded_by == new.id
    assert cx.provenance("rev", new.id).derived_from == [entry.id]


def test_a_temporary_team_reads_its_parent_and_has_no_extractor(cx):
    cx.record_task("rev", "Pick a database", "DECISION: the team uses Postgres 15")
    cx.team_round_end("backend")
    assert [m.content for m in cx.recall("temp", scope="team:backend")] == ["the team uses Postgres 15"]
    with pytest.raises(PermissionDeniedError):
        cx.store("temp", "a note for the parent", scope="team:backend")
    with pytest.raises(InvalidInputError, match="temporary"):
        cx.team_round_end("sprint-1")


def test_round_end_needs_a_model(cx):
    cx.llm = None
    with pytest.raises(InvalidInputError, match="language model"):
        cx.team_round_end("backend")


def test_without_a_model_only_merges_run(cx):
    cx.llm = None
    cx.store("rev", DUP_A)
    cx.store("rev", DUP_B)
    cx.store("rev", OLD_RULE)
    cx.store("rev", NEW_RULE)
    report = cx.consolidate("rev")
    assert report.merges and not report.review and "no language model" in report.note


# -- the settings ----------------------------------------------------------------------------------------------

def test_settings_come_from_the_environment_and_the_config_file(tmp_path):
    (tmp_path / ".cortex").mkdir()
    (tmp_path / ".cortex" / "config.toml").write_text('[consolidation]\nevery = "6h"\nmax_sessions = 3\n')
    got = consolidation_settings({}, tmp_path)
    assert got.every == timedelta(hours=6) and got.max_sessions == 3 and not got.apply_contradictions
    got = consolidation_settings({"CORTEX_CONSOLIDATE_APPLY_CONTRADICTIONS": "true",
                                  "CORTEX_CONSOLIDATE_EVERY": "off"}, tmp_path)
    assert got.every is None and got.apply_contradictions
    assert consolidation_settings({}, tmp_path / "nowhere").every is None  # off by default
    with pytest.raises(InvalidInputError, match="CORTEX_CONSOLIDATE_MAX_SESSIONS"):
        consolidation_settings({"CORTEX_CONSOLIDATE_MAX_SESSIONS": "0"}, tmp_path)
    (tmp_path / ".cortex" / "config.toml").write_text('[consolidation]\nbogus = 1\n')
    with pytest.raises(InvalidInputError, match="config.toml:2"):
        consolidation_settings({}, tmp_path)


def test_a_consolidated_store_exports_and_imports_losslessly(cx, tmp_path):
    import io

    cx.store("rev", DUP_A)
    cx.store("rev", DUP_B)
    cx.store("rev", DUP_C)
    report = cx.consolidate("rev")
    out = io.BytesIO()
    cx.export(out, agent="rev")
    before = snapshot(cx, "rev")
    with Cortex.open(tmp_path / "copy", embeddings=None) as other:
        other.agents.register("rev")
        other.import_rdf(out.getvalue(), format="trig")
        assert snapshot(other, "rev") == before
        assert [r.run for r in other.consolidation_runs("rev")] == [report.run]
        other.undo_consolidation("last")
        assert len(current_ids(other, "rev")) == 3


@pytest.mark.server
def test_a_run_and_its_undo_on_a_shared_sparql_store(remote_store_url, llm):
    """Merges with summed usage (a shared store counts uses as triples), a contradiction applied, the undo."""
    with Cortex.open(remote_store_url, embeddings=None) as cx:
        cx.agents.register("rev")
        cx.llm = LLMSettings(url=llm.url, model="standin")
        cx.consolidation = ConsolidationSettings(apply_contradictions=True)
        a = cx.store("rev", DUP_A)
        b = cx.store("rev", DUP_B)
        old, new = cx.store("rev", OLD_RULE), cx.store("rev", NEW_RULE)
        for _ in range(2):
            cx.touch("rev", b.id)
        cx.touch("rev", a.id)
        before = snapshot(cx, "rev")
        report = cx.consolidate("rev")
        assert [(m.survivor, m.merged) for m in report.merges] == [(b.id, [a.id])]
        assert cx.get("rev", b.id).usage_count == 3 and cx.get("rev", a.id).superseded_by == b.id
        assert cx.get("rev", old.id).superseded_by == new.id
        assert cx.provenance("rev", b.id).derived_from == [a.id]
        cx.touch("rev", b.id)  # a use after the run: not a reason to refuse the undo, and kept by it
        cx.undo_consolidation("last")
        after = snapshot(cx, "rev")
        assert after[b.id][0]["usage_count"] == 3  # its own 2 uses and the one since the run
        after[b.id][0]["last_used_at"] = before[b.id][0]["last_used_at"]
        after[b.id][0]["usage_count"] = before[b.id][0]["usage_count"]
        assert after == before


def test_done_when_one_run_merges_supersedes_distils_and_the_team_round_stays_bounded_all_undone(cx, tmp_path):
    """The issue's scenario: planted duplicates, a contradiction and ten finished sessions; one run; the team's
    round; every change in provenance; both undone exactly."""
    cx.consolidation = replace(cx.consolidation, apply_contradictions=True, team_bound=4)
    dups = [cx.store("rev", text) for text in (DUP_A, DUP_B, DUP_C)]
    old, new = cx.store("rev", OLD_RULE), cx.store("rev", NEW_RULE)
    saved, cx.llm = cx.llm, None
    for n in range(10):
        cx.capture_transcript("rev", transcript(tmp_path / f"s{n}.json", 4 + n % 3,
                                                [f"Service {n} reads its settings from config/service{n}.toml"]))
        cx.record_task("coder", f"task {n}", f"LESSON: module {n} needs the `--strict` flag" if n < 6 else "done")
    cx.llm = saved
    before_agent, before_team = snapshot(cx, "rev"), cx.list_memories("boss", scope="team:backend", limit=100).items

    report = cx.consolidate("rev")
    [merge] = report.merges
    assert set([merge.survivor, *merge.merged]) == {d.id for d in dups}
    assert [(s.old, s.new) for s in report.superseded] == [(old.id, new.id)]
    assert len(report.sessions) == 10 and len(report.created) == 10
    for memory_id in merge.merged:
        revisions = cx.provenance("rev", memory_id).changes
        assert [(r.action, r.run) for r in revisions] == [("consolidate", report.run)]
    assert set(cx.provenance("rev", merge.survivor).derived_from) == set(merge.merged)
    assert all(cx.provenance("rev", m.id).generated_by.run == report.run for m in report.created)
    [info] = cx.consolidation_runs("rev")
    assert (info.run, info.merged, info.superseded, info.created, info.sessions) == (report.run, 2, 1, 10, 10)

    first_round = cx.team_round_end("backend")
    assert len(first_round.created) == 4 and first_round.skipped == {"over-team-bound": 2}
    cx.record_task("coder", "pick the broker", "DECISION: the team uses NATS for events")
    cx.record_task("coder", "pick the cache", "DECISION: the team uses Valkey as its cache")
    round_end = cx.team_round_end("backend")
    assert round_end.run and len(round_end.created) == 2 and len(round_end.evicted) == 2
    entries = cx.list_memories("boss", scope="team:backend", tags=["team-memory"], limit=100).items
    assert len(entries) == 4  # within its bound; the evicted two are retired, not deleted
    assert all(cx.get("boss", e.memory_id).valid_until is not None for e in round_end.evicted)

    cx.undo_consolidation("last", team="backend")
    cx.undo_consolidation("last", team="backend")
    cx.undo_consolidation(report.run)
    assert snapshot(cx, "rev") == before_agent
    assert cx.list_memories("boss", scope="team:backend", limit=100).items == before_team
    assert cx.validate_store() == []


def test_a_contradiction_in_review_is_accepted_or_dismissed_by_a_run_of_its_own(cx):
    old, new = cx.store("rev", OLD_RULE), cx.store("rev", NEW_RULE)
    cx.consolidate("rev")
    [item] = cx.review("rev")
    dismissed = cx.resolve_review(item.keep, item.supersede, accept=False, agent="rev")
    assert dismissed.run and [d.supersede for d in dismissed.dismissed] == [old.id]
    assert cx.review("rev") == [] and cx.get("rev", old.id).superseded_by is None
    assert cx.consolidate("rev").review == []  # not asked again
    cx.undo_consolidation(dismissed.run)
    assert [i.supersede for i in cx.review("rev")] == [old.id]  # back on the list
    accepted = cx.resolve_review(item.keep, item.supersede, agent="rev")
    assert cx.get("rev", old.id).superseded_by == new.id and cx.review("rev") == []
    assert [r.kind for r in cx.consolidation_runs("rev")][:1] == ["review"] and accepted.run
    with pytest.raises(InvalidInputError, match="no open contradiction"):
        cx.resolve_review(item.keep, item.supersede, agent="rev")
    cx.undo_consolidation("last")
    assert cx.get("rev", old.id).superseded_by is None
    assert cx.validate_store(agent="rev") == []
