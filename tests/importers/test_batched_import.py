"""A long import commits in atomic batches (:data:`cortex.memories.WRITE_BATCH`): a kill -9 in the middle leaves
the batches done, each whole, with the derived indexes (vectors included) agreeing with the store; running the
import again writes the rest, and once more writes nothing. The extra triples of a batched write go with their
memories (an observation's ``am:about``) or with the first batch (entities, relations)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from cortex import Cortex
from cortex.memories import WRITE_BATCH, OperationLock

from tests.service.test_reads_during_writes import mem0_file
from tests.service_helpers import cortex, env, make_project
from tests.slow_embeddings import GATE_ENV, release, wait_started


def test_kill_9_mid_import_leaves_whole_batches_and_a_rerun_finishes_it(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "alice")
    total = WRITE_BATCH * 2 + 300
    data = json.loads(mem0_file(tmp_path / "big.json", total).read_text())
    data["relations"] = [{"source": "cache", "relationship": "serves", "target": "checkout"}]
    source = tmp_path / "big.json"
    source.write_text(json.dumps(data))
    gate = tmp_path / "gate"
    gate.mkdir()
    importer = subprocess.Popen([sys.executable, "-m", "tests.slow_embeddings", "import", "mem0", str(source),
                                 "--agent", "alice"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env(CORTEX_EMBEDDINGS="hash", **{GATE_ENV: str(gate)}))
    try:
        wait_started(gate, 1)
        release(gate, 1)
        wait_started(gate, 2)  # batch 1 written; batch 2 embedding
    finally:
        os.kill(importer.pid, signal.SIGKILL)
        importer.communicate(timeout=60)

    store = project / ".cortex" / "store"
    with Cortex.open(store, agent_dirs=[project / "agent_defs"], embeddings="hash", client=False) as cx:
        status = cx.index_status("alice")
        assert status.memories == status.stored == status.vectors == WRITE_BATCH
        assert len(cx.recall("alice", "imported fact", limit=10_000)) == WRITE_BATCH
        assert len(cx.sparql("SELECT ?a WHERE { ?a <urn:cortex:agentmem:rel:serves> ?b }", agent="alice")) == 1

    again = cortex(project, "import", "mem0", str(source), "--agent", "alice", CORTEX_EMBEDDINGS="hash")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert len([i for i in report["imported"] if i["kind"] == "memory"]) == total - WRITE_BATCH
    assert len([i for i in report["skipped"] if i["reason"] == "already imported"]) == WRITE_BATCH + 1
    assert not report["failed"]

    once_more = json.loads(cortex(project, "import", "mem0", str(source), "--agent", "alice",
                                  CORTEX_EMBEDDINGS="hash").stdout)
    assert once_more["imported"] == [] and len(once_more["skipped"]) == total + 1
    with Cortex.open(store, agent_dirs=[project / "agent_defs"], embeddings="hash", client=False) as cx:
        status = cx.index_status("alice")
        assert status.memories == status.stored == status.vectors == total
        keys = {m.metadata["import"]["key"] for m in cx.recall("alice", "imported fact", limit=10_000)}
        assert len(keys) == total


def test_a_batched_write_keeps_each_about_link_with_its_memory(tmp_path: Path) -> None:
    """mcp-memory observations over several batches: each memory written with its ``am:about`` link."""
    lines = [{"type": "entity", "name": f"e{k}", "entityType": "service",
              "observations": [f"observation {k}-{i} of the service" for i in range(WRITE_BATCH // 2 + 7)]}
             for k in range(3)]
    lines.append({"type": "relation", "from": "e0", "to": "e2", "relationType": "calls"})
    path = tmp_path / "memory.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with Cortex.open(tmp_path / "store", embeddings="hash") as cx:
        cx.agents.register("dev")
        report = cx.import_from("mcp-memory", path, agent="dev")
        memories = [i for i in report.imported if i.kind == "memory"]
        assert len(memories) == 3 * (WRITE_BATCH // 2 + 7) > 2 * WRITE_BATCH // 2 and not report.failed
        about = cx.sparql("PREFIX am: <urn:cortex:agentmem:> SELECT ?m ?name WHERE { ?m am:about ?e . "
                          "?e am:name ?name }", agent="dev")
        assert len(about) == len(memories)
        assert {r["name"].value for r in about} == {"e0", "e1", "e2"}
        assert cx.validate_store() == []


def test_pause_hands_the_lock_to_a_waiting_reader() -> None:
    """Python's lock is not fair: a writer that lets go between batches and pauses lets a waiting thread in
    before it takes the lock again."""
    lock = OperationLock(lambda: None)
    order: list[str] = []
    waiting = threading.Event()

    def reader() -> None:
        waiting.set()
        with lock:
            order.append("reader")

    with lock:
        thread = threading.Thread(target=reader)
        thread.start()
        waiting.wait()
        while not lock._waiting:  # the reader is blocked on the lock (not merely started)
            threading.Event().wait(0.001)
    lock.pause(timeout=30)
    with lock:
        order.append("writer")
    thread.join()
    assert order == ["reader", "writer"]


def test_an_import_shows_each_phase_with_its_rate_and_time_left(tmp_path: Path) -> None:
    from tests.service_helpers import run_cli

    project = make_project(tmp_path / "p", "alice")
    source = mem0_file(tmp_path / "m.json", 300)
    ran = run_cli(project, "import", "mem0", str(source), "--agent", "alice", "--progress",
                  env={"CORTEX_NO_SERVER": "1", "CORTEX_EMBEDDINGS": "hash"})
    assert ran.returncode == 0, ran.stderr
    for phase in ("importing items", "embedding memories", "writing memories"):
        line = next((x for x in ran.stderr.splitlines() if phase in x), None)
        assert line is not None and "300/300" in line and "/s" in line and "eta" in line, ran.stderr
    assert len(json.loads(ran.stdout)["imported"]) == 300  # stdout: the report alone
