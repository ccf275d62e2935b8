"""The vector side of semantic and hybrid search at scale: exact search (every vector scored) against the vector
graph (cortex/index/ann.py: usearch HNSW, i8 storage, candidates rescored exactly from the float32 rows).

    python bench/vectors.py                          # synthetic clustered vectors, 10k and 100k
    python bench/vectors.py --sizes 10000,100000,1000000
    python bench/vectors.py --real 10000             # + LoCoMo/LongMemEval turns embedded by the local provider

For each size: a real :class:`~cortex.index.memory_index.MemoryIndex` (one memory per vector, a tenth of them
decisions), saved to a temporary state directory (which builds the graph: the build time), loaded back (the
graph file is read on first use), then the semantic side of a search as ``cortex.search`` runs it: the cosine
scores and the best 100 passing the filters (hybrid's depth), for queries not in the data (their embedding
excluded). Recall@10 is the share of exact search's top 10 the graph's answer holds. ``filtered``: the same with
a type filter that leaves a tenth of the memories. Synthetic vectors: 384 dimensions around n/100 cluster centres
(unit rows), queries drawn from the same clusters. Real: the ``local`` MiniLM (int8 ONNX) embeddings of LoCoMo and
LongMemEval user turns, queries the LoCoMo questions. Prints a table and writes bench/results/vectors.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import percentiles, print_table, target_row, write_json  # noqa: E402
from cortex.index import ann  # noqa: E402
from cortex.index.memory_index import MemoryIndex  # noqa: E402
from cortex.model import Filters, Memory, MemoryType, Source  # noqa: E402

DIM = 384
DEPTH = 100
DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "data"


def clustered(n: int, queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors around n/100 random centres, and query vectors from the same centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(100, n // 100), DIM), dtype=np.float32) / np.sqrt(DIM)

    def draw(count: int) -> np.ndarray:
        rows = centres[rng.integers(0, len(centres), count)] + rng.standard_normal((count, DIM), dtype=np.float32) * 0.05
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    return draw(n), draw(queries)


def real(n: int, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """MiniLM embeddings of ``n`` LoCoMo and LongMemEval user turns and of the LoCoMo questions (cached)."""
    if cache.is_file():
        with np.load(cache) as data:
            if len(data["rows"]) >= n:
                return data["rows"][:n], data["queries"]
    from cortex.embeddings import OnnxEmbeddings

    locomo = json.loads((DATA / "locomo10.json").read_text())
    texts = [turn["text"] for sample in locomo for key, session in sample["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for turn in session]
    questions = [qa["question"] for sample in locomo for qa in sample["qa"]][:200]
    for question in json.loads((DATA / "longmemeval_s_subset101.json").read_text()):
        for session in question["haystack_sessions"]:
            texts.extend(turn["content"] for turn in session if turn["role"] == "user")
        if len(texts) >= n:
            break
    texts = list(dict.fromkeys(texts))[:n]
    provider = OnnxEmbeddings()
    t0 = time.perf_counter()
    rows = np.concatenate([provider.embed(texts[i:i + 256]) for i in range(0, len(texts), 256)])
    print(f"embedded {len(texts)} texts in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    queries = provider.embed(questions)
    np.savez(cache, rows=rows, queries=queries)
    return rows, queries


def make_index(rows: np.ndarray) -> MemoryIndex:
    """An index of one short memory per row, every tenth a decision, with ``rows`` as its vectors."""
    index = MemoryIndex()
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i in range(len(rows)):
        index.add(Memory.model_construct(
            id=f"m{i:08d}", agent="a", content=f"memory {i}", type=MemoryType.DECISION if i % 10 == 0 else
            MemoryType.INSIGHT, project="p", confidence=1.0, usage_count=0, created_at=now, last_used_at=now,
            tags=(), metadata=None, version=1, updated_at=None, validated_at=None, valid_from=None, valid_until=None,
            superseded_by=None, superseded_reason=None, scope="agent", author=None, used_count=0, expires_at=None,
            source=Source.MANUAL))
    index.set_vectors("bench", index.ids, rows)
    return index


def semantic_top(index: MemoryIndex, query: np.ndarray, filters: Filters, graph: bool) -> list[str]:
    """The semantic ranker's best ``DEPTH`` as hybrid search asks for them; the top 10 returned."""
    cosines = index.cosine_scores(query, filters, DEPTH) if graph else index.cosine_scores(query)
    eligible = index.has_vector.view & (cosines > -np.inf)
    return [i for i, _ in index.top(cosines, filters, DEPTH, eligible=eligible)[:10]]


def measure(name: str, rows: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    t0 = time.perf_counter()
    index = make_index(rows)
    print(f"{name}: index made in {time.perf_counter() - t0:.0f} s, saving (builds the graph)", file=sys.stderr)
    now = datetime(2026, 6, 1, tzinfo=timezone.utc)
    plain, narrow = Filters(now=now), Filters(now=now, types=frozenset({MemoryType.DECISION}))
    out: dict[str, Any] = {"name": name, "n": len(rows), "vectors_mb": rows.nbytes / 1e6}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.npz"
        t0, c0 = time.perf_counter(), time.process_time()
        index.save(path)
        out["build_s"] = time.perf_counter() - t0
        out["build_cpu_s"] = time.process_time() - c0  # both threads' CPU: the build on a busy machine
        print(f"{name}: saved in {out['build_s']:.0f} s ({out['build_cpu_s']:.0f} s CPU)", file=sys.stderr)
        graph_files = list(Path(tmp).glob("ann-*.usearch"))
        out["graph_disk_mb"] = graph_files[0].stat().st_size / 1e6 if graph_files else 0.0
        out["snapshot_disk_mb"] = path.stat().st_size / 1e6
        loaded = MemoryIndex.load(path)
        assert loaded is not None
        t0 = time.perf_counter()
        has_graph = loaded.ann is not None and loaded.ann.usable()
        out["graph_load_s"] = time.perf_counter() - t0
        out["graph_memory_mb"] = loaded.ann._graph.memory_usage / 1e6 if has_graph and loaded.ann else 0.0
        for label, filters in (("plain", plain), ("filtered", narrow)):
            truth, hits = [], []
            times: dict[str, list[float]] = {"exact": [], "graph": [], "exact_cpu": [], "graph_cpu": []}
            for q in queries:  # interleaved: exact, then the graph, query by query
                for kind in ("exact", "graph"):
                    t0, c0 = time.perf_counter(), time.process_time()
                    found = semantic_top(loaded, q, filters, graph=kind == "graph")
                    times[kind].append(time.perf_counter() - t0)
                    times[f"{kind}_cpu"].append(time.process_time() - c0)  # the CPU it took (a busy machine)
                    if kind == "exact":
                        truth.append(found)
                hits.append(len(set(found) & set(truth[-1])) / max(len(truth[-1]), 1))
            out[label] = {**{k: percentiles(v) for k, v in times.items()}, "recall_at_10": float(np.mean(hits))}
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


TARGET_SIZE = 1_000_000  # issue 31 sets the vector target at 1M memories


def targets(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 31's row (1M: hybrid search's semantic side p50 <= 15 ms at recall@10 >= 0.95 of exact search), for
    bench/scale.py's summary: one pair of rows per run; a run under 1M shows its figures, judged only at 1M."""
    rows = []
    for r in runs:
        m = r["plain"]
        p50, cpu, recall = m["graph"]["p50_ms"], m["graph_cpu"]["p50_ms"], m["recall_at_10"]
        judged = r["n"] >= TARGET_SIZE
        why_time = (f"usearch HNSW search plus the exact rescoring of {2 * DEPTH}+ candidates and the filters "
                    f"(CPU p50 {cpu:.2f} ms: the rest is waiting for a core)")
        why_recall = f"the int8 graph's candidates miss exact search's top 10 (expansion_search {ann.EXPANSION_SEARCH})"
        suffix = "" if judged else " (judged at 1M)"
        rows.append(target_row(f"{r['name']} vectors: graph search p50{suffix}", p50 if judged else None, 15,
                               unit=" ms", why=why_time, label=None if judged else f"{p50:.2f} ms"))
        rows.append(target_row(f"{r['name']} vectors: recall@10 of exact{suffix}", recall if judged else None, 0.95,
                               spec=".3f", at_least=True, why=why_recall, label=None if judged else f"{recall:.3f}"))
    if not any(r["n"] >= TARGET_SIZE and r["name"].startswith("synthetic") for r in runs):
        rows.append(target_row("1M vectors: graph search p50 at recall@10 >= 0.95", None, 15, unit=" ms",
                               label="not measured (python bench/vectors.py --sizes 1000000)"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="synthetic sizes, comma-separated")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--real", type=int, default=0, help="also this many real embedded turns (0: none)")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "cortex-bench-vectors.npz"))
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    ann.MIN_VECTORS = 0  # every size gets its graph here: the threshold is what this measures
    runs = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        rows, queries = clustered(size, args.queries)
        runs.append(measure(f"synthetic {size // 1000}k", rows, queries))
        print(json.dumps(runs[-1]), file=sys.stderr)
    if args.real:
        rows, queries = real(args.real, Path(args.cache))
        runs.append(measure(f"MiniLM {len(rows) // 1000}k", rows, queries[: args.queries]))
    table = []
    for r in runs:
        for label in ("plain", "filtered"):
            m = r[label]
            table.append((r["name"], label, f"{m['exact']['p50_ms']:.2f} / {m['exact']['p99_ms']:.2f}",
                          f"{m['graph']['p50_ms']:.2f} / {m['graph']['p99_ms']:.2f}",
                          f"{m['exact_cpu']['p50_ms']:.2f} / {m['graph_cpu']['p50_ms']:.2f}", f"{m['recall_at_10']:.3f}",
                          f"{r['build_s']:.1f}", f"{r['graph_memory_mb']:.0f}", f"{r['graph_disk_mb']:.0f}",
                          f"{r['vectors_mb']:.0f}"))
    print_table("Semantic side of search: exact vs vector graph (best 100, top 10 compared)", table,
                ("data", "filter", "exact p50/p99 ms", "graph p50/p99 ms", "CPU p50 exact/graph", "recall@10", "build s", "graph MB",
                 "graph disk MB", "f32 rows MB"))
    target = write_json("vectors", {"graph": {"library": "usearch", "dtype": ann.DTYPE, "connectivity": ann.CONNECTIVITY,
                                              "expansion_add": ann.EXPANSION_ADD,
                                              "expansion_search": ann.EXPANSION_SEARCH, "depth": DEPTH},
                                    "runs": runs, "targets": targets(runs)}, Path(args.json) if args.json else None)
    print(f"\nwrote {target}")


if __name__ == "__main__":
    main()
