"""Core benchmark: store_many throughput, single store / touch latency, AND-token recall and bm25 search
latency at 10k and 100k memories for one agent (beside 100k memories of other agents, and a 20k-memory team
graph the agent also reads), against a SPARQL ``FILTER(CONTAINS)`` scan doing the same work (all matches,
ranked, top 10, memories loaded) in the same run, the lifecycle operations (update, supersede, validate), and
a cold open.

    python bench/core.py                 # full run (~4-6 minutes on 2 cores)
    python bench/core.py --quick         # small sizes, for a smoke check
    PYTHONPATH=<older checkout> python bench/core.py --json old.json   # the same run on an older Cortex

On a Cortex without shared scopes or the lifecycle the team graph and the lifecycle rows are left out, so the
same script measures the code before and after a change. Embeddings are off: this measures the engine;
bench/retrieval.py measures stores and searches with them. Prints a table and writes bench/results/core.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pyoxigraph import Literal, NamedNode

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, percentiles, print_table, timed, write_json  # noqa: E402

from cortex import Cortex  # noqa: E402

AGENT = "bench"
TEAM = "core"
TEAMMATE = "teammate"
#: Whether the Cortex measured has shared scopes and the lifecycle (an older checkout has neither).
LIFECYCLE = hasattr(Cortex, "supersede")


def make_queries(contents: list[str], ntokens: int, count: int, rng: random.Random) -> list[str]:
    queries = []
    while len(queries) < count:
        words = list(dict.fromkeys(w.strip(".").lower() for w in rng.choice(contents).split()))
        if len(words) >= ntokens:
            queries.append(" ".join(rng.sample(words, ntokens)))
    return queries


def baseline_recall(cx: Cortex, agent: str, query: str, limit: int = 10) -> list:
    """AND-token recall done by the store alone: FILTER(CONTAINS(LCASE(...))) over the agent's graph, ranked
    by occurrences, usageCount, lastUsedAt, top ``limit``, then the memories loaded."""
    ns = "urn:cortex"
    tokens = list(dict.fromkeys(query.lower().split()))
    subs = {"g": NamedNode(f"{ns}:graph:agent:{agent}")}
    conds, occ = [], []
    for i, token in enumerate(tokens):
        subs[f"t{i}"] = Literal(token)
        conds.append(f"CONTAINS(?lc, ?t{i})")
        # tokens here are plain words, so REPLACE's regex reading of them is literal
        occ.append(f"(STRLEN(?lc) - STRLEN(REPLACE(?lc, ?t{i}, \"\"))) / STRLEN(?t{i})")
    p = f"{ns}:agentmem:"
    sparql = (
        f"SELECT ?m ?g {' '.join(f'?t{i}' for i in range(len(tokens)))} WHERE {{ GRAPH ?g {{ ?m <{p}content> ?c ; "
        f"<{p}usageCount> ?u ; <{p}lastUsedAt> ?lu }} BIND(LCASE(?c) AS ?lc) FILTER({' && '.join(conds)}) "
        f"BIND({' + '.join(occ)} AS ?occ) }} ORDER BY DESC(?occ) DESC(?u) DESC(?lu) LIMIT {limit}"
    )
    prefix = f"{ns}:agent:{agent}:memory:"
    ids = [row["m"].value[len(prefix):] for row in cx.sparql(sparql, subs)]
    return [cx.get(agent, i) for i in ids]


def rank_key(memory, query: str) -> tuple:
    text = memory.content.lower()
    return (sum(text.count(t) for t in set(query.lower().split())), memory.usage_count, memory.last_used_at)


COLD = """
import json, sys, time
t0 = time.perf_counter()
from cortex import Cortex
t1 = time.perf_counter()
cx = Cortex.open(sys.argv[1], embeddings=None); cx.agents.register(sys.argv[2])
hits = cx.recall(sys.argv[2], sys.argv[3])
t2 = time.perf_counter()
cx.close()
print(json.dumps({"import_s": t1 - t0, "open_first_recall_s": t2 - t1, "hits": len(hits)}))
"""


def measure_size(cx: Cortex, contents: list[str], size: int, args: argparse.Namespace, rng: random.Random) -> dict:
    result: dict = {"memories": size}
    recall_all: list[float] = []
    for ntok in (1, 2, 3):
        samples = []
        for q in make_queries(contents, ntok, args.queries, rng):
            dt, _ = timed(cx.recall, AGENT, q)
            samples.append(dt)
        result[f"recall_{ntok}tok"] = percentiles(samples)
        recall_all += samples
    result["recall"] = percentiles(recall_all)
    if LIFECYCLE:  # the same queries on the agent's own graph alone: what reading the team graph costs
        own = [timed(cx.recall, AGENT, q, scope="agent")[0] for ntok in (1, 2, 3)
               for q in make_queries(contents, ntok, args.queries, random.Random(size + ntok))]
        result["recall_own_scope"] = percentiles(own)
    bm25_all: list[float] = []
    for ntok in (1, 2, 3):
        samples = [timed(cx.search, AGENT, q, mode="bm25")[0] for q in make_queries(contents, ntok, args.queries, rng)]
        result[f"bm25_{ntok}tok"] = percentiles(samples)
        bm25_all += samples
    result["bm25"] = percentiles(bm25_all)
    base_samples = []
    for ntok in (1, 2, 3):
        for q in make_queries(contents, ntok, args.baseline_queries, rng):
            dt, hits = timed(baseline_recall, cx, AGENT, q)
            base_samples.append(dt)
            ours = cx.recall(AGENT, q, scope="agent") if LIFECYCLE else cx.recall(AGENT, q)
            # ties (same occurrences, usage and lastUsedAt) may come in any order: compare the ranking keys
            assert [rank_key(m, q) for m in hits] == [rank_key(m, q) for m in ours], f"disagree on {q!r}"
    result["baseline_sparql_scan"] = percentiles(base_samples)
    result["speedup_p50"] = result["baseline_sparql_scan"]["p50_ms"] / result["recall"]["p50_ms"]
    ids = [m.id for m in cx.recall(AGENT, limit=1000)]
    touch = [timed(cx.touch, AGENT, rng.choice(ids))[0] for _ in range(args.queries)]
    result["touch"] = percentiles(touch)
    singles = [timed(cx.store, AGENT, c)[0] for c in Corpus(seed=size).contents(args.singles)]
    result["store_single"] = percentiles(singles)

    def store_and_flush(content: str) -> None:
        cx.store(AGENT, content)
        cx.flush()

    flushed = [timed(store_and_flush, c)[0] for c in Corpus(seed=size + 1).contents(max(20, args.singles // 5))]
    result["store_single_flushed"] = percentiles(flushed)
    if LIFECYCLE:
        own = [m.id for m in cx.recall(AGENT, limit=1000, scope="agent")]
        rng.shuffle(own)
        fresh = Corpus(seed=size + 2).contents(3 * args.singles)
        updated = own[: args.singles]
        result["update"] = percentiles([timed(cx.update, AGENT, i, content=c)[0] for i, c in zip(updated, fresh)])
        result["validate"] = percentiles([timed(cx.validate, AGENT, i)[0] for i in updated])
        old = own[args.singles : 2 * args.singles]
        result["supersede"] = percentiles([timed(cx.supersede, AGENT, i, c)[0]
                                           for i, c in zip(old, fresh[args.singles:])])
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="memories of the measured agent")
    parser.add_argument("--others", type=int, default=100_000, help="memories of other agents in the same store")
    parser.add_argument("--team", type=int, default=20_000, help="memories of the team graph the agent also reads")
    parser.add_argument("--batch", type=int, default=5000, help="store_many batch size")
    parser.add_argument("--queries", type=int, default=300, help="recall queries per token count")
    parser.add_argument("--baseline-queries", type=int, default=10, help="SPARQL-scan queries per token count")
    parser.add_argument("--singles", type=int, default=300, help="single store calls measured")
    parser.add_argument("--quick", action="store_true", help="sizes 2000,10000 and 10k others")
    parser.add_argument("--json", type=Path, default=None, help="where to write the JSON results")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.others, args.queries, args.baseline_queries = "2000,10000", 10_000, 100, 5
        args.team, args.singles = 2000, 100
    sizes = sorted(int(s) for s in args.sizes.split(","))
    rng = random.Random(42)
    corpus = Corpus()
    results: dict = {"sizes": {}, "params": vars(args) | {"json": str(args.json)}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store"
        cx = Cortex.open(path, embeddings=None)  # the engine alone: bench/retrieval.py measures embeddings
        others = [f"other{i}" for i in range(10)]
        for name in others:
            cx.agents.register(name)
        if LIFECYCLE:
            from cortex.agents import AgentSettings

            for name in (AGENT, TEAMMATE):
                cx.agents.register(name, settings=AgentSettings(teams=(TEAM,)))
        else:
            cx.agents.register(AGENT)
        t0 = time.perf_counter()
        per_other = args.others // len(others)
        for name in others:
            for start in range(0, per_other, args.batch):
                cx.store_many(name, [{"content": c} for c in corpus.contents(min(args.batch, per_other - start))])
        results["others_build_s"] = time.perf_counter() - t0
        results["team_memories"] = args.team if LIFECYCLE else 0
        if LIFECYCLE:  # the team graph the measured agent reads beside its own
            for start in range(0, args.team, args.batch):
                cx.store_many(TEAMMATE, [{"content": c, "scope": f"team:{TEAM}"}
                                         for c in corpus.contents(min(args.batch, args.team - start))])
        contents: list[str] = []
        build_time = 0.0
        for size in sizes:
            while len(contents) < size:
                batch = corpus.contents(min(args.batch, size - len(contents)))
                dt, _ = timed(cx.store_many, AGENT, [{"content": c} for c in batch])
                build_time += dt
                contents += batch
            results["store_many_per_s"] = len(contents) / build_time
            print(f"measuring at {size} memories ...", file=sys.stderr)
            results["sizes"][str(size)] = measure_size(cx, contents, size, args, rng)
        cx.close()
        query = make_queries(contents, 2, 1, rng)[0]
        colds = []
        for _ in range(3):
            out = subprocess.run([sys.executable, "-c", COLD, str(path), AGENT, query],
                                 capture_output=True, text=True, check=True)
            colds.append(json.loads(out.stdout))
        colds.sort(key=lambda c: c["open_first_recall_s"])
        results["cold_open_first_recall"] = colds[1]
    rows = []
    for size, r in results["sizes"].items():
        rows.append((size, "recall (1-3 tokens)", f"{r['recall']['p50_ms']:.3f}", f"{r['recall']['p99_ms']:.3f}"))
        for ntok in (1, 2, 3):
            x = r[f"recall_{ntok}tok"]
            rows.append((size, f"  recall {ntok} token(s)", f"{x['p50_ms']:.3f}", f"{x['p99_ms']:.3f}"))
        if "recall_own_scope" in r:
            x = r["recall_own_scope"]
            rows.append((size, "  recall, own graph only (scope=agent)", f"{x['p50_ms']:.3f}", f"{x['p99_ms']:.3f}"))
        b = r["baseline_sparql_scan"]
        rows.append((size, "baseline SPARQL CONTAINS scan", f"{b['p50_ms']:.1f}", f"{b['p99_ms']:.1f}"))
        rows.append((size, "  recall speedup vs baseline (p50)", f"{r['speedup_p50']:.0f}x", ""))
        rows.append((size, "bm25 search (1-3 tokens)", f"{r['bm25']['p50_ms']:.3f}", f"{r['bm25']['p99_ms']:.3f}"))
        rows.append((size, "touch", f"{r['touch']['p50_ms']:.3f}", f"{r['touch']['p99_ms']:.3f}"))
        for op in ("update", "supersede", "validate"):
            if op in r:
                rows.append((size, op, f"{r[op]['p50_ms']:.3f}", f"{r[op]['p99_ms']:.3f}"))
        rows.append((size, "store (single, committed)", f"{r['store_single']['p50_ms']:.3f}",
                     f"{r['store_single']['p99_ms']:.3f}"))
        rows.append((size, "store + flush (fsync)", f"{r['store_single_flushed']['p50_ms']:.3f}",
                     f"{r['store_single_flushed']['p99_ms']:.3f}"))
    title = "Cortex core benchmark (latencies in ms"
    title += f"; the agent also reads a {args.team}-memory team graph)" if LIFECYCLE else ")"
    print_table(title, rows, ("memories", "operation", "p50", "p99"))
    cold = results["cold_open_first_recall"]
    print(f"\nstore_many throughput: {results['store_many_per_s']:.0f} memories/s (batches of {args.batch})")
    print(f"cold open + first recall at {sizes[-1]}: {cold['open_first_recall_s']:.3f} s "
          f"(plus {cold['import_s']:.3f} s of imports)")
    target = write_json("core", results, args.json)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
