"""The session log and the operations that read it (``sessions``, ``session_detail``): what each session of an
agent was shown at its start(s), what its output used, what it added and changed (provenance), its transcripts;
crash safe (a record cut short by kill -9), bounded, read incrementally by another process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest

from cortex import provenance
from cortex.agents import AgentSettings
from cortex.capture.sessionlog import SessionLog
from cortex.errors import InvalidInputError, SessionNotFoundError
from tests.conftest import open_agents, reopen

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def test_a_session_records_its_block_what_it_used_and_its_diff(disk_cx, store_path, clock) -> None:
    cited = disk_cx.store("reviewer", "reviews check the --strict flag of the linter in ci/lint.sh")
    repeated = disk_cx.store("reviewer", "always run the migration dry run before merging a schema change")
    unused = disk_cx.store("reviewer", "pagination uses opaque cursors in every listing endpoint")
    changed = disk_cx.store("reviewer", "releases are tagged on mondays")
    replaced = disk_cx.store("reviewer", "the staging database is shared with qa")
    doomed = disk_cx.store("reviewer", "a note to forget")
    disk_cx.agent_start("reviewer", "review the schema change")  # no session: nothing on record
    assert disk_cx.sessions("reviewer").items == []
    clock.advance(minutes=1)
    with provenance.activity(surface="hook", event="SubagentStart", session="s-0001"):
        block = disk_cx.agent_start("reviewer", "review the schema change in ci/lint.sh", limit=10)
        used = disk_cx.record_use("reviewer", f"Checked {cited.id}. I will always run the migration dry run before "
                                              "merging a schema change, as usual.", transcript="/work/t/s-0001.jsonl")
        assert {m.id for m in used} == {cited.id, repeated.id}
        added = disk_cx.store("reviewer", "schema changes need a rollback script")
        clock.advance(seconds=5)
        disk_cx.update("reviewer", changed.id, content="releases are tagged on tuesdays")
        disk_cx.validate("reviewer", cited.id)
        successor = disk_cx.supersede("reviewer", replaced.id, "staging has its own database now")
        assert disk_cx.forget("reviewer", doomed.id)
    disk_cx.store("reviewer", "written outside the session")
    cx = reopen(disk_cx, store_path, "reviewer", "planner", clock=clock)  # on disk: kept across a reopen
    try:
        [info] = cx.sessions("reviewer").items
        assert (info.session, info.agent, info.task, info.starts) == ("s-0001", "reviewer",
                                                                        "review the schema change in ci/lint.sh", 1)
        assert info.started_at == NOW + timedelta(minutes=1)
        assert (info.used, info.added, info.changed) == (2, 2, 4) and info.shown == block.count("\n- ")
        assert info.transcripts == ["/work/t/s-0001.jsonl"]
        detail = cx.session_detail("reviewer", "s-0001")
        assert [s.block for s in detail.starts] == [block] and detail.starts[0].touched
        why = {m.id: m.used for m in detail.shown}
        assert len(why) == info.shown and why[cited.id] == "cited" and why[repeated.id] == "repeated"
        assert why.get(unused.id) is None
        assert sorted(m.id for m in detail.created) == sorted([added.id, successor.id])
        actions = {(m.id, m.action) for m in detail.changed}
        assert actions == {(changed.id, "update"), (cited.id, "validate"), (replaced.id, "supersede"),
                           (doomed.id, "forget")}
        update = next(m for m in detail.changed if m.action == "update")
        assert (update.before, update.after, update.by) == ("releases are tagged on mondays",
                                                            "releases are tagged on tuesdays", "reviewer")
        assert next(m for m in detail.changed if m.action == "forget").content is None  # nothing kept but its id
        with pytest.raises(SessionNotFoundError):
            cx.session_detail("reviewer", "s-unknown")
        with pytest.raises(SessionNotFoundError):
            cx.session_detail("planner", "s-0001")  # the session is the reviewer's
        assert cx.sessions("planner").items == []
    finally:
        cx.close()


def test_every_start_of_a_session_is_kept_and_sessions_page_newest_first(cx, clock) -> None:
    cx.store("reviewer", "lint with the --strict flag")
    for n in range(5):
        clock.advance(minutes=1)
        with provenance.activity(surface="hook", session=f"s-{n}"):
            cx.agent_start("reviewer", f"task {n}")
    with provenance.activity(surface="hook", session="s-1"):
        again = cx.agent_start("reviewer", "task 1 resumed", touch=False)
    detail = cx.session_detail("reviewer", "s-1")
    assert [(s.task, s.touched) for s in detail.starts] == [("task 1", True), ("task 1 resumed", False)]
    assert detail.starts[1].block == again and detail.info.starts == 2
    first = cx.sessions("reviewer", limit=2)
    assert [s.session for s in first.items] == ["s-4", "s-3"] and first.next_cursor
    second = cx.sessions("reviewer", limit=2, cursor=first.next_cursor)
    third = cx.sessions("reviewer", limit=2, cursor=second.next_cursor)
    assert [s.session for s in second.items + third.items] == ["s-2", "s-1", "s-0"] and third.next_cursor is None
    with pytest.raises(InvalidInputError):
        cx.sessions("reviewer", cursor="not a cursor")


def test_in_a_shared_scope_only_the_agents_own_writes_are_its_sessions(clock) -> None:
    cx = open_agents(None, clock=clock)
    try:
        for name in ("alice", "bob"):
            cx.agents.register(name, settings=AgentSettings(teams=("backend",)))
        with provenance.activity(surface="hook", session="shared-1"):  # a main session and its subagent
            cx.agent_start("alice", "work")
            mine = cx.store("alice", "alice's team learning", scope="team:backend")
            theirs = cx.store("bob", "bob's team learning", scope="team:backend")
            cx.validate("bob", mine.id)
        detail = cx.session_detail("alice", "shared-1")
        assert [(m.id, m.scope) for m in detail.created] == [(mine.id, "team:backend")]
        assert detail.changed == [] and theirs.id not in {m.id for m in detail.created}
    finally:
        cx.close()


def test_a_capture_records_the_transcript_it_read_for_the_session(disk_cx, tmp_path) -> None:
    transcript = tmp_path / "session.txt"
    transcript.write_text("Working on it.\nLEARNED: the cache is warmed by scripts/warm.sh\n")
    with provenance.activity(surface="hook", event="SessionEnd", session="s-capture"):
        report = disk_cx.capture_transcript("reviewer", transcript, summary=False)
    assert report.run is not None
    [info] = disk_cx.sessions("reviewer").items
    assert info.session == "s-capture" and info.transcripts == [str(transcript.resolve())] and info.added == 1
    assert "scripts/warm.sh" in disk_cx.session_detail("reviewer", "s-capture").created[0].content


def test_a_record_cut_short_is_skipped_and_the_next_one_kept(tmp_path) -> None:
    log = SessionLog(tmp_path)
    log.started("dev", "s-1", NOW, "one", "<agent-memory>\n- a\n</agent-memory>", [("agent:dev", "m1")], touched=True)
    with open(tmp_path / "dev.jsonl", "ab") as fh:
        fh.write(b'{"k":"start","s":"s-2","at":"2026-01-01T12:')  # what a kill in the middle of a write leaves
    reader = SessionLog(tmp_path)  # another process
    assert [s.session for s in reader.sessions("dev")] == ["s-1"]
    log.started("dev", "s-3", NOW + timedelta(minutes=1), "three", "block 3", [], touched=True)
    assert [s.session for s in reader.sessions("dev")] == ["s-3", "s-1"]  # read incrementally, the cut line skipped
    summary, starts = reader.session("dev", "s-3")
    assert starts[0]["block"] == "block 3" and summary.task == "three"


def test_the_log_is_bounded_to_its_newest_sessions(tmp_path) -> None:
    log = SessionLog(tmp_path)
    log.MAX_BYTES = 20_000
    reader = SessionLog(tmp_path)
    for n in range(200):
        log.started("dev", f"s-{n:03d}", NOW + timedelta(seconds=n), f"task {n}", "x" * 300, [], touched=True)
        if n == 10:
            assert len(reader.sessions("dev")) == 11
    assert (tmp_path / "dev.jsonl").stat().st_size <= 20_000
    kept = [s.session for s in reader.sessions("dev")]  # the reader notices the rewrite (a new file)
    assert kept[0] == "s-199" and "s-000" not in kept and len(kept) >= 20
    assert kept == sorted(kept, reverse=True)


def test_a_writer_killed_mid_stream_leaves_a_readable_log(tmp_path) -> None:
    script = (
        "import sys\nfrom datetime import datetime, timezone\nfrom cortex.capture.sessionlog import SessionLog\n"
        "log = SessionLog(__import__('pathlib').Path(sys.argv[1]))\nn = 0\nprint('ready', flush=True)\n"
        "while True:\n"
        "    log.started('dev', f's-{n}', datetime.now(timezone.utc), 't', 'b' * 200_000, [], touched=True)\n"
        "    n += 1\n")
    writer = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 30
        while (not (tmp_path / "dev.jsonl").exists() or (tmp_path / "dev.jsonl").stat().st_size < 2_000_000) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    log = SessionLog(tmp_path)
    before = log.sessions("dev")
    assert before and all(len(log.session("dev", s.session)[1][0]["block"]) == 200_000 for s in before)
    log.started("dev", "after", datetime.now(timezone.utc) + timedelta(hours=1), "t", "b", [], touched=True)
    assert log.sessions("dev")[0].session == "after" and len(log.sessions("dev")) == len(before) + 1
    lines = (tmp_path / "dev.jsonl").read_bytes().split(b"\n")
    assert json.loads(lines[-2])["s"] == "after" and os.path.getsize(tmp_path / "dev.jsonl") > 0


def test_forgetting_a_memory_takes_its_text_out_of_the_recorded_blocks(disk_cx) -> None:
    kept = disk_cx.store("reviewer", "the review checklist lives in docs/review.md")
    doomed = disk_cx.store("reviewer", "the staging password is in the shared vault\nsecond line of it")
    disk_cx.update("reviewer", doomed.id, content="the staging password rotates weekly")
    with provenance.activity(surface="hook", session="s-old"):
        disk_cx.update("reviewer", doomed.id, content="the staging password is in the shared vault")
        before = disk_cx.agent_start("reviewer", "review the staging password checklist")
    assert "shared vault" in before and "docs/review.md" in before
    assert disk_cx.forget("reviewer", doomed.id)
    block = disk_cx.session_detail("reviewer", "s-old").starts[0].block
    assert "shared vault" not in block and "- [forgotten]" in block and "docs/review.md" in block
    assert block == before.replace(next(line for line in before.split("\n") if "shared vault" in line),
                                   "- [forgotten]")
    assert kept.id in {m.id for m in disk_cx.session_detail("reviewer", "s-old").shown}


def test_redacting_the_stores_secrets_redacts_the_recorded_blocks(disk_cx) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    disk_cx.store("reviewer", f"the ci token is {secret}")
    with provenance.activity(surface="hook", session="s-secret"):
        assert secret in disk_cx.agent_start("reviewer", "ci token")
    disk_cx.scan_secrets(redact=True)
    block = disk_cx.session_detail("reviewer", "s-secret").starts[0].block
    assert secret not in block and "[REDACTED:" in block
    assert secret.encode() not in b"".join(p.read_bytes() for p in (disk_cx._state / "cortex-sessions").glob("*"))
