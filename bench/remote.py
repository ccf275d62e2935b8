"""Remote-store benchmark: the same operations on the embedded store and on real SPARQL servers (Oxigraph server,
Virtuoso) started on loopback, at --memories memories for one agent, in the same run.

    python bench/remote.py                       # 100k memories, embedded + oxigraph + virtuoso (~15-25 min)
    python bench/remote.py --memories 10000 --servers oxigraph
    python bench/remote.py --store sparql+http://host:7878/query?update=/update   # any endpoint (data wiped!)

Per backend: bulk write rate (store_many, 2,000 per call), import rate of an exported TriG file (10k memories),
opening a second Cortex on the loaded store (its index built from a scan), single store p50, AND recall and
hybrid search p50/p99 (hash embeddings: the backend's cost, not a model's), touch p50; on servers also the change
propagation delay between two Cortex instances (a store through one until the other's next request finds it)
and the catch-up time of an idle instance after 10k single writes through the other. Ratios are against the
embedded store measured in the same run. Prints a table and writes bench/results/remote.json.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))
from _common import Corpus, percentiles, print_table, timed, write_json  # noqa: E402

from cortex import Cortex  # noqa: E402

AGENT = "bench"


def make_queries(contents: list[str], count: int, rng: random.Random) -> list[str]:
    queries = []
    while len(queries) < count:
        words = list(dict.fromkeys(w.strip(".").lower() for w in rng.choice(contents).split()))
        if len(words) >= 2:
            queries.append(" ".join(rng.sample(words, 2)))
    return queries


def open_cx(location: str | Path) -> Cortex:
    cx = Cortex.open(location, embeddings="hash")
    cx.agents.register(AGENT)
    return cx


def measure(name: str, location: str | Path, n: int, samples: int, shared: bool, fresh: Any) -> dict[str, Any]:
    """Every figure for one backend; ``fresh()`` empties it (a new directory, or a cleared server)."""
    out: dict[str, Any] = {"backend": name, "memories": n}
    corpus = Corpus(seed=11)
    contents = corpus.contents(n)
    cx = open_cx(location)
    t0 = time.perf_counter()
    for start in range(0, n, 2000):
        cx.store_many(AGENT, [{"content": c} for c in contents[start:start + 2000]])
    out["bulk_write_per_s"] = n / (time.perf_counter() - t0)
    print(f"  {name}: bulk write {out['bulk_write_per_s']:.0f}/s", flush=True)

    if not shared:  # one process holds an embedded store: reopen it (its index comes from the snapshot)
        cx.close()
    opened, second = timed(open_cx, location)
    t_index, _ = timed(second.recall, AGENT, "review")  # a second server: its index built from a scan
    out["open_s"] = opened + t_index
    if not shared:
        cx = second
    rng = random.Random(5)
    queries = make_queries(contents, samples, rng)
    out["recall"] = percentiles([timed(cx.recall, AGENT, q, limit=10)[0] for q in queries])
    out["hybrid"] = percentiles([timed(cx.search, AGENT, q, mode="hybrid", limit=10, rerank=False)[0]
                                 for q in queries])
    if shared:  # the same reads with a bounded staleness of 100 ms (CORTEX_SYNC_INTERVAL=0.1)
        os.environ["CORTEX_SYNC_INTERVAL"] = "0.1"
        relaxed = open_cx(location)
        del os.environ["CORTEX_SYNC_INTERVAL"]
        relaxed.recall(AGENT, "review")
        out["recall_interval"] = percentiles([timed(relaxed.recall, AGENT, q, limit=10)[0] for q in queries])
        out["hybrid_interval"] = percentiles([timed(relaxed.search, AGENT, q, mode="hybrid", limit=10,
                                                    rerank=False)[0] for q in queries])
        relaxed.close()
    singles = corpus.contents(samples)
    out["store"] = percentiles([timed(cx.store, AGENT, c)[0] for c in singles])
    ids = [m.id for m in cx.recall(AGENT, "review", limit=samples)] or [cx.store(AGENT, "review").id]
    out["touch"] = percentiles([timed(cx.touch, AGENT, rng.choice(ids))[0] for _ in range(samples)])
    print(f"  {name}: recall p50 {out['recall']['p50_ms']:.2f} ms, hybrid {out['hybrid']['p50_ms']:.2f} ms, "
          f"store {out['store']['p50_ms']:.2f} ms, touch {out['touch']['p50_ms']:.2f} ms", flush=True)

    buffer = io.BytesIO()
    exported = Cortex.open(None, embeddings=None)
    exported.agents.register("importer")
    exported.store_many("importer", [{"content": c} for c in corpus.contents(10_000)])
    exported.export(buffer, agent="importer", format="trig")
    exported.close()
    t_import, _ = timed(cx.import_rdf, buffer.getvalue(), format="trig")
    out["import_per_s"] = 10_000 / t_import

    if shared:
        delays = []
        for i in range(20):
            stored = cx.store(AGENT, f"propagation probe zq{i}x")
            t0 = time.perf_counter()
            while not second.recall(AGENT, f"zq{i}x"):
                pass
            delays.append(time.perf_counter() - t0)
            assert stored.id
        out["propagation"] = percentiles(delays)
        t0 = time.perf_counter()
        for c in corpus.contents(10_000):
            cx.store(AGENT, c)
        out["foreign_writes_s"] = time.perf_counter() - t0
        t_catch, _ = timed(second.recall, AGENT, "review")
        out["catch_up_10k_s"] = t_catch
        print(f"  {name}: propagation p50 {out['propagation']['p50_ms']:.2f} ms, catch-up after 10k writes "
              f"{t_catch:.2f} s", flush=True)
    if shared:
        second.close()
    cx.close()
    fresh()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--servers", default="oxigraph,virtuoso", help="comma-separated: oxigraph, virtuoso")
    parser.add_argument("--store", default=None, help="also measure this remote store location (its data is wiped)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from tests.sparql_servers import external_store, start_server

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        results.append(measure("embedded", Path(tmp) / "store", args.memories, args.samples, False, lambda: None))
        servers = [start_server(kind, tmp) for kind in args.servers.split(",") if kind]
        if args.store:
            servers.append(external_store(args.store))
        try:
            for server in servers:
                server.clear()
                results.append(measure(server.name, server.url, args.memories, args.samples, True, server.clear))
        finally:
            for server in servers:
                server.stop()

    base = results[0]
    rows = []
    for r in results:
        def ratio(key: str) -> str:
            return f"{r[key]['p50_ms'] / base[key]['p50_ms']:.2f}x"
        rows.append((r["backend"], f"{r['bulk_write_per_s']:.0f}", f"{r['import_per_s']:.0f}", f"{r['open_s']:.1f}",
                     f"{r['store']['p50_ms']:.2f}",
                     f"{r['recall']['p50_ms']:.2f} / {r['recall']['p99_ms']:.2f} ({ratio('recall')})",
                     f"{r['hybrid']['p50_ms']:.2f} / {r['hybrid']['p99_ms']:.2f} ({ratio('hybrid')})",
                     f"{r['touch']['p50_ms']:.2f}",
                     f"{r['recall_interval']['p50_ms']:.2f} / {r['hybrid_interval']['p50_ms']:.2f}"
                     if "recall_interval" in r else "-",
                     f"{r['propagation']['p50_ms']:.2f}" if "propagation" in r else "-",
                     f"{r['catch_up_10k_s']:.2f}" if "catch_up_10k_s" in r else "-"))
    print_table(f"Remote stores at {args.memories} memories (ms unless stated; ratio: against embedded)", rows,
                ("backend", "bulk write/s", "import/s", "open s", "store p50", "recall p50 / p99",
                 "hybrid p50 / p99", "touch p50", "recall / hybrid p50, 100 ms interval", "propagation p50",
                 "catch-up 10k s"))
    print(f"\nwrote {write_json('remote', {'memories': args.memories, 'results': results}, args.json)}")


if __name__ == "__main__":
    main()
