"""The derived index stays consistent with the store across restarts and crashes; the store lock is
reported clearly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad, Store

from cortex import Cortex, StoreLockedError
from cortex.state import INDEX_DIR
from tests.conftest import stored_memories
from tests.paths import ROOT

ROOT = ROOT


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def open_agent(path: Path, agent: str = "a") -> Cortex:
    cx = Cortex.open(path, embeddings=None)
    cx.agents.register(agent)
    return cx


def assert_index_matches_store(cx: Cortex, agent: str = "a") -> None:
    """What recall lists (from the index) is exactly what the store holds, field by field."""
    from_store = stored_memories(cx, agent)
    assert cx.count(agent) == len(from_store)
    listed = {m.id: m for m in cx.recall(agent, limit=10_000, scope="agent", include_superseded=True,
                                         include_expired=True)}
    assert set(listed) == set(from_store)
    for memory_id, fields in from_store.items():
        m = listed[memory_id]
        assert (m.content, m.type.value, m.project, m.usage_count) == (
            fields["content"], fields["type"], fields["project"], int(fields["usageCount"]))
        assert m.confidence == float(fields["confidence"])
        assert m.last_used_at == datetime.fromisoformat(fields["lastUsedAt"])


def test_clean_restart_does_not_rescan_the_store(store_path):
    cx = open_agent(store_path)
    cx.store_many("a", [{"content": f"memory {i}"} for i in range(3000)])
    cx.close()
    cx = open_agent(store_path)
    try:
        assert cx.count("a") == 3000
        assert cx.index_status("a").rebuilds == 0
        assert_index_matches_store(cx)
    finally:
        cx.close()


def test_crash_without_close_is_repaired_from_the_change_log(store_path):
    # a process that writes, touches and forgets, then dies without closing (no checkpoint)
    result = run_python(
        """
        import os, sys, json
        from cortex import Cortex
        cx = Cortex.open(sys.argv[1], embeddings=None); cx.agents.register("a")
        cx.store_many("a", [{"content": f"bulk {i}"} for i in range(1500)])
        kept = cx.store("a", "kept memory")
        gone = cx.store("a", "gone memory")
        for _ in range(3):
            cx.touch("a", kept.id)
        cx.forget("a", gone.id)
        print(json.dumps({"kept": kept.id, "gone": gone.id}), flush=True)
        os._exit(0)
        """,
        str(store_path),
    )
    assert result.returncode == 0, result.stderr
    ids = json.loads(result.stdout)
    cx = open_agent(store_path)
    try:
        assert cx.index_status("a").rebuilds == 0  # repaired from the store's change log, not by a full scan
        assert cx.count("a") == 1501
        assert [m.id for m in cx.recall("a", "memory")] == [ids["kept"]]
        assert cx.recall("a", "kept")[0].usage_count == 3
        assert cx.get("a", ids["gone"]) is None
        assert_index_matches_store(cx)
    finally:
        cx.close()


def test_kill_9_during_writes_loses_nothing_acknowledged(store_path):
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(
            """
            import sys
            from cortex import Cortex
            cx = Cortex.open(sys.argv[1], embeddings=None); cx.agents.register("a")
            i = 0
            while True:
                batch = cx.store_many("a", [{"content": f"w{i} item {j}"} for j in range(300)])
                m = cx.store("a", f"single {i}")
                cx.touch("a", m.id)
                print(batch[0].id, batch[-1].id, m.id, flush=True)
                i += 1
            """
        ), str(store_path)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    acknowledged = []
    deadline = time.monotonic() + 60
    while len(acknowledged) < 15 and time.monotonic() < deadline:
        acknowledged.append(writer.stdout.readline().split())
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert len(acknowledged) == 15
    cx = open_agent(store_path)
    try:
        assert cx.count("a") >= 15 * 301
        assert cx.index_status("a").rebuilds == 0  # the change log alone repaired the index
        for first, last, single in acknowledged:
            assert cx.get("a", first) is not None and cx.get("a", last) is not None
            assert cx.get("a", single).usage_count == 1
        assert_index_matches_store(cx)
        # every memory subject is complete (9 triples), none half-written
        rows = cx.sparql("SELECT ?m (COUNT(*) AS ?n) WHERE { GRAPH <urn:cortex:graph:agent:a> { ?m ?p ?o } } "
                         "GROUP BY ?m")
        assert {int(r["n"].value) for r in rows} == {9}
    finally:
        cx.close()


def test_missing_snapshot_is_rebuilt_from_the_store(store_path):
    cx = open_agent(store_path)
    m = cx.store("a", "survives index loss")
    cx.close()
    for path in (store_path / INDEX_DIR / "a").iterdir():
        path.unlink()
    cx = open_agent(store_path)
    try:
        assert [x.id for x in cx.recall("a", "index")] == [m.id]
        assert cx.index_status("a").rebuilds == 1
    finally:
        cx.close()


def test_corrupt_snapshot_is_rebuilt(store_path):
    cx = open_agent(store_path)
    cx.store_many("a", [{"content": f"memory {i}"} for i in range(1200)])
    cx.close()
    (store_path / INDEX_DIR / "a" / "snapshot.npz").write_bytes(b"not a snapshot")
    cx = open_agent(store_path)
    try:
        assert cx.count("a") == 1200 and cx.index_status("a").rebuilds == 1
        assert_index_matches_store(cx)
    finally:
        cx.close()


def test_write_behind_cortex_back_is_detected_and_rebuilt(store_path):
    cx = open_agent(store_path)
    cx.store("a", "written by cortex")
    cx.close()
    # another tool adds a complete memory directly to the RDF store
    with Cortex.open(None, embeddings=None) as donor:
        donor.agents.register("a")
        foreign = donor.store("a", "written by another tool")
        quads = list(donor.sparql("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"))
    graph = NamedNode("urn:cortex:graph:agent:a")
    quads = [Quad(t.subject, t.predicate, t.object, graph) for t in quads]
    raw = Store(str(store_path))
    raw.extend(quads)
    del raw
    import gc

    gc.collect()
    cx = open_agent(store_path)
    try:
        assert [m.id for m in cx.recall("a", "another tool")] == [foreign.id]
        assert cx.index_status("a").rebuilds == 1
    finally:
        cx.close()


def test_second_process_gets_store_locked_error_with_pid(store_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from cortex import Cortex; cx = Cortex.open(sys.argv[1]); "
         "print('ready', flush=True); sys.stdin.readline(); cx.close()", str(store_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreLockedError) as info:
            Cortex.open(store_path)
        assert info.value.pid == holder.pid
        assert str(store_path.resolve()) in str(info.value) and f"(pid {holder.pid}) is writing" in str(info.value)
    finally:
        holder.communicate("\n", timeout=30)
    with Cortex.open(store_path) as cx:  # released when the holder closed
        assert cx.store_path == store_path.resolve()


def test_same_process_double_open_is_locked_and_close_releases(store_path):
    cx = Cortex.open(store_path)
    with pytest.raises(StoreLockedError, match=f"process {os.getpid()}"):
        Cortex.open(store_path)
    cx.close()
    Cortex.open(store_path).close()


def test_store_data_is_untouched_by_the_lock_error(store_path):
    cx = open_agent(store_path)
    m = cx.store("a", "precious")
    with pytest.raises(StoreLockedError):
        Cortex.open(store_path)
    assert cx.get("a", m.id).content == "precious"
    cx.close()
    raw = Store(str(store_path))
    contents = [q.object for q in raw.quads_for_pattern(None, NamedNode("urn:cortex:agentmem:content"), None, None)]
    assert contents == [Literal("precious")]


def test_a_change_after_the_snapshot_is_applied_without_a_rescan(store_path):
    cx = open_agent(store_path)
    cx.store_many("a", [{"content": f"filler {i}"} for i in range(1100)])
    memory = cx.store("a", "counted")
    cx.close()  # over 1000 changes: checkpointed, the memory is in the snapshot
    script = (
        "import os, sys\n"
        "from cortex import Cortex\n"
        "cx = Cortex.open(sys.argv[1], embeddings=None); cx.agents.register('a')\n"
        "cx.touch('a', sys.argv[2])\n"
        "os._exit(0)\n"  # no close: only the store's change log knows about the touch
    )
    subprocess.run([sys.executable, "-c", script, str(store_path), memory.id], check=True, timeout=120)
    cx = open_agent(store_path)
    try:
        assert cx.recall("a", "counted")[0].usage_count == 1
        status = cx.index_status("a")
        assert (status.rebuilds, status.pending, status.memories) == (0, 1, 1101)
    finally:
        cx.close()


def test_project_filters_work_on_memories_loaded_from_a_snapshot(store_path):
    """The snapshot restores the project codes too: filtering by project finds memories that were
    checkpointed before the restart (it found none of them), and a new memory of a known project does not
    get a second code."""
    cx = open_agent(store_path)
    cx.store_many("a", [{"content": f"memory {i}", "project": "x" if i % 2 else "y"} for i in range(1500)])
    cx.close()  # over 1000 journaled ids: checkpointed into the snapshot
    cx = open_agent(store_path)
    try:
        assert cx.index_status("a").pending == 0
        cx.store("a", "one more memory", project="x")
        assert len(cx.recall("a", project="x", limit=10_000)) == 751
        assert len(cx.recall("a", "memory", project="y", limit=10_000)) == 750
        assert {m.project for m in cx.recall("a", limit=10_000)} == {"x", "y"}
    finally:
        cx.close()


class _NoLocalPath:
    """A store that does not say where it lives (as a remote one): its indexes need a state directory."""

    def __init__(self, inner) -> None:
        self.inner = inner

    local_path = None

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_store_without_a_local_path_keeps_its_indexes_in_the_state_directory(tmp_path):
    from cortex.store import open_store
    from cortex.vocab import Vocabulary

    state = tmp_path / "state"
    with Cortex(_NoLocalPath(open_store(tmp_path / "store", Vocabulary())), state_dir=state) as cx:
        cx.agents.register("a")
        cx.store_many("a", [{"content": f"memory {i}"} for i in range(1500)])
        assert cx.state_dir == state
    assert (state / INDEX_DIR / "a" / "snapshot.npz").is_file()
    assert not (tmp_path / "store" / INDEX_DIR).exists()
    with Cortex(_NoLocalPath(open_store(tmp_path / "store", Vocabulary())), state_dir=state) as cx:
        cx.agents.register("a")
        assert cx.count("a") == 1500 and cx.index_status("a").rebuilds == 0
    with Cortex(_NoLocalPath(open_store(tmp_path / "store", Vocabulary()))) as cx:  # no state: built from the store
        cx.agents.register("a")
        assert cx.count("a") == 1500 and cx.index_status("a").rebuilds == 1


def test_a_touch_after_a_snapshot_survives_a_restart_without_checkpoint(store_path):
    cx = open_agent(store_path)
    m = cx.store("a", "in the snapshot")
    cx.reindex("a")  # a snapshot that holds the memory
    cx.touch("a", m.id)
    cx.close(flush=False)
    cx = open_agent(store_path)
    try:
        assert cx.recall("a")[0].usage_count == 1 and cx.index_status("a").rebuilds == 0
    finally:
        cx.close()


def test_kill_9_during_updates_and_supersessions_leaves_old_or_new_state(store_path):
    """Updates, supersessions and injections are one store write each: after a kill -9 every memory is at a
    version whose history is complete, every supersession has both halves, and the index agrees with the
    store."""
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(
            """
            import sys
            from cortex import Cortex
            from cortex.agents import AgentSettings
            cx = Cortex.open(sys.argv[1], embeddings="hash")
            cx.agents.register("a", settings=AgentSettings(teams=("t",), lead=True))
            base = cx.store_many("a", [{"content": f"base {j}"} for j in range(200)])
            i = 0
            while True:
                m = base[i % 200]
                current = cx.get("a", m.id)
                if current.superseded_by is None:
                    cx.update("a", m.id, content=f"base {i % 200} v{current.version + 1}",
                              expected_version=current.version)
                    if i % 3 == 0:
                        base[i % 200] = cx.supersede("a", m.id, f"replacement {i}")
                cx.inject_learning("a", f"learning {i}", "best-practice", team="t")
                print(i, flush=True)
                i += 1
            """
        ), str(store_path)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    done = 0
    deadline = time.monotonic() + 60
    while done < 60 and time.monotonic() < deadline:
        writer.stdout.readline()
        done += 1
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert done == 60
    from cortex.agents import AgentSettings

    cx = Cortex.open(store_path, embeddings="hash")
    cx.agents.register("a", settings=AgentSettings(teams=("t",), lead=True))
    try:
        assert cx.index_status("a").rebuilds == 0
        assert_index_matches_store(cx)
        everything = cx.recall("a", limit=10_000, include_superseded=True, scope="agent")
        by_id = {m.id: m for m in everything}
        assert len(everything) >= 200
        for m in everything:
            versions = cx.history("a", m.id)
            assert [v.version for v in versions] == list(range(1, m.version + 1))
            if m.superseded_by is not None:
                assert m.superseded_by in by_id and m.valid_until == by_id[m.superseded_by].valid_from
        assert cx.index_status("a").vectors == cx.count("a")  # vectors of the current contents
        for m in everything[:50]:
            hit = cx.search("a", m.content, mode="semantic", limit=1, explain=True, include_superseded=True)[0]
            assert hit.explain["semantic"] > 0.99  # each memory's vector is its current content's
        assert len(cx.recall("a", "learning", scope="team:t", limit=1000)) >= 60
    finally:
        cx.close()


def test_a_bulk_write_larger_than_one_batch_is_all_or_nothing_across_kill_9(store_path):
    """``store_many`` of more memories than one atomic bulk batch holds goes behind a journal: complete when it
    returns, and undone whole on the next open when the process dies part way (never some chunks of it)."""
    done = run_python(f"""
        import os
        from cortex import Cortex
        from cortex.store import oxigraph
        oxigraph.BULK_IMPORT_MAX, oxigraph.JOURNAL_CHUNK, oxigraph.ROLLBACK_CHUNK = 10_000, 3_000, 700
        cx = Cortex.open({str(store_path)!r}, embeddings=None)
        cx.agents.register("coder")
        whole = cx.store_many("coder", [{{"content": f"whole batch {{i}} kiwi"}} for i in range(2_500)])
        print(len(whole), flush=True)
        held = cx._memories.store._store
        real, calls = held.bulk_extend, [0]
        def bulk_extend(quads):
            if calls[0] == 1:  # one batch of data, then death
                os._exit(9)
            real(quads)
            calls[0] += 1
        cx._memories.store._store = type("S", (), {{"__getattr__": lambda s, n: getattr(held, n),
                                                   "bulk_extend": staticmethod(bulk_extend)}})()
        cx.store_many("coder", [{{"content": f"cut batch {{i}} kiwi"}} for i in range(2_500)])
    """)
    assert done.returncode == 9, done.stderr
    assert done.stdout.split() == ["2500"]
    with Cortex.open(store_path, embeddings=None) as cx:
        cx.agents.register("coder")
        assert cx.count("coder") == 2500 == len(cx.recall("coder", "kiwi", limit=10_000))
        assert cx.recall("coder", "cut") == [] and len(cx.recall("coder", "whole", limit=10_000)) == 2500
        stored = cx.sparql("SELECT (COUNT(?m) AS ?n) WHERE { GRAPH ?g { ?m a <urn:cortex:agentmem:Memory> } }")
        assert int(stored.rows[0]["n"].value) == 2500



def _sst_files(path: Path) -> tuple[int, int]:
    files = list(path.glob("*.sst"))
    return len(files), sum(f.stat().st_size for f in files)


def test_closing_after_a_bulk_load_compacts_the_store_and_keeps_every_memory(tmp_path, monkeypatch):
    """Bulk batches are ingested as SST files as they are; past OPTIMIZE_AFTER_QUADS, closing compacts them
    (fewer, smaller files than the same load left alone), and everything reads back, through the snapshot and
    through a rebuild from the store."""
    from cortex.store import oxigraph

    files = {}
    for threshold in (1, 10**12):
        monkeypatch.setattr(oxigraph, "OPTIMIZE_AFTER_QUADS", threshold)
        path = tmp_path / str(threshold)
        with Cortex.open(path, embeddings=None) as cx:
            cx.agents.register("a")
            for batch in range(3):
                cx.store_many("a", [{"content": f"bulk batch{batch} memory {i}"} for i in range(1200)])
        files[threshold] = _sst_files(path)  # (closed: no compaction runs in the background any more)
        for drop_snapshot in (False, True):
            if drop_snapshot:
                (path / INDEX_DIR / "a" / "snapshot.npz").unlink()
            with Cortex.open(path, embeddings=None) as cx:
                cx.agents.register("a")
                assert cx.count("a") == 3600
                assert len(cx.recall("a", "batch1", limit=5000)) == 1200
                assert cx.index_status("a").rebuilds == (1 if drop_snapshot else 0)
    # compacted: ~5% smaller here (two loads left alone differ by < 1%)
    assert files[1][0] < files[10**12][0] and files[1][1] < 0.98 * files[10**12][1]
