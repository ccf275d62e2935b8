"""Writes to a remote store that span requests (docs/scale-out.md, "Writes that span requests"): a writer killed
(``kill -9``) between two requests of a consolidation run or of an import leaves either all of it (finished by the
next process that opens the store) or none of it; and two servers consolidating one scope apply a merge once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from cortex import Cortex

pytestmark = pytest.mark.server

#: Prelude of a writer process: small requests (so a run takes many), and a kill -9 of itself right after its
#: KILL_AFTER-th data request of the write under test (armed by ``ARM = True``).
PRELUDE = """
import os, signal, sys
import cortex.store.remote.protocol as protocol, cortex.store.remote.changelog as changelog
import cortex.store.remote.store as store
modules = [protocol, changelog, store]
try:
    import cortex.store.remote.journal as journal
    modules.append(journal)
    journal.Journal._lease = lambda self, steps: 2.0  # a dead writer's journal may be finished 2 s later
except ImportError:
    pass
for module in modules:
    module.OPERATIONS_PER_REQUEST = 2
store.MEMORIES_PER_OPERATION = protocol.MEMORIES_PER_OPERATION = 5
ARM, SENT = [False], [0]
update = protocol.SparqlProtocol._update
def dying_update(self, operations, what):
    update(self, operations, what)
    if ARM[0] and operations and (what.startswith("an update") or what.startswith("a write")):
        SENT[0] += 1
        if SENT[0] == KILL_AFTER:
            os.kill(os.getpid(), signal.SIGKILL)
protocol.SparqlProtocol._update = dying_update
from cortex import Cortex
"""


def run_writer(body: str, kill_after: int) -> int:
    script = f"KILL_AFTER = {kill_after}\n" + PRELUDE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=600)
    assert done.returncode == -9, done.stderr[-3000:]  # killed part way, as planned
    return done.returncode


def duplicates(n: int) -> list[dict]:
    return [{"content": text} for i in range(n) for text in (
        f"Run the tests of module {i} with `uv run pytest -n 4` before pushing",
        f"Always run the tests of module {i} with `uv run pytest -n 4` before pushing!")]


def test_a_consolidation_killed_between_requests_is_finished_whole_by_the_next_process(remote_store_url, tmp_path):
    with Cortex.open(remote_store_url, embeddings=None, state_dir=tmp_path / "seed") as cx:
        cx.agents.register("rev")
        stored = cx.store_many("rev", duplicates(25))
    run_writer(f"""
        cx = Cortex.open({remote_store_url!r}, embeddings=None, state_dir={str(tmp_path / 'writer')!r})
        cx.agents.register("rev")
        ARM[0] = True
        cx.consolidate("rev")
    """, kill_after=3)
    time.sleep(2.5)
    with Cortex.open(remote_store_url, embeddings=None, state_dir=tmp_path / "after") as cx:
        cx.agents.register("rev")
        runs = cx.consolidation_runs("rev")
        superseded = [m for m in cx.list_memories("rev", scope="agent", include_superseded=True, limit=1000).items
                      if m.superseded_by]
        # all of the run (its record, every merge) or none of it
        assert len(runs) == 1 and runs[0].merged == len(superseded) >= 25, (runs, len(superseded))
        undone = cx.undo_consolidation(runs[0].run)
        assert len(undone.restored) > len(superseded)
        assert {m.id for m in cx.list_memories("rev", scope="agent", limit=1000).items} == {m.id for m in stored}
        assert cx.validate_store(agent="rev") == []


def test_an_import_killed_between_requests_then_run_again_stores_each_item_once(remote_store_url, tmp_path):
    export = tmp_path / "get_all.json"
    export.write_text(json.dumps({"results": [
        {"id": str(uuid.UUID(int=i + 1)), "memory": f"Fact number {i} about the kiwi service", "user_id": "dev",
         "created_at": "2026-08-20T14:03:11+00:00"} for i in range(300)]}))
    with Cortex.open(remote_store_url, embeddings=None, state_dir=tmp_path / "seed") as cx:
        cx.agents.register("dev")
    run_writer(f"""
        cx = Cortex.open({remote_store_url!r}, embeddings=None, state_dir={str(tmp_path / 'writer')!r})
        cx.agents.register("dev")
        ARM[0] = True
        cx.import_from("mem0", {str(export)!r}, agent="dev")
    """, kill_after=4)
    time.sleep(2.5)
    with Cortex.open(remote_store_url, embeddings=None, state_dir=tmp_path / "other") as cx:
        cx.agents.register("dev")
        again = cx.import_from("mem0", export, agent="dev")
        count = "SELECT (COUNT(?m) AS ?n) WHERE { GRAPH <urn:cortex:graph:agent:dev> { ?m a <urn:cortex:agentmem:Memory> } }"
        assert int(cx.sparql(count).rows[0]["n"].value) == cx.count("dev") == 300
        assert len(again.imported) in (0, 300)  # finished by the open (0 new), or none of it was there


LINED_UP = """
import json, os, sys, time
from cortex import Cortex
from cortex.consolidation import runs
apply = runs.apply
def wait_for(path):
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"waited for {path}"
        time.sleep(0.01)
def lined_up(repo, plan, report, now):
    (RENDEZVOUS / f"planned-{NAME}").touch()
    wait_for(RENDEZVOUS / f"planned-{OTHER}")  # both planned before either writes
    if ORDER == "one after the other" and NAME == "second":
        wait_for(RENDEZVOUS / "done-first")
    try:
        return apply(repo, plan, report, now)
    finally:
        (RENDEZVOUS / f"done-{NAME}").touch()
runs.apply = lined_up
with Cortex.open(URL, embeddings=None, state_dir=STATE) as cx:
    cx.agents.register("rev")
    report = cx.consolidate("rev")
    print(json.dumps({"run": report.run, "merges": len(report.merges)}))
"""


@pytest.mark.parametrize("order", ["one after the other", "at the same time"])
def test_two_servers_consolidating_one_scope_apply_the_merge_once(remote_store_url, tmp_path, order):
    """Two Cortex processes plan the same merge; then both apply it: together (lined up), or the second only once
    the first is written. One run has changes, the other finds nothing to do, and usage is summed once."""
    with Cortex.open(remote_store_url, embeddings=None, state_dir=tmp_path / "seed") as cx:
        cx.agents.register("rev")
        a, b = cx.store_many("rev", duplicates(1))
        for memory, uses in ((a, 3), (b, 2)):
            for _ in range(uses):
                cx.touch("rev", memory.id)
    processes = [subprocess.Popen([sys.executable, "-c", (
        f"URL, STATE, NAME, OTHER, ORDER = {remote_store_url!r}, {str(tmp_path / name)!r}, {name!r}, {other!r}, "
        f"{order!r}\nfrom pathlib import Path\nRENDEZVOUS = Path({str(tmp_path)!r})\n" + LINED_UP)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, other in (("first", "second"), ("second", "first"))]
    reports = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(r["merges"] for r in reports) == [0, 1] and sum(1 for r in reports if r["run"]) == 1, reports
    with Cortex.open(remote_store_url, embeddings=None, state_dir=tmp_path / "after") as cx:
        cx.agents.register("rev")
        assert len(cx.consolidation_runs("rev")) == 1
        [survivor] = cx.list_memories("rev", scope="agent", limit=10).items
        assert survivor.usage_count == 5
