"""An agent at a glance (``agent_overview``): counts by type, source and scope, last activity, decay buckets,
what expires soon, what was never shown or used; only current memories count."""

from __future__ import annotations

from datetime import timedelta

from cortex.agents import AgentSettings
from cortex.lifecycle import DEFAULT_HALF_LIFE
from cortex.model import Source

A = "reviewer"


def test_an_empty_agent_has_zeros_and_no_activity(disk_cx) -> None:
    got = disk_cx.agent_overview(A)
    assert got["total"] == 0 and got["last_activity"] is None and got["mean_confidence"] is None
    assert got["by_type"] == {"pattern": 0, "convention": 0, "insight": 0, "decision": 0}
    assert got["decay"] == {"fresh": 0, "fading": 0, "stale": 0} and got["by_scope"] == {"agent": 0, "swarm": 0}


def test_counts_by_type_source_and_scope_and_the_last_activity(disk_cx, clock) -> None:
    disk_cx.agents.register("lead", settings=AgentSettings(teams=("core",), lead=True))
    disk_cx.agents.register(A, settings=AgentSettings(teams=("core",)))
    disk_cx.store(A, "Use ruff for linting", type="convention")
    disk_cx.store(A, "The build takes four minutes", type="insight", source="agent_end", confidence=0.6,
                   ttl="3d")
    old = disk_cx.store(A, "Python 3.10 everywhere", type="decision")
    clock.advance(hours=2)
    disk_cx.supersede(A, old.id, "Python 3.11 everywhere")  # the old one no longer counts
    disk_cx.store("lead", "The team deploys on Tuesdays", scope="team:core")
    got = disk_cx.agent_overview(A)
    assert got["total"] == 3
    assert got["by_type"] == {"pattern": 0, "convention": 1, "insight": 1, "decision": 1}
    assert got["by_source"] == {"manual": 2, "agent_end": 1}
    assert got["by_scope"] == {"agent": 3, "team:core": 1, "swarm": 0}
    assert got["last_activity"] == clock.now.isoformat().replace("+00:00", "Z")
    assert got["never_shown"] == 3 and got["never_used"] == 3
    assert got["expiring_soon"] == 1  # its time to live ends within a week
    disk_cx.agent_start(A, "linting")
    assert disk_cx.agent_overview(A)["never_shown"] < 3


def test_decay_moves_memories_from_fresh_to_stale_and_a_validation_makes_them_fresh(disk_cx, clock) -> None:
    kept = disk_cx.store(A, "Retry flaky network calls twice", ttl="never")
    assert disk_cx.agent_overview(A)["decay"] == {"fresh": 1, "fading": 0, "stale": 0}
    half = DEFAULT_HALF_LIFE[Source.MANUAL]
    clock.advance(seconds=half.total_seconds())  # factor 0.5: fading
    assert disk_cx.agent_overview(A)["decay"] == {"fresh": 0, "fading": 1, "stale": 0}
    clock.advance(seconds=2 * half.total_seconds())  # 0.125: stale
    assert disk_cx.agent_overview(A)["decay"] == {"fresh": 0, "fading": 0, "stale": 1}
    disk_cx.validate(A, kept.id)
    assert disk_cx.agent_overview(A)["decay"] == {"fresh": 1, "fading": 0, "stale": 0}
    assert disk_cx.agent_overview(A)["expiring_soon"] == 0


def test_prune_due_counts_what_the_next_agent_end_deletes_by_the_agents_settings(disk_cx, clock) -> None:
    disk_cx.agents.register("lead", settings=AgentSettings(lead=True))
    disk_cx.agents.register(A, settings=AgentSettings(prune_min_confidence=0.5, prune_max_age=timedelta(days=30)))
    disk_cx.store(A, "A guess about the cache layer", confidence=0.4)  # below min_confidence: due now
    disk_cx.store(A, "The CI runs on two cores", confidence=0.9, ttl="never")
    disk_cx.store("lead", "Shared fact", confidence=0.2, scope="swarm")  # not its own
    assert disk_cx.agent_overview(A)["prune_due"] == 1
    clock.advance(days=31)  # unused for longer than max_age: both of its own are due
    assert disk_cx.agent_overview(A)["prune_due"] == 2
    assert disk_cx.agent_overview(A)["prune_due"] == len(disk_cx.prune_candidates(A, 0.5, "30d"))
