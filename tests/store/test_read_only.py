"""Reads never wait for a writing process: while another process holds the embedded store and serves nothing, a
reader opens it read-only (``Cortex.open(read_only=True)``, what ``connect(read_only=True)``, the CLI's read
commands and the start hooks do), answers from what that process committed, and writes nothing; the holder names
itself; kill -9 of the writer leaves the reader and the next writer working. Real processes, real on-disk stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.errors import ReadOnlyStoreError, StoreLockedError
from cortex.service.connect import connect
from cortex.state import INDEX_DIR
from cortex.store.oxigraph import OWNER_FILE, holder
from tests.paths import ROOT
from tests.service_helpers import env, make_project
from tests.store.test_recovery_and_locking import assert_index_matches_store

#: A process that holds the store as `cortex import` does: it writes batches of 50 memories, one every ``pause``
#: seconds (printing how many batches are committed), until its stdin closes; ``hold`` writes nothing after ``seed``.
WRITER = textwrap.dedent("""
    import sys, threading, time
    from cortex import Cortex, discovery
    discovery.set_process_label("cortex import")
    path, pause, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    cx = Cortex.open(path, client=False, embeddings=None)
    cx.agents.register("reviewer")
    if seed:
        cx.store_many("reviewer", [{"content": f"seeded note {k} about parsers"} for k in range(seed)])
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), done.set()), daemon=True).start()
    print("ready", flush=True)
    batch = 0
    while pause >= 0 and not done.is_set():
        cx.store_many("reviewer", [{"content": f"imported note {batch} {k} about lexers"} for k in range(50)])
        batch += 1
        print(batch, flush=True)
        time.sleep(pause)
    done.wait()
    cx.close()
""")


class Writer:
    """The writing process, and how many batches it has committed (read from its stdout as it goes)."""

    def __init__(self, store: Path, *, pause: float = 0.05, seed: int = 0) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(pause), str(seed)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                        env=env())
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "ready"
        self.batches = 0
        self._reader = threading.Thread(target=self._follow, daemon=True)
        self._reader.start()

    def _follow(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip().isdigit():
                self.batches = int(line)

    def wait_for(self, batches: int, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while self.batches < batches:
            assert time.monotonic() < deadline and self.process.poll() is None, "the writer stopped writing"
            time.sleep(0.02)
        return self.batches

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("\n")
            self.process.stdin.flush()
            self.process.wait(timeout=60)


def tree(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``roots``: (size, mtime in ns), to show nothing was written."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for root in roots if root.exists()
            for p in sorted(root.rglob("*")) if p.is_file()}


def reader(store: Path) -> Cortex:
    cx = Cortex.open(store, client=False, embeddings=None, read_only=True)
    cx.agents.register("reviewer")
    return cx


def test_a_reader_answers_while_a_writer_holds_the_store_and_sees_its_commits(store_path):
    writer = Writer(store_path, pause=0.02, seed=20)
    try:
        committed = writer.wait_for(3)
        with pytest.raises(StoreLockedError):  # the lock is the writer's
            Cortex.open(store_path, client=False, embeddings=None)
        cx = reader(store_path)
        try:
            count = cx.count("reviewer")
            assert count >= 20 + 50 * committed and (count - 20) % 50 == 0  # whole batches, each one atomic
            assert_index_matches_store(cx, "reviewer")
            assert len(cx.recall("reviewer", "seeded parsers", limit=100)) == 20
            assert len(cx.recall("reviewer", "lexers", limit=10_000)) == count - 20
            assert cx.agent_start("reviewer", "parsers").startswith("<agent-memory>")  # its touches skipped
        finally:
            cx.close()
    finally:
        writer.stop()


def test_a_write_on_a_read_only_cortex_names_the_writer_and_changes_nothing(store_path):
    writer = Writer(store_path, pause=-1, seed=5)  # holds the store, writes nothing more
    try:
        before = tree(store_path)
        cx = reader(store_path)
        try:
            with pytest.raises(ReadOnlyStoreError) as info:
                cx.store("reviewer", "a new note")
            assert info.value.pid == writer.process.pid
            assert f"a cortex import (pid {writer.process.pid}) is writing" in str(info.value)
            assert isinstance(info.value, StoreLockedError)  # what surfaces already treat as "try again later"
            with pytest.raises(ReadOnlyStoreError):
                cx.forget("reviewer", cx.recall("reviewer", limit=1)[0].id)
            assert cx.count("reviewer") == 5
        finally:
            cx.close()
        assert tree(store_path) == before
    finally:
        writer.stop()
    with Cortex.open(store_path, embeddings=None) as cx:
        cx.agents.register("reviewer")
        assert cx.count("reviewer") == 5
        assert_index_matches_store(cx, "reviewer")


def test_read_only_indexes_are_rebuilt_or_caught_up_in_memory_and_nothing_is_saved(store_path):
    with Cortex.open(store_path, embeddings=None) as cx:  # a snapshot of 1200 memories (saved at close)
        cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": f"old note {k}"} for k in range(1200)])
    snapshot = next((store_path / INDEX_DIR).rglob("snapshot.npz"))
    writer = Writer(store_path, pause=-1, seed=30)  # 30 more, in the log after the snapshot
    try:
        before = tree(store_path)
        cx = reader(store_path)
        try:  # the snapshot, caught up from the store's log: no rebuild
            assert cx.count("reviewer") == 1230 and cx.index_status("reviewer").rebuilds == 0
            assert len(cx.recall("reviewer", "seeded", limit=100)) == 30
            assert_index_matches_store(cx, "reviewer")
        finally:
            cx.close()
        snapshot.unlink()
        before = tree(store_path)
        cx = reader(store_path)
        try:  # no snapshot: rebuilt from the store, in memory only
            assert cx.count("reviewer") == 1230 and cx.index_status("reviewer").rebuilds == 1
            assert_index_matches_store(cx, "reviewer")
        finally:
            cx.close()
        assert tree(store_path) == before and not snapshot.exists()
    finally:
        writer.stop()


def test_connect_reads_at_once_and_a_writer_waits_then_names_the_holder(store_path, monkeypatch):
    monkeypatch.setenv("CORTEX_LOCK_WAIT", "0.5")
    writer = Writer(store_path, pause=-1, seed=3)
    try:
        started = time.monotonic()
        cx = connect(store_path, embeddings="none", read_only=True)
        assert isinstance(cx, Cortex) and cx._memories.store.read_only  # type: ignore[attr-defined]
        cx.close()
        assert time.monotonic() - started < 0.5 + 5  # no lock wait (5 s: a loaded machine's open)
        told: list[StoreLockedError] = []
        started = time.monotonic()
        with pytest.raises(StoreLockedError) as info:
            connect(store_path, embeddings="none", on_wait=told.append)
        assert time.monotonic() - started >= 0.5 and len(told) == 1
        assert not isinstance(info.value, ReadOnlyStoreError)
        assert f"locked: a cortex import (pid {writer.process.pid}) is writing" in str(info.value)
        assert info.value.holder == "cortex import"
    finally:
        writer.stop()
    assert not (store_path / OWNER_FILE).exists()  # removed at close
    assert holder(store_path) == (None, None)


def test_holder_information_of_a_killed_writer_is_ignored(store_path):
    writer = Writer(store_path, pause=-1, seed=1)
    assert json.loads((store_path / OWNER_FILE).read_text())["command"] == "cortex import"
    writer.process.send_signal(signal.SIGKILL)
    writer.process.wait(timeout=30)
    assert (store_path / OWNER_FILE).exists()  # left behind by kill -9
    assert holder(store_path) == (None, None)
    other = subprocess.Popen([sys.executable, "-c", "import sys; from cortex import Cortex; "
                              "cx = Cortex.open(sys.argv[1], client=False, embeddings=None); "
                              "print('held', flush=True); sys.stdin.readline()", str(store_path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        assert holder(store_path) == (other.pid, "python process")
        # the stale file of the killed writer, put back: the kernel names the real holder, its label is not taken
        (store_path / OWNER_FILE).write_text(json.dumps({"pid": writer.process.pid, "command": "cortex import"}))
        assert holder(store_path) == (other.pid, None)
        with pytest.raises(StoreLockedError, match=f"process {other.pid} is writing"):
            Cortex.open(store_path, client=False, embeddings=None)
    finally:
        other.communicate("\n", timeout=30)


def test_kill_9_of_the_writer_leaves_the_reader_and_the_next_writer_working(store_path):
    writer = Writer(store_path, pause=0.0, seed=10)
    cx = None
    try:
        writer.wait_for(2)
        cx = reader(store_path)
        seen = cx.count("reviewer")
        found = [m.id for m in cx.recall("reviewer", "lexers", limit=10_000)]
        assert len(found) == seen - 10
        writer.wait_for(writer.batches + 2)  # writing on while the reader has it open
        os.kill(writer.process.pid, signal.SIGKILL)
        writer.process.wait(timeout=30)
        # the reader answers as before: what was committed when it opened
        assert [m.id for m in cx.recall("reviewer", "lexers", limit=10_000)] == found
        assert cx.count("reviewer") == seen
        assert_index_matches_store(cx, "reviewer")
        # the next writer opens (the lock went with the killed process), finds whole batches, and writes
        with Cortex.open(store_path, client=False, embeddings=None) as nxt:
            nxt.agents.register("reviewer")
            total = nxt.count("reviewer")
            assert total >= seen and (total - 10) % 50 == 0
            assert_index_matches_store(nxt, "reviewer")
            added = nxt.store("reviewer", "written after the crash")
            assert [m.id for m in nxt.recall("reviewer", "after the crash")] == [added.id]
            # the old reader still answers while the next writer holds the store; a new reader sees the write
            assert cx.count("reviewer") == seen
            again = reader(store_path)
            try:
                assert [m.id for m in again.recall("reviewer", "after the crash")] == [added.id]
                assert_index_matches_store(again, "reviewer")
            finally:
                again.close()
    finally:
        if cx is not None:
            cx.close()
        writer.stop()


def test_the_subagent_start_hook_gets_its_block_while_another_process_writes(tmp_path):
    project = make_project(tmp_path / "proj", "reviewer")
    store = project / ".cortex" / "store"
    writer = Writer(store, pause=0.02, seed=5)
    try:
        writer.wait_for(2)
        payload = {"session_id": "s1", "transcript_path": "", "cwd": str(project), "hook_event_name": "SubagentStart",
                   "agent_id": "a1", "agent_type": "reviewer"}
        result = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "SubagentStart"],
                                input=json.dumps(payload), cwd="/", capture_output=True, text=True, timeout=120,
                                env=env(CLAUDE_CONFIG_DIR=str(tmp_path), CORTEX_EMBEDDINGS="none"))
        assert writer.process.poll() is None and writer.batches >= 2  # still writing meanwhile
        assert result.returncode == 0 and result.stdout, (result.stderr, (project / ".cortex" / "logs").exists()
                                                          and list((project / ".cortex" / "logs").iterdir()))
        block = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        assert block.startswith("<agent-memory>\n") and "note" in block
        log = project / ".cortex" / "logs" / "hooks.log"
        assert not log.exists() or "locked" not in log.read_text()
    finally:
        writer.stop()


def test_a_snapshot_saved_after_the_reader_opened_is_caught_up_not_rebuilt(store_path):
    """The writer saves a snapshot after the reader opened the store (its view is older than the snapshot): the
    reader opens the store again and catches the snapshot up, instead of rebuilding from a full scan."""
    script = textwrap.dedent("""
        import sys
        from cortex import Cortex
        cx = Cortex.open(sys.argv[1], client=False, embeddings=None); cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": f"first note {k}"} for k in range(20)])
        print("ready", flush=True); sys.stdin.readline()
        cx.store_many("reviewer", [{"content": f"later note {k}"} for k in range(30)])
        scope = next(s for s in cx._memories.scopes() if s.name == "reviewer")
        cx._memories._indexes.checkpoint(scope)
        print("saved", flush=True); sys.stdin.readline()
        cx.close()
    """)
    writer = subprocess.Popen([sys.executable, "-c", script, str(store_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    assert writer.stdin is not None and writer.stdout is not None
    try:
        assert writer.stdout.readline().strip() == "ready"
        cx = reader(store_path)  # the store's view: 20 memories; no index loaded yet
        try:
            writer.stdin.write("\n")
            writer.stdin.flush()
            assert writer.stdout.readline().strip() == "saved"
            assert cx.count("reviewer") == 50 and cx.index_status("reviewer").rebuilds == 0
            assert len(cx.recall("reviewer", "later", limit=100)) == 30
            assert_index_matches_store(cx, "reviewer")
        finally:
            cx.close()
    finally:
        writer.communicate("\n", timeout=60)


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_a_planted_holder_file_is_replaced_not_written_through(store_path, tmp_path, planted):
    """A store directory copied from elsewhere may carry a link or a FIFO at the holder file's name: the writer
    replaces it (never overwriting the link's target, never blocking on the FIFO)."""
    with Cortex.open(store_path, client=False, embeddings=None) as cx:
        cx.agents.register("reviewer")
        cx.store("reviewer", "kept through the planted file")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    if planted == "symlink":
        (store_path / OWNER_FILE).symlink_to(victim)
    else:
        os.mkfifo(store_path / OWNER_FILE)
    done = subprocess.run([sys.executable, "-c", "import sys; from cortex import Cortex; "
                           "cx = Cortex.open(sys.argv[1], client=False, embeddings=None); "
                           "cx.agents.register('reviewer'); print(len(cx.recall('reviewer', 'planted'))); cx.close()",
                           str(store_path)], capture_output=True, text=True, cwd=ROOT, env=env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    assert victim.read_text() == "precious"


def test_a_holder_file_nested_too_deep_or_with_escapes_is_ignored(store_path):
    writer = Writer(store_path, pause=-1, seed=1)
    try:
        (store_path / OWNER_FILE).write_text("[" * 3000)
        assert holder(store_path) == (writer.process.pid, None)
        (store_path / OWNER_FILE).write_text(json.dumps({"pid": writer.process.pid, "command": "x\x1b]0;pwned\x07"}))
        assert holder(store_path) == (writer.process.pid, None)  # never printed with its escapes
        with reader(store_path) as cx:
            assert len(cx.recall("reviewer", "seeded")) == 1
    finally:
        writer.stop()
