"""The facade's events (cortex/events.py): published once a change is committed, one per batch and scope, in one
order for every subscriber, filtered by what an agent may read; a slow subscriber never holds a write back, and
a failed write says nothing."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from cortex import Cortex, VersionConflictError
from cortex.errors import InvalidInputError
from cortex.events import Bus
from tests.app.test_scopes import write_agents

AGENTS = {"alice": "teams: [backend]", "bob": "teams: [backend]", "lead": "teams: [backend]\n  lead: true",
          "carol": None}


@pytest.fixture
def cx(tmp_path: Path, clock) -> Cortex:
    agents = write_agents(tmp_path / "agent_defs", AGENTS)
    with Cortex.open(None, agent_dirs=[agents], clock=clock, embeddings=None, client=False) as opened:
        yield opened


def kinds(subscription) -> list[tuple[str, str, str | None, str | None]]:
    return [(e.kind, e.data.get("action"), e.agent, e.scope) for e in subscription.drain()]


def test_every_write_is_one_event_after_it_is_committed(cx: Cortex) -> None:
    with cx.subscribe() as everything:
        first = cx.store("alice", "postgres listens on 5432")
        batch = cx.store_many("alice", [{"content": "one"}, {"content": "two"}, {"content": "three"}])
        cx.update("alice", first.id, content="postgres listens on 5433")
        newer = cx.supersede("alice", first.id, "postgres listens on 6432")
        cx.validate("alice", newer.id)
        assert cx.forget("alice", newer.id)
        events = everything.drain()
    assert [(e.kind, e.data["action"], e.agent, e.scope) for e in events] == [
        ("write", action, "alice", "agent:alice")
        for action in ("store", "store", "update", "supersede", "validate", "forget")]
    assert events[0].data["ids"] == [first.id] and events[0].data["count"] == 1
    assert events[1].data["ids"] == [m.id for m in batch] and events[1].data["count"] == 3  # one per batch
    assert set(events[3].data["ids"]) == {first.id, newer.id}
    assert [e.id for e in events] == sorted(e.id for e in events)
    assert all(e.at == cx._clock().isoformat() for e in events)
    # the committed memory is there when its event is
    assert cx.get("alice", events[0].data["ids"][0]) is not None


def test_a_failed_write_publishes_nothing(cx: Cortex) -> None:
    kept = cx.store("alice", "the build takes nine minutes")
    with cx.subscribe() as everything:
        with pytest.raises(VersionConflictError):
            cx.update("alice", kept.id, content="eight minutes", expected_version=7)
        with pytest.raises(InvalidInputError):
            cx.store("alice", "   ")
        with pytest.raises(InvalidInputError):
            cx.store_many("alice", [{"content": "fine"}, {"content": "bad", "confidence": 7}])
        assert cx.forget("alice", "0" * 28) is False
        with pytest.warns(UserWarning):
            assert cx.store("alice", "the build takes nine minutes").id == kept.id  # stored already: no change
        cx.consolidate("alice", dry_run=True)
        assert everything.drain() == []
        assert cx.get("alice", kept.id).content == "the build takes nine minutes"


def test_an_agent_subscribes_to_what_it_may_read(cx: Cortex) -> None:
    bob, carol, lead, admin = cx.subscribe("bob"), cx.subscribe("carol"), cx.subscribe("lead"), cx.subscribe()
    cx.store("alice", "alice's own note")
    shared = cx.store("alice", "backend: migrations first", scope="team:backend")
    cx.store("lead", "everyone: never force push", scope="swarm")
    cx.store("carol", "carol's own note")
    assert kinds(bob) == [("write", "store", "alice", "team:backend"), ("write", "store", "lead", "swarm")]
    assert kinds(carol) == [("write", "store", "lead", "swarm"), ("write", "store", "carol", "agent:carol")]
    assert [e[3] for e in kinds(lead)] == ["team:backend", "swarm"]
    everything = admin.drain()
    assert [e.scope for e in everything] == ["agent:alice", "team:backend", "swarm", "agent:carol"]
    assert everything[1].data["ids"] == [shared.id]
    # a lead hears of what is held for review in its members' own memory (it decides it); a member does not
    item = cx.hold_memory("alice", {"content": "held: the staging key rotates weekly"}, reason="secret-like",
                          actor="alice", origin={"session": "s1"})
    held = lead.drain()
    assert [(e.kind, e.data["action"], e.scope, e.data["held"]) for e in held] == [
        ("review", "held", "agent:alice", item.keep)]
    assert bob.drain() == [] and carol.drain() == []
    cx.resolve_review(item.keep, accept=False, agent="alice")
    assert kinds(lead) == [("review", "resolved", "alice", "agent:alice")]
    assert [(e.kind, e.data["action"]) for e in admin.drain()] == [("review", "held"), ("review", "resolved")]


def test_captures_injections_and_runs_are_events_of_their_own_kind(cx: Cortex) -> None:
    from cortex.provenance import activity

    stored = {cx.store("alice", "The deploy script needs the VPN up first").id,
              cx.store("alice", "the deploy script needs the VPN up first.").id}
    with cx.subscribe("alice") as alice:
        with activity(session="sess-1"):
            block = cx.agent_start("alice", "deploy")
            captured = cx.agent_end("alice", "LEARNED: the VPN drops after an hour\n")
        task = cx.record_task("alice", "deploy the api", "done")
        report = cx.consolidate("alice")
        cx.undo_consolidation(report.run, agent="alice")
        events = alice.drain()
    assert [(e.kind, e.data["action"]) for e in events] == [
        ("injection", "start"), ("capture", "agent_end"), ("capture", "task"), ("consolidation", "consolidate"),
        ("consolidation", "undo")]
    start, end, done, run, undo = events
    assert start.data["session"] == "sess-1" and start.data["count"] == 2
    assert set(start.data["ids"]) == stored and "deploy script" in block
    assert end.data["ids"][:1] == [captured[0].id] and end.scope == "agent:alice"
    assert done.data["ids"] == [task.id]
    assert run.data["run"] == report.run and run.data["review"] == 0 and len(run.data["ids"]) == 2
    assert undo.data["ids"] and undo.scope == "agent:alice"


def test_a_slow_subscriber_loses_its_oldest_events_and_never_holds_a_write_back(cx: Cortex) -> None:
    slow = cx.events.subscribe(capacity=3)

    def broken_filter(event) -> bool:
        raise RuntimeError("a broken listener")

    def broken_wake() -> None:
        raise RuntimeError("its event loop is gone")

    broken = cx.events.subscribe(broken_filter)
    woken = cx.events.subscribe(wake=broken_wake)
    started = time.monotonic()
    made = [cx.store("alice", f"note number {i}") for i in range(40)]
    assert time.monotonic() - started < 10
    assert slow.dropped == 37
    assert [e.data["ids"] for e in slow.drain()] == [[m.id] for m in made[-3:]]
    assert broken.drain() == [] and len(woken.drain()) == 40
    assert len(cx.list_memories("alice", limit=100).items) == 40


def test_the_order_is_one_for_every_subscriber_whatever_the_threads(cx: Cortex) -> None:
    first, second = cx.subscribe(), cx.subscribe()

    def write(n: int) -> None:
        for i in range(20):
            cx.store("alice" if n % 2 else "carol", f"thread {n} note {i}")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    one, two = first.drain(), second.drain()
    assert len(one) == 80 and [e.id for e in one] == [e.id for e in two] == sorted(e.id for e in one)


def test_a_subscriber_that_comes_back_gets_what_it_missed_from_this_bus_only() -> None:
    bus = Bus()
    seen = bus.subscribe()
    events = [bus.publish("write", agent="alice", scope="agent:alice", ids=[str(i)]) for i in range(5)]
    assert [e.id for e in seen.drain()] == [e.id for e in events]
    again = bus.subscribe(after=bus.full_id(events[2]))
    assert [e.data["ids"] for e in again.drain()] == [["3"], ["4"]] and not again.missed
    current = bus.subscribe(after=bus.full_id(events[4]))
    assert current.drain() == [] and not current.missed
    for other in (bus.subscribe(after="another-3"), bus.subscribe(after="garbage")):  # another process's id
        assert other.drain() == [] and other.missed  # nothing to replay, and the reader is told so
    short = Bus(history=2)
    made = [short.publish("write", agent="alice", scope="agent:alice") for _ in range(5)]
    late = short.subscribe(after=short.full_id(made[1]))
    assert late.missed and late.drain() == []  # events 3 to 5 were missed, and 3 is no longer kept
    in_time = short.subscribe(after=short.full_id(made[2]))
    assert not in_time.missed and [e.id for e in in_time.drain()] == [4, 5]


def test_closing_the_store_ends_every_subscription(tmp_path: Path, clock) -> None:
    agents = write_agents(tmp_path / "agent_defs", {"alice": None})
    cx = Cortex.open(None, agent_dirs=[agents], clock=clock, embeddings=None, client=False)
    listening = cx.subscribe("alice")
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(listening.get(timeout=30)))
    reader.start()
    cx.close()
    reader.join(5)
    assert not reader.is_alive() and got == [None] and listening.closed
    assert cx.events.publish("write", agent="alice", scope="agent:alice") is None


def test_a_write_inside_a_capture_is_part_of_the_capture_event(cx: Cortex) -> None:
    old = cx.store("alice", "the staging database is on host db1")
    with cx.subscribe() as everything:
        captured = cx.agent_end("alice", f"LEARNED: tests need the fixtures\nSUPERSEDES {old.id}: staging is on db2\n")
        events = everything.drain()
    assert [(e.kind, e.data["action"]) for e in events] == [("capture", "agent_end")]  # not a write of its own
    assert {m.id for m in captured} | {old.id} <= set(events[0].data["ids"])
