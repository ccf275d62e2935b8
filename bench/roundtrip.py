"""Where a recall's time goes on a remote store: the per-request change-log check (one constant query) against a
trivial query and a plain HTTP round trip to the same server, and recall with and without the check, on a private
Oxigraph server and a private Virtuoso started on loopback (tests/sparql_servers.py), against the embedded store.

    python bench/roundtrip.py              # 300 samples of each (~1 minute)
    python bench/roundtrip.py --samples 1000

It answers why AND recall on a remote store costs what it does: with the default consistent reads every request
asks the store's log first, so a recall costs at least one round trip to the server. Prints a table and writes
bench/results/roundtrip.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
from _common import percentiles, print_table, write_json  # noqa: E402

from cortex import Cortex  # noqa: E402
from tests.sparql_servers import start_oxigraph, start_virtuoso  # noqa: E402

TRIVIAL = "SELECT ?x WHERE { VALUES ?x { 1 } }"


def sample(fn: Callable[[], Any], n: int) -> dict[str, float]:
    fn()  # warm: connections, compiled queries
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return percentiles(times)


def measure(cx: Cortex, n: int, server: Any = None) -> dict[str, dict[str, float]]:
    """The figures of one backend; ``server``: the SPARQL server it runs on (None: embedded)."""
    cx.agents.register("a")
    cx.store_many("a", [{"content": f"kiwi fact number {i}"} for i in range(200)])
    out: dict[str, dict[str, float]] = {}
    store, scope = cx._memories.store, cx._scope("a")
    out["recall (a log check, then the index)"] = sample(lambda: cx.recall("a", "kiwi 7"), n)
    if server is not None:
        query = store.codec.heads_query([scope])
        out["log check alone (one constant query)"] = sample(lambda: store._select(query, ("h", "v")), n)
        out["trivial SELECT through the same client"] = sample(lambda: store._select(TRIVIAL), n)
        # Virtuoso's public endpoint takes queries without auth; Oxigraph server has no auth at all
        public = f"http://127.0.0.1:{server.port}/sparql" if server.name == "virtuoso" else server.query_url
        with httpx.Client() as client:
            headers = {"Accept": "application/sparql-results+json"}
            out["trivial SELECT, plain httpx, no auth"] = sample(
                lambda: client.post(public, data={"query": TRIVIAL}, headers=headers), n)
        cx._memories._indexes.sync_interval = 3600  # answers from the index: what the check costs
        out["recall without the check (CORTEX_SYNC_INTERVAL)"] = sample(lambda: cx.recall("a", "kiwi 7"), n)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"params": {"samples": args.samples}, "cpus": os.cpu_count(),
                               "load_average": os.getloadavg(), "backends": {}}
    with tempfile.TemporaryDirectory() as tmp:
        with Cortex.open(Path(tmp) / "embedded", embeddings=None) as cx:
            results["backends"]["embedded"] = measure(cx, args.samples)
        for name, start in (("oxigraph server", start_oxigraph), ("virtuoso", start_virtuoso)):
            server = start(tmp)
            try:
                with Cortex.open(server.url, embeddings=None) as cx:
                    results["backends"][name] = measure(cx, args.samples, server)
            finally:
                server.stop()
    rows = [(backend, what, f"{p['p50_ms']:.3f}", f"{p['p99_ms']:.3f}")
            for backend, figures in results["backends"].items() for what, p in figures.items()]
    print_table(f"Round trips behind a recall (ms, {args.samples} samples, loopback)", rows,
                ("backend", "operation", "p50", "p99"))
    print(f"results written to {write_json('roundtrip', results, args.json)}")
    return results


if __name__ == "__main__":
    main()
