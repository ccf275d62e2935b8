"""Long memories are embedded whole, in overlapping windows, and scored by their best window: a fact at the end of
a runbook is found by meaning, and the windows live and die with their memory (restart, crash, update, forget)."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np

from cortex.index.vectors import Embedded, VectorLog
from tests.conftest import open_agents

RUNBOOK = ("Release runbook. Tag the release on main, wait for the build to publish the images, then announce the "
           "release in the team channel with the changelog link. " * 12
           + "Gotcha: the staging database password rotates every Monday at 03:00 UTC, so a deploy started on "
             "Monday night fails to migrate until the new secret is synced.")
OTHERS = ["The frontend build uses Vite and pnpm workspaces",
          "Invoices are generated on the first day of every month",
          "Code review needs two approvals from the platform team"]
QUERY = "when does the password of the staging database rotate?"


def semantic(cx, agent: str = "ops") -> list[tuple[str, float]]:
    return [(h.memory.content, h.explain["semantic"])
            for h in cx.search(agent, QUERY, mode="semantic", explain=True, rerank=False)]


def same(hits: list[tuple[str, float]], expected: list[tuple[str, float]]) -> bool:
    """The same memories in the same order, with the same cosines (to the float rounding of the query session)."""
    return [c for c, _ in hits] == [c for c, _ in expected] and all(
        abs(a - b) < 1e-4 for (_, a), (_, b) in zip(hits, expected))


def test_the_fact_at_the_end_of_a_long_memory_is_found_by_its_window(tmp_path, local):
    with open_agents(tmp_path / "store", "ops", embeddings=local) as cx:
        long, *_ = cx.store_many("ops", [{"content": RUNBOOK}, *({"content": c} for c in OTHERS)])
        hits = semantic(cx)
        assert hits[0][0] == RUNBOOK
        first_window = float(local.embed([RUNBOOK])[0] @ local.embed([QUERY])[0])
        assert hits[0][1] > first_window + 0.1  # the model's first 256 tokens alone do not say it
        assert cx.search("ops", QUERY)[0].memory.id == long.id  # hybrid too


def test_windows_survive_a_restart_and_a_crash(tmp_path, local):
    store = tmp_path / "store"
    script = textwrap.dedent("""
        import os, sys
        from cortex import Cortex
        cx = Cortex.open(sys.argv[1], embeddings="local")
        cx.agents.register("ops")
        cx.store_many("ops", [{"content": c} for c in sys.argv[2:]])
        os._exit(0)  # no close: no snapshot, only the journal and the vector log
    """)
    subprocess.run([sys.executable, "-c", script, str(store), RUNBOOK, *OTHERS], check=True, timeout=120)
    with open_agents(store, "ops", embeddings=local) as cx:
        after_crash = semantic(cx)
        assert after_crash[0][0] == RUNBOOK
    with open_agents(store, "ops", embeddings=local) as cx:  # from the snapshot the close wrote
        assert same(semantic(cx), after_crash)
        cx.reindex("ops")  # a rebuild carries the windows too
        assert same(semantic(cx)[:1], after_crash[:1])


def test_an_update_or_a_forget_takes_the_windows_with_it(tmp_path, local):
    with open_agents(tmp_path / "store", "ops", embeddings=local) as cx:
        long, *_ = cx.store_many("ops", [{"content": RUNBOOK}, *({"content": c} for c in OTHERS)])
        before = semantic(cx)[0][1]
        cx.update("ops", long.id, content=RUNBOOK.split("Gotcha")[0])
        hits = dict(semantic(cx))
        assert hits.get(RUNBOOK.split("Gotcha")[0], -1.0) < before - 0.1
        cx.forget("ops", long.id)
        assert all(content not in (RUNBOOK, RUNBOOK.split("Gotcha")[0]) for content, _ in semantic(cx))
    with open_agents(tmp_path / "store", "ops", embeddings=local) as cx:
        assert all(content not in (RUNBOOK, RUNBOOK.split("Gotcha")[0]) for content, _ in semantic(cx))


def test_a_vector_log_of_the_format_before_windows_is_still_read(tmp_path):
    path = tmp_path / "vectors.log"
    row = np.ones(4, dtype="<f4") / 2
    body = struct.pack("<B", 2) + b"m1" + struct.pack("<q", 7) + row.tobytes()
    path.write_bytes(b'CORTEX-VECTORS 3\n{"model": "m", "dim": 4}\n' + body + struct.pack("<I", zlib.crc32(body)))
    model, records = VectorLog(path).read()
    assert model == "m"
    [(memory_id, digest, window, windows, vector)] = list(records)
    assert (memory_id, digest, window, windows) == ("m1", 7, 0, 1) and np.allclose(vector, row)
    log = VectorLog(path)  # appending converts the file to the new format, keeping what it held
    log.append("m", ["m2"], [9], Embedded(row[None, :], row[None, :] * -1, np.array([0])))
    log.close()
    model, records = VectorLog(path).read()
    assert [(i, d, w, n) for i, d, w, n, _ in records] == [("m1", 7, 0, 1), ("m2", 9, 0, 2), ("m2", 9, 1, 2)]


def test_a_window_group_cut_short_is_embedded_again(tmp_path, local):
    store = tmp_path / "store"
    script = textwrap.dedent("""
        import os, sys
        from cortex import Cortex
        cx = Cortex.open(sys.argv[1], embeddings="local")
        cx.agents.register("ops")
        cx.store_many("ops", [{"content": c} for c in sys.argv[2:]])
        os._exit(0)
    """)
    subprocess.run([sys.executable, "-c", script, str(store), *OTHERS, RUNBOOK], check=True, timeout=120)
    log = store / "cortex-index" / "ops" / "vectors.log"
    data = log.read_bytes()
    log.write_bytes(data[: len(data) - (1 + 26 + 8 + 2 + 384 * 4 + 4)])  # the runbook's last window torn off
    with open_agents(store, "ops", embeddings=local) as cx:
        assert cx.index_status("ops").vectors == 3  # the runbook's group is incomplete: not taken
        hits = semantic(cx)
        assert hits[0][0] == RUNBOOK and hits[0][1] > 0.25  # embedded again, whole, by the search
        assert cx.index_status("ops").vectors == 4


def test_changing_only_the_tags_keeps_the_windows(tmp_path, local):
    with open_agents(tmp_path / "store", "ops", embeddings=local) as cx:
        long, *_ = cx.store_many("ops", [{"content": RUNBOOK}, *({"content": c} for c in OTHERS)])
        before = semantic(cx)[:1]
        cx.update("ops", long.id, tags=["runbook"])
        assert same(semantic(cx)[:1], before)
        cx.reindex("ops")
    with open_agents(tmp_path / "store", "ops", embeddings=local) as cx:
        assert same(semantic(cx)[:1], before)
