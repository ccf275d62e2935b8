"""Export and import benchmark: ``cortex export`` / ``cortex import`` rates at --memories N (default 100,000)
into a fresh embedded (on-disk) store, with the SHACL shapes checked natively (what an import does), without
any SHACL check (what the shapes cost), and optionally with pyshacl (--pyshacl: the reference checker, slow).

    python bench/transfer.py                       # 100k memories (~2-4 minutes on 2 cores)
    python bench/transfer.py --memories 5000 --pyshacl
    python bench/transfer.py --quick               # 10k memories, for a smoke check

The store holds an agent's memories (70%), a team's (20%) and a second agent's (10%); 30% carry tags, 5%
metadata, and 300 memories were updated (versions) and 100 superseded, so the file holds every kind of
subject an export writes. Each import goes into a new store directory; the time of each stage (read, check,
write, index) comes from the import's progress reports. The baseline row is the storage engine alone loading
the same file (pyoxigraph ``Store.bulk_load``: nothing checked, logged or indexed), measured in the same run.
Prints a table and writes bench/results/transfer.json.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, print_table, write_json  # noqa: E402

from cortex import Cortex, shapes  # noqa: E402
from cortex.agents import AgentSettings  # noqa: E402


def _agents(cx: Cortex) -> Cortex:
    cx.agents.register("bench", settings=AgentSettings(teams=("core",)))
    cx.agents.register("mate", settings=AgentSettings(teams=("core",)))
    return cx


def build(path: Path, n: int, batch: int = 5000) -> None:
    corpus, rng = Corpus(), random.Random(1)
    with _agents(Cortex.open(path, embeddings=None)) as cx:
        own: list[str] = []
        plan = [("bench", "agent", int(n * 0.7)), ("mate", "team:core", int(n * 0.2)),
                ("mate", "agent", n - int(n * 0.7) - int(n * 0.2))]
        for agent, scope, count in plan:
            for start in range(0, count, batch):
                entries: list[dict[str, Any]] = []
                for content in corpus.contents(min(batch, count - start)):
                    entry: dict[str, Any] = {"content": content, "scope": scope}
                    r = rng.random()
                    if r < 0.3:
                        entry["tags"] = ["ci", f"t{rng.randint(0, 50)}"]
                    if r < 0.05:
                        entry["metadata"] = {"k": rng.randint(0, 9)}
                    if r > 0.8:
                        entry["type"] = "pattern"
                    entries.append(entry)
                stored = cx.store_many(agent, entries)
                if agent == "bench":
                    own += [m.id for m in stored]
        for memory_id in own[: min(300, n // 10)]:
            cx.update("bench", memory_id, content=f"updated {memory_id}", expected_version=1)
        for memory_id in own[min(300, n // 10): min(400, n // 5)]:
            cx.supersede("bench", memory_id, f"newer {memory_id}")


def export(store: Path, out: Path, fmt: str) -> dict[str, float]:
    with _agents(Cortex.open(store, embeddings=None)) as cx:
        t0 = time.perf_counter()
        with open(out, "wb") as f:
            quads = cx.export(f, all=True, format=fmt)
        dt = time.perf_counter() - t0
        memories = sum(len(cx._memories.index(scope)) for scope in cx._memories.scopes())
    return {"seconds": dt, "quads": quads, "bytes": out.stat().st_size, "memories": memories}


class _NoShapes:
    def check(self, subjects: Any) -> list[Any]:
        for _ in subjects:
            pass
        return []


def import_(source: Path, target: Path, checker: str) -> dict[str, Any]:
    """Import ``source`` into a new store at ``target``: checker ``native`` (what Cortex does), ``none`` (no
    SHACL check) or ``pyshacl`` (the reference)."""
    original = shapes.native
    if checker == "none":
        shapes.native = lambda vocab: _NoShapes()  # type: ignore[assignment,return-value]
    elif checker == "pyshacl":
        shapes.native = lambda vocab: None  # type: ignore[assignment]
    stages: dict[str, float] = {}
    last: list[Any] = [time.perf_counter(), None]

    def progress(stage: str, done: int, total: int | None) -> None:
        now = time.perf_counter()
        if last[1] is not None:
            stages[last[1]] = stages.get(last[1], 0.0) + now - last[0]
        last[0], last[1] = now, stage

    try:
        with _agents(Cortex.open(target, embeddings=None)) as cx:
            t0 = time.perf_counter()
            counts = cx.import_rdf(source, progress=progress)
            dt = time.perf_counter() - t0
            progress("end", 0, 0)
            t1 = time.perf_counter()
        close = time.perf_counter() - t1
    finally:
        shapes.native = original
    memories = sum(counts.values())
    return {"checker": checker, "seconds": dt, "memories": memories, "per_s": memories / dt, "stages": stages,
            "close_s": close}


def engine_load(source: Path, target: Path, fmt: str) -> dict[str, float]:
    """The baseline: the storage engine alone loading the file (``Store.bulk_load``, its fastest path) into a
    new store, with nothing checked, logged or indexed: what an import cannot beat on this machine."""
    import pyoxigraph as ox

    store = ox.Store(str(target))
    t0 = time.perf_counter()
    store.bulk_load(path=str(source), format={"trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS,
                                              "jsonld": ox.RdfFormat.JSON_LD}[fmt])
    store.flush()
    return {"seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000, help="memories in the exported store")
    parser.add_argument("--formats", default="trig,nquads", help="formats exported and imported")
    parser.add_argument("--pyshacl", action="store_true", help="also import with pyshacl checking the shapes")
    parser.add_argument("--quick", action="store_true", help="10,000 memories")
    parser.add_argument("--json", type=Path, default=None, help="where to write the JSON results")
    args = parser.parse_args(argv)
    if args.quick:
        args.memories = 10_000
    results: dict[str, Any] = {"params": vars(args) | {"json": str(args.json)}, "cpus": os.cpu_count(),
                               "load_average": os.getloadavg(), "exports": {}, "imports": []}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        build(root / "source", args.memories)
        results["build_s"] = time.perf_counter() - t0
        print(f"built {args.memories} memories in {results['build_s']:.1f} s", file=sys.stderr)
        for fmt in args.formats.split(","):
            out = root / f"all.{ {'trig': 'trig', 'nquads': 'nq', 'jsonld': 'jsonld'}[fmt]}"
            e = export(root / "source", out, fmt)
            results["exports"][fmt] = e
            rows.append((fmt, "export", f"{e['seconds']:.2f}", f"{e['memories'] / e['seconds']:.0f}",
                         f"{e['quads']} quads, {e['bytes'] / 1e6:.1f} MB"))
            engine = engine_load(out, root / f"engine-{fmt}", fmt)
            results["engine_loads"] = results.get("engine_loads", {}) | {fmt: engine}
            rows.append((fmt, "baseline: pyoxigraph bulk_load of the file alone", f"{engine['seconds']:.2f}",
                         f"{e['memories'] / engine['seconds']:.0f}", "no checks, no index, no log"))
            checkers = ["native", "none"] + (["pyshacl"] if args.pyshacl else [])
            for checker in checkers:
                r = import_(out, root / f"import-{fmt}-{checker}", checker) | {"format": fmt}
                results["imports"].append(r)
                stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
                label = {"native": "import (shapes checked natively)", "none": "import without SHACL",
                         "pyshacl": "import (shapes checked by pyshacl)"}[checker]
                rows.append((fmt, label, f"{r['seconds']:.2f}", f"{r['per_s']:.0f}", stages))
                print(f"{fmt} {label}: {r['per_s']:.0f} memories/s", file=sys.stderr)
    results["load_average_after"] = os.getloadavg()
    print_table(f"Cortex export / import at {args.memories} memories (embedded store, fresh directory each)", rows,
                ("format", "operation", "seconds", "memories/s", "stages (s) / size"))
    target = write_json("transfer", results, args.json)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
