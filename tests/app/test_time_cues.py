"""A query that names a time back from now ("two weeks ago", "yesterday") favours what was written then."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from cortex.temporal import time_cue
from tests.conftest import open_agents

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)


@pytest.mark.parametrize(("text", "days", "tolerance"), [
    ("Which book did I finish a week ago?", 7, 3.5),
    ("what did we decide yesterday about the cache?", 1, 2),
    ("I visited a museum two months ago", 60, 30),
    ("the deploy 5 days ago failed", 5, 2.5),
    ("notes from the day before yesterday", 2, 2),
    ("What Did We Ship LAST MONTH", 30, 15),
])
def test_phrases_that_name_a_distance_back(text, days, tolerance):
    cue = time_cue(text, NOW)
    assert cue is not None and cue.at == NOW - timedelta(days=days)
    assert cue.tolerance == timedelta(days=tolerance)


@pytest.mark.parametrize("text", ["what is the deploy command", "in March we moved to uv", "the 5 days rule",
                                  "ago", "weekly report", "a" * 10_000 + " ago"])
def test_no_cue_where_no_distance_back_is_named(text):
    assert time_cue(text, NOW) is None


def test_what_was_written_around_then_comes_first(tmp_path, clock):
    with open_agents(tmp_path / "store", "me", clock=clock, embeddings="hash") as cx:
        clock.now = NOW - timedelta(days=60)
        old = cx.store("me", "I finished reading a novel about the sea")
        clock.now = NOW - timedelta(days=7)
        recent = cx.store("me", "I finished reading a novel about the war")
        clock.now = NOW - timedelta(days=1)
        cx.store_many("me", [{"content": f"I finished reading a novel, chapter note {i}"} for i in range(12)])
        clock.now = NOW
        for mode in ("bm25", "hybrid"):
            for rerank in (True, False):
                hits = cx.search("me", "which novel did I finish reading a week ago?", mode=mode, rerank=rerank,
                                 limit=3, explain=True).hits
                assert hits[0].memory.id == recent.id, (mode, rerank)
            hits = cx.search("me", "which novel did I finish reading two months ago?", mode=mode, limit=3).hits
            assert hits[0].memory.id == old.id


def test_as_of_counts_back_from_the_moment_asked_about(tmp_path, clock):
    with open_agents(tmp_path / "store", "me", clock=clock, embeddings="hash") as cx:
        clock.now = NOW - timedelta(days=120)
        then = cx.store("me", "we picked the queue library")
        clock.now = NOW - timedelta(days=100)
        cx.store("me", "we picked the queue library again")
        clock.now = NOW
        hits = cx.search("me", "which queue library did we pick two weeks ago?", as_of=NOW - timedelta(days=106),
                         mode="bm25", rerank=False).hits
        assert hits[0].memory.id == then.id


@pytest.mark.parametrize(("text", "back"), [
    ("what did we use previously for dependency management?", True),
    ("which package manager did we use before we switched to uv?", True),
    ("what was the old setup for CI?", True),
    ("We used to deploy with Fly, right?", True),
    ("what do we use for dependency management?", False),
    ("run the migrations before deploying", False),
    ("how old is the cache?", False),
])
def test_a_question_about_the_past_of_a_fact(text, back):
    from cortex.temporal import looks_back

    assert looks_back(text) is back


def test_asking_about_the_past_reads_the_superseded_version(tmp_path, clock):
    with open_agents(tmp_path / "store", "me", clock=clock, embeddings="hash") as cx:
        old = cx.store("me", "we use Poetry for dependency management")
        new = cx.supersede("me", old.id, "we moved to uv for dependency management")
        for mode in ("bm25", "hybrid"):
            now = [h.memory.id for h in cx.search("me", "what do we use for dependency management?", mode=mode)]
            assert now == [new.id]
            then = [h.memory.id for h in cx.search("me", "what did we use previously for dependency management?",
                                                   mode=mode)]
            assert set(then) == {old.id, new.id}
