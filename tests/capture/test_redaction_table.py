"""The per-channel redaction table (issue 29): every channel Cortex writes or sends through (bench/redaction_channels.py)
over the labelled corpus (bench/data/redaction), each with recall >= 0.97 and false positives <= 1%. The suite runs a
deterministic stratified sample (the first 2 secrets of each of the 60 kinds, the first 3 look-alikes of each of
the 26 kinds); ``python bench/redaction.py`` runs the whole corpus (docs/capture.md, "Measured")."""

from __future__ import annotations

import json
import warnings

import pytest

from cortex import Cortex
from tests.paths import bench_module


@pytest.fixture(scope="module")
def bench():
    with bench_module("redaction") as module:
        yield module


def test_every_channel_meets_the_bar_on_a_stratified_sample_of_the_corpus(bench):
    secrets = bench.stratified(bench.load("secrets"), 2)
    looks = bench.stratified(bench.load("lookalikes"), 3)
    results = bench.measure_channels(secrets, looks)
    assert set(results) == {"store", "markers", "transcript", "model", "summary", "notes", "mem0", "mcp-memory",
                            "claude", "beads", "task", "team"}
    for name, r in results.items():
        assert r["stored"] >= 0.95 * len(secrets), name  # a channel that stores nothing would catch everything
        assert r["recall"] >= 0.97, (name, r["missed"])
        assert r["false_positive_rate"] <= 0.01, (name, r["false_positives"], r["unclaimed_placeholders"])


def quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def test_a_task_cut_to_its_bound_keeps_no_part_of_its_secret(tmp_path):
    """A task is kept as its beginning and end around " ... " (300 characters): a cut between a secret's name
    and its value left the value alone, which nothing then recognised."""
    password = "Vt8q2LmZr4Kx9Wn"
    task = "word " * 47 + f"the db password is {password} " + "done " * 26
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        cx.agents.register("dev")
        memory = quiet(cx.record_task, "dev", task, "done")
    assert " … " in memory.content  # the cut happened
    assert password[:8] not in memory.content + json.dumps(memory.metadata)


def test_a_placeholder_value_in_an_mcp_memory_observation_is_not_redacted_and_old_keys_still_match(tmp_path):
    lines = [{"type": "entity", "name": "API_KEY=changeme", "entityType": "note", "observations": ["kept as is"]}]
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        cx.agents.register("dev")
        report = quiet(cx.import_from, "mcp-memory", path, agent="dev")
        assert len(report.imported) == 1
        memory = cx.get("dev", report.imported[0].memory_id)
        assert "[REDACTED" not in json.dumps(memory.metadata) and sum(report.redacted.values()) == 0
        assert memory.metadata["import"]["key"].startswith("API_KEY=changeme #")
        assert quiet(cx.import_from, "mcp-memory", path, agent="dev").imported == []


def test_an_mcp_memory_key_stored_before_the_digest_was_set_apart_still_finds_its_memory(tmp_path):
    from cortex.importers.common import digest

    lines = [{"type": "entity", "name": "CI", "entityType": "system", "observations": ["runs on push"]}]
    path = tmp_path / "memory.jsonl"
    path.write_text(json.dumps(lines[0]))
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        cx.agents.register("dev")
        old = cx.store("dev", "CI (system): runs on push", source="import", metadata={"import": {
            "system": "mcp-memory", "file": "memory.jsonl", "where": "memory.jsonl:1 observations[0]",
            "key": f"CI#{digest('runs on push')}"}})
        report = quiet(cx.import_from, "mcp-memory", path, agent="dev")
        assert report.imported == [] and [s.memory_id for s in report.skipped] == [old.id]
