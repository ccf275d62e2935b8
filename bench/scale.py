"""Scale benchmark: issue 31's whole table at 10k, 100k and 1M memories of one agent (10-30 word memories,
Zipf-distributed vocabulary, embeddings off), beside the limits numpy reaches on the same data in the same run.

    python bench/scale.py                          # 10k, 100k, 1M (~25-40 min on 2 cores)
    python bench/scale.py --sizes 100000           # one size
    python bench/scale.py --quick                  # 2k and 10k, few queries: a smoke check
    python bench/scale.py --store virtuoso --sizes 100000 --skip vectors   # through a private Virtuoso server
    python bench/scale.py --sizes 1000000 --profile   # + cProfile of each operation whose target is missed
    python bench/scale.py --store 'sparql+http://host:7878/query?update=/update'   # any endpoint (data wiped!)
    PYTHONPATH=<older checkout> python bench/scale.py --json old.json   # the same run on an older Cortex

Per size, each phase runs in a new process, so its peak RSS is its own:

- load: ``store_many`` in batches of --batch (rate), peak RSS while loading; then the store is closed and its
  directory (store + derived indexes; ``state_dir`` when separate) measured on disk, per memory;
- query: AND-token recall and bm25 search with 1, 2 and 3 tokens taken from stored memories (so Zipf-frequent
  tokens dominate, as in bench/core.py), p50/p99, and the peak RSS of the querying process;
- cold: a new process imports Cortex, opens the store and runs one recall (median of 3);
- baselines, in this process: the same queries as a numpy set intersection over sorted int32 exact-word posting
  arrays (``np.intersect1d`` and a ``searchsorted`` probe of the shortest list; the faster counts), and an exact
  brute-force vector search (one matmul over N x 384 float32 unit vectors, synthetic, top 10).

Ratios to the baselines are what carry from machine to machine. The summary table puts the issue's targets beside
the figures, with the rows other benchmarks measure (bench/startup.py, bench/vectors.py, bench/concurrency.py,
bench/install.py) taken from their JSON in bench/results/ when present: a file there may hold a ``targets`` list of
``{"row": str, "now": str, "target": str, "met": bool | null, "by": str, "why": str}`` (``_common.target_row``), printed
as given. Every missed target says by how much (``2.4x over``: the figure over its limit; ``3.1x under``: a rate
under its floor) and why, one line: the known cause, and with --profile the top self-time functions of the
operation run under cProfile in a new process (load: 2 more batches; recall, bm25: 30 queries per token count;
cold: the open and first recall), whose top functions by cumulative and self time are printed and written under
each size's ``profiles``. A run through a SPARQL server is judged against the same targets (set for the embedded
store), its why naming the round trips. Sections can be left out with
--skip (load, query, cold, baselines, vectors, external); without load, --keep DIR reuses stores of an earlier run.
Prints the tables and writes bench/results/scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from _common import RESULTS, make_vocabulary, percentiles, print_table, target_row, write_json  # noqa: E402

AGENT = "bench"
SEED = 31
SAMPLE = 4000  # stored contents kept to draw queries from
DIM = 384
#: Rows other benchmarks measure: their result files (bench/results/<name>.json) and what they measure.
EXTERNAL = {
    "vectors": "1M: hybrid search with embeddings, ANN",
    "startup": "SubagentStart hook / `cortex search` as a new process",
    "concurrency": "recall / hook latency while a 20k import runs",
    "install": "default install: time and venv size",
}
#: The issue's targets this benchmark measures: (row, size, keys into a size's results, limit, format, unit,
#: at least?, the operation --profile runs for it or None, why it is missed: the known cause, one line).
TARGETS: list[tuple[str, int, tuple[str, ...], float, str, str, bool, str | None, str]] = [
    ("100k AND recall p50", 100_000, ("query", "recall", "p50_ms"), 0.3, ".3f", " ms", False, "recall",
     "Python around the intersection: token lookup, candidate counting, ranking, loading the hits"),
    ("100k AND recall p99", 100_000, ("query", "recall", "p99_ms"), 2, ".2f", " ms", False, "recall",
     "frequent tokens: long posting lists counted and ranked"),
    ("1M store_many", 1_000_000, ("load", "store_many_per_s"), 8000, ".0f", "/s", True, "load",
     "index add ~1/2 of the writer, quads built in Python ~1/5; RocksDB compaction competes for the 2 cores"),
    ("1M disk per memory", 1_000_000, ("disk", "per_memory_kb"), 1.5, ".2f", " KB", False, None,
     "11 quads per memory, each in oxigraph's 6 indexes (~300 B a quad) whatever the text"),
    ("1M RSS while loading", 1_000_000, ("load", "peak_rss_mb"), 1000, ".0f", " MB", False, None,
     "contents, postings and a Python string per id held in memory, plus the write batch"),
    ("1M RSS while querying", 1_000_000, ("query", "peak_rss_mb"), 500, ".0f", " MB", False, None,
     "each memory's content and postings, and a Python string per id in the id-to-document map"),
    ("1M cold open + first recall", 1_000_000, ("cold", "open_first_recall_s"), 0.5, ".2f", " s", False, "cold",
     "the index snapshot read and checked, the store's count check, the id map built"),
    ("1M AND recall p50", 1_000_000, ("query", "recall", "p50_ms"), 2, ".2f", " ms", False, "recall",
     "Python around the intersection: token lookup, candidate counting, ranking, loading the hits"),
    ("1M AND recall p99", 1_000_000, ("query", "recall", "p99_ms"), 15, ".1f", " ms", False, "recall",
     "frequent tokens: long posting lists counted and ranked"),
    ("1M bm25 search p50", 1_000_000, ("query", "bm25", "p50_ms"), 4, ".2f", " ms", False, "bm25",
     "every posting of every query token scored, then ranked"),
    ("1M bm25 search p99", 1_000_000, ("query", "bm25", "p99_ms"), 20, ".1f", " ms", False, "bm25",
     "frequent tokens: every one of their postings scored"),
]
#: Why a remote store misses what it misses (the targets are set for the embedded store).
REMOTE_WHY = {"recall": "through a SPARQL server: round trips per call (change-log check, the hits' contents, "
                        "the touch)",
              "bm25": "through a SPARQL server: round trips per call (change-log check, the hits' contents)",
              "cold": "through a SPARQL server: the open re-reads over HTTP every memory of the log's last 64 "
                      "changes (the snapshot does not record which of them it holds)",
              "load": "through a SPARQL server: every batch is sent over HTTP (Graph Store Protocol)"}


# -- the data --------------------------------------------------------------------------------------------------


class Stream:
    """Deterministic memories, batch by batch: 10-30 words each, drawn from a Zipf-like vocabulary (real technical
    words first, then synthetic identifiers). Batch ``b`` depends on (seed, b) alone, so the word ids of every
    memory can be drawn again without building the strings (the baselines' postings)."""

    def __init__(self, seed: int = SEED) -> None:
        self.seed = seed
        self.words = make_vocabulary(seed)
        ranks = np.arange(1, len(self.words) + 1)
        weights = 1.0 / ranks**1.05
        self.p = weights / weights.sum()

    def picks(self, batch: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(lengths, word ids) of the ``n`` memories of batch ``batch``."""
        rng = np.random.default_rng((self.seed, batch))
        lengths = rng.integers(10, 31, size=n)
        return lengths, rng.choice(len(self.words), size=int(lengths.sum()), p=self.p).astype(np.int32)

    def contents(self, batch: int, n: int) -> list[str]:
        lengths, picks = self.picks(batch, n)
        out, pos = [], 0
        for length in lengths:
            words = [self.words[i] for i in picks[pos : pos + length]]
            pos += int(length)
            words[0] = words[0].capitalize()
            out.append(" ".join(words) + ".")
        return out

    def batches(self, total: int, size: int) -> Iterator[tuple[int, int]]:
        for b, start in enumerate(range(0, total, size)):
            yield b, min(size, total - start)


# -- measuring helpers ------------------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """This process's peak resident set size (ru_maxrss, KiB on Linux), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """This process's current resident set size, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk_bytes(*paths: Path) -> tuple[int, int]:
    """(allocated, apparent) bytes of the files under ``paths``."""
    allocated = apparent = 0
    for root in paths:
        for dirpath, _, files in os.walk(root):
            for name in files:
                st = os.lstat(os.path.join(dirpath, name))
                allocated += st.st_blocks * 512
                apparent += st.st_size
    return allocated, apparent


def open_cortex(location: str, state: str | None) -> Any:
    from cortex import Cortex

    cx = Cortex.open(location, embeddings=None, state_dir=state, client=False)
    cx.agents.register(AGENT)
    return cx


# -- the worker processes ---------------------------------------------------------------------------------------


def work_load(args: argparse.Namespace) -> dict[str, Any]:
    """Store ``args.n`` memories; keep a sample of them for the queries (``args.sample_file``)."""
    stream = Stream()
    cx = open_cortex(args.location, args.state)
    rng = random.Random(SEED)
    sample: list[str] = []
    spent, done, t_start = 0.0, 0, time.perf_counter()
    rss_samples = []
    for b, n in stream.batches(args.n, args.batch):
        entries = [{"content": c} for c in stream.contents(b, n)]
        t0 = time.perf_counter()
        cx.store_many(AGENT, entries)
        spent += time.perf_counter() - t0
        done += n
        sample += rng.sample([e["content"] for e in entries], max(1, min(n, SAMPLE * n // args.n)))
        rss_samples.append(rss_mb())
        if b % 20 == 19:
            print(f"  loaded {done}/{args.n} ({done / spent:.0f}/s, rss {rss_samples[-1]:.0f} MB)", file=sys.stderr)
    t0 = time.perf_counter()
    cx.close()
    close_s = time.perf_counter() - t0
    Path(args.sample_file).write_text(json.dumps(sample))
    return {"memories": args.n, "store_many_s": spent, "store_many_per_s": args.n / spent, "close_s": close_s,
            "wall_per_s": args.n / (time.perf_counter() - t_start), "peak_rss_mb": peak_rss_mb(),
            "rss_end_mb": rss_samples[-1] if rss_samples else None}


def work_query(args: argparse.Namespace) -> dict[str, Any]:
    """Recall and bm25 latencies of the queries in ``args.queries_file``, and this process's peak RSS."""
    queries: dict[str, list[str]] = json.loads(Path(args.queries_file).read_text())
    t0 = time.perf_counter()
    cx = open_cortex(args.location, args.state)
    cx.recall(AGENT, queries["1"][0])
    out: dict[str, Any] = {"open_first_recall_s": time.perf_counter() - t0, "rss_after_open_mb": rss_mb()}
    for op in ("recall", "bm25"):
        every: list[float] = []
        for ntok, qs in queries.items():
            samples = []
            for q in qs:
                t = time.perf_counter()
                if op == "recall":
                    cx.recall(AGENT, q)
                else:
                    cx.search(AGENT, q, mode="bm25")
                samples.append(time.perf_counter() - t)
            out[f"{op}_{ntok}tok"] = percentiles(samples)
            every += samples
        out[op] = percentiles(every)
    out["hits_sample"] = {q: len(cx.recall(AGENT, q, limit=10000)) for q in queries["2"][:5]}
    cx.close(flush=False)
    out["peak_rss_mb"] = peak_rss_mb()
    return out


PROFILE_LOAD_BATCHES = 2  # batches --profile stores beyond the size's memories (they stay in the store)
PROFILE_TOP = 15
PROFILE_QUERIES = 30  # queries per token count --profile runs (a profile needs fewer than the timings)


def _where(key: tuple[str, int, str]) -> str:
    """A profiled function, short: ``cortex/index/x.py:12(f)``, ``numpy/...``, or the builtin's own name."""
    filename, line, name = key
    if filename == "~" or not filename:
        return name
    path = Path(filename)
    parts = path.parts
    for anchor in ("cortex", "site-packages", "lib"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            rel = "/".join(parts[i + 1:] if anchor != "cortex" else parts[i:])
            return f"{rel}:{line}({name})"
    return f"{path.name}:{line}({name})"


def summarize_profile(profile: Any, op: str, calls: int) -> dict[str, Any]:
    """The top functions of a cProfile run by cumulative and by self time, with their share of the total."""
    import pstats

    table = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(tt for _, _, tt, _, _ in table.values()) or 1e-12

    def row(key: Any, value: Any) -> dict[str, Any]:
        _, ncalls, tt, ct, _ = value
        return {"function": _where(key), "calls": ncalls, "self_s": tt, "cumulative_s": ct,
                "self_pct": 100 * tt / total, "cumulative_pct": 100 * ct / total}

    ranked = sorted(table.items(), key=lambda kv: -kv[1][3])
    own = [kv for kv in ranked if "_lsprof" not in kv[0][2]]  # not the profiler's own enable/disable
    by_cum = [row(k, v) for k, v in own[:PROFILE_TOP]]
    by_self = [row(k, v) for k, v in sorted(own, key=lambda kv: -kv[1][2])[:PROFILE_TOP]]
    return {"op": op, "total_s": total, "per_call_ms": 1000 * total / max(calls, 1), "calls": calls,
            "by_cumulative": by_cum, "by_self": by_self}


def work_profile(args: argparse.Namespace) -> dict[str, Any]:
    """One operation under cProfile, in this new process: ``load`` (PROFILE_LOAD_BATCHES more batches of new
    memories into the store), ``recall`` or ``bm25`` (the first PROFILE_QUERIES queries of each token count, after
    one warm-up recall) or ``cold`` (open the store and the first recall; the imports are done before)."""
    import cProfile

    profile = cProfile.Profile()
    op = args.op
    if op == "cold":
        queries = json.loads(Path(args.queries_file).read_text())
        from cortex import Cortex  # noqa: F401  (the imports are not the open's)

        profile.enable()
        cx = open_cortex(args.location, args.state)
        cx.recall(AGENT, queries["2"][0])
        profile.disable()
        cx.close(flush=False)
        return summarize_profile(profile, op, 1)
    cx = open_cortex(args.location, args.state)
    calls = 0
    if op == "load":
        stream, first = Stream(), -(-args.n // args.batch)  # batches after the stored ones: new memories
        for b in range(first, first + PROFILE_LOAD_BATCHES):
            entries = [{"content": c} for c in stream.contents(b, args.batch)]
            profile.enable()
            cx.store_many(AGENT, entries)
            profile.disable()
            calls += 1
        cx.close()
        return summarize_profile(profile, op, calls)
    queries = json.loads(Path(args.queries_file).read_text())
    cx.recall(AGENT, queries["1"][0])
    for qs in queries.values():
        for q in qs[:PROFILE_QUERIES]:
            profile.enable()
            if op == "recall":
                cx.recall(AGENT, q)
            else:
                cx.search(AGENT, q, mode="bm25")
            profile.disable()
            calls += 1
    cx.close(flush=False)
    return summarize_profile(profile, op, calls)


COLD = """
import json, sys, time
t0 = time.perf_counter()
from cortex import Cortex
t1 = time.perf_counter()
cx = Cortex.open(sys.argv[1], embeddings=None, state_dir=sys.argv[2] or None, client=False)
cx.agents.register(sys.argv[3])
hits = cx.recall(sys.argv[3], sys.argv[4])
t2 = time.perf_counter()
cx.close(flush=False)
print(json.dumps({"import_s": t1 - t0, "open_first_recall_s": t2 - t1, "hits": len(hits)}))
"""


def run_worker(kind: str, **options: Any) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", kind]
    for key, value in options.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- the baselines ------------------------------------------------------------------------------------------------


def postings(stream: Stream, n: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, doc ids): the sorted int32 exact-word posting list of every word, over the first ``n`` memories."""
    keys = []
    first = 0
    for b, size in stream.batches(n, batch):
        lengths, picks = stream.picks(b, size)
        docs = np.repeat(np.arange(first, first + size, dtype=np.int64), lengths)
        keys.append(np.unique(picks.astype(np.int64) * (n + 1) + docs))
        first += size
    key = np.sort(np.concatenate(keys))
    words, docs = key // (n + 1), (key % (n + 1)).astype(np.int32)
    offsets = np.searchsorted(words, np.arange(len(stream.words) + 1))
    return offsets, docs


def intersect(lists: list[np.ndarray], how: str) -> np.ndarray:
    lists = sorted(lists, key=len)
    result = lists[0]
    for other in lists[1:]:
        if how == "intersect1d":
            result = np.intersect1d(result, other, assume_unique=True)
        else:  # probe each of the shortest list's ids in the longer sorted list
            pos = np.searchsorted(other, result)
            pos[pos == len(other)] = 0
            result = result[other[pos] == result]
    return result


def set_baseline(stream: Stream, n: int, batch: int, queries: dict[str, list[str]]) -> dict[str, Any]:
    t0 = time.perf_counter()
    offsets, docs = postings(stream, n, batch)
    index = {w: i for i, w in enumerate(stream.words)}
    out: dict[str, Any] = {"build_s": time.perf_counter() - t0}
    for how in ("intersect1d", "searchsorted"):
        every = []
        for qs in queries.values():
            for q in qs:
                lists = [docs[offsets[index[t]]:offsets[index[t] + 1]] for t in q.split()]
                t = time.perf_counter()
                intersect(lists, how)
                every.append(time.perf_counter() - t)
        out[how] = percentiles(every)
    best = min(("intersect1d", "searchsorted"), key=lambda h: out[h]["p50_ms"])
    out["best"] = best
    out["p50_ms"], out["p99_ms"] = out[best]["p50_ms"], out[best]["p99_ms"]
    return out


def vector_baseline(n: int, count: int) -> dict[str, Any]:
    """Exact top-10 by cosine over ``n`` synthetic unit vectors: one matmul and an argpartition per query."""
    rng = np.random.default_rng(SEED)
    matrix = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - start), DIM), dtype=np.float32)
        matrix[start:start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    samples = []
    for _ in range(count):
        q = rng.standard_normal(DIM, dtype=np.float32)
        q /= np.linalg.norm(q)
        t = time.perf_counter()
        scores = matrix @ q
        top = np.argpartition(-scores, 10)[:10]
        top[np.argsort(-scores[top])]
        samples.append(time.perf_counter() - t)
    return percentiles(samples)


# -- one size -------------------------------------------------------------------------------------------------------


def make_queries(contents: list[str], count: int, seed: int) -> dict[str, list[str]]:
    from core import make_queries as core_queries  # bench/core.py's: random words of random stored memories

    rng = random.Random(seed)
    return {str(ntok): core_queries(contents, ntok, count, rng) for ntok in (1, 2, 3)}


def _value(result: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    node: Any = result
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return float(node)


def profiled_ops(n: int, result: dict[str, Any], wanted: str | None) -> set[str]:
    """The operations --profile runs at size ``n``: ``missed`` (those of the targets set at ``n`` this run
    missed), ``all`` (every one), or a comma-separated list of load, recall, bm25, cold."""
    if not wanted:
        return set()
    if wanted == "all":
        return {"load", "recall", "bm25", "cold"}
    if wanted != "missed":
        return {op.strip() for op in wanted.split(",") if op.strip()}
    ops = set()
    for _, size, keys, limit, _, _, at_least, op, _ in TARGETS:
        now = _value(result, keys)
        if op and size == n and now is not None and (now < limit if at_least else now > limit):
            ops.add(op)
    return ops


def measure_size(n: int, args: argparse.Namespace, work: Path, server: Any) -> dict[str, Any]:
    remote = server is not None
    location = server.url if remote else str(work / f"store-{n}")
    state = str(work / f"state-{n}") if remote else ""
    sample_file = work / f"sample-{n}.json"
    result: dict[str, Any] = {"memories": n}
    if "load" not in args.skip:
        if remote:
            server.clear()
            shutil.rmtree(state, ignore_errors=True)
        else:
            shutil.rmtree(location, ignore_errors=True)
        print(f"loading {n} memories ...", file=sys.stderr)
        result["load"] = run_worker("load", location=location, state=state, n=n, batch=args.batch,
                                    sample_file=sample_file)
        if not remote:
            allocated, apparent = disk_bytes(Path(location))
            result["disk"] = {"bytes": allocated, "apparent_bytes": apparent, "per_memory_kb": allocated / n / 1000,
                              "apparent_per_memory_kb": apparent / n / 1000}
        elif state:
            allocated, _ = disk_bytes(Path(state))
            result["disk"] = {"state_bytes": allocated, "state_per_memory_kb": allocated / n / 1000}
    if not sample_file.exists():
        print(f"  no stored sample for {n} (run without --skip load)", file=sys.stderr)
        return result
    queries = make_queries(json.loads(sample_file.read_text()), args.queries, n)
    queries_file = work / f"queries-{n}.json"
    queries_file.write_text(json.dumps(queries))
    if "query" not in args.skip:
        print(f"querying {n} ...", file=sys.stderr)
        result["query"] = run_worker("query", location=location, state=state, queries_file=queries_file)
    if "cold" not in args.skip:
        colds = []
        for _ in range(3):
            done = subprocess.run([sys.executable, "-c", COLD, location, state, AGENT, queries["2"][0]],
                                  capture_output=True, text=True, check=True)
            colds.append(json.loads(done.stdout))
        colds.sort(key=lambda c: c["open_first_recall_s"])
        result["cold"] = colds[1]
    if "baselines" not in args.skip:
        print(f"set-intersection baseline at {n} ...", file=sys.stderr)
        result["set_baseline"] = set_baseline(Stream(), n, args.batch, queries)
    if "vectors" not in args.skip:
        print(f"exact vector baseline at {n} ...", file=sys.stderr)
        result["vector_baseline"] = vector_baseline(n, args.vector_queries)
    ops = profiled_ops(n, result, args.profile)
    if ops:
        result["profiles"] = {}
        for op in sorted(ops, key=lambda o: o == "load"):  # load last: it adds memories to the store
            print(f"profiling {op} at {n} ...", file=sys.stderr)
            result["profiles"][op] = run_worker("profile", op=op, location=location, state=state, n=n,
                                                batch=args.batch, queries_file=queries_file)
    if "query" in result and "set_baseline" in result:
        base = result["set_baseline"]
        result["recall_ratio"] = {"p50": result["query"]["recall"]["p50_ms"] / base["p50_ms"],
                                  "p99": result["query"]["recall"]["p99_ms"] / base["p99_ms"]}
    return result


# -- the tables --------------------------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def size_rows(results: dict[str, Any]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for size, r in results["sizes"].items():
        load, disk, query, cold = r.get("load"), r.get("disk"), r.get("query"), r.get("cold")
        base, vec = r.get("set_baseline"), r.get("vector_baseline")
        if load:
            rows.append((size, "store_many", f"{load['store_many_per_s']:.0f}/s",
                         f"{load['wall_per_s']:.0f}/s with close (close {load['close_s']:.1f} s)"))
            rows.append((size, "RSS while loading (peak)", f"{load['peak_rss_mb']:.0f} MB", ""))
        if disk and "per_memory_kb" in disk:
            rows.append((size, "disk per memory (store + indexes)", f"{disk['per_memory_kb']:.2f} KB",
                         f"apparent {disk['apparent_per_memory_kb']:.2f} KB"))
        if query:
            rows.append((size, "RSS while querying (peak)", f"{query['peak_rss_mb']:.0f} MB",
                         f"{query['rss_after_open_mb']:.0f} MB after open"))
            for op in ("recall", "bm25"):
                x = query[op]
                ratio = ""
                if op == "recall" and "recall_ratio" in r:
                    ratio = f"{r['recall_ratio']['p50']:.0f}x / {r['recall_ratio']['p99']:.0f}x numpy"
                rows.append((size, f"{'AND recall' if op == 'recall' else 'bm25 search'} p50 / p99 ms",
                             f"{x['p50_ms']:.3f} / {x['p99_ms']:.3f}", ratio))
                for ntok in (1, 2, 3):
                    y = query[f"{op}_{ntok}tok"]
                    rows.append((size, f"  {ntok} token(s)", f"{y['p50_ms']:.3f} / {y['p99_ms']:.3f}", ""))
        if base:
            rows.append((size, "numpy set intersection p50 / p99 ms", f"{base['p50_ms']:.3f} / {base['p99_ms']:.3f}",
                         base["best"]))
        if vec:
            rows.append((size, "exact vector search (numpy) p50 / p99 ms", f"{vec['p50_ms']:.2f} / {vec['p99_ms']:.2f}",
                         f"N x {DIM} float32"))
        if cold:
            rows.append((size, "cold open + first recall", f"{cold['open_first_recall_s']:.3f} s",
                         f"+ {cold['import_s']:.3f} s imports"))
    return rows


def profile_line(profile: dict[str, Any], top: int = 3) -> str:
    """A profile in one line: the functions taking the most self time, with their share."""
    return "profile: " + ", ".join(f"{r['function']} {r['self_pct']:.0f}%" for r in profile["by_self"][:top])


def target_list(results: dict[str, Any]) -> list[dict[str, Any]]:
    """This run's targets (:data:`TARGETS`) as :func:`_common.target_row` dicts: met or by how much missed, and
    why, backed by the operation's profile when --profile ran it."""
    remote = results.get("store", "embedded") != "embedded"
    out = []
    for row, size, keys, limit, spec, unit, at_least, op, why in TARGETS:
        result = results["sizes"].get(str(size), {})
        if remote and op in REMOTE_WHY:
            why = REMOTE_WHY[op]
        profile = result.get("profiles", {}).get(op) if op else None
        if profile:
            why = f"{why}; {profile_line(profile)}"
        elif op is None:
            why = f"{why} (a size, not a time: no profile)"
        out.append(target_row(row, _value(result, keys), limit, unit=unit, spec=spec, at_least=at_least, why=why))
    return out


def target_rows(results: dict[str, Any]) -> list[tuple[str, ...]]:
    """The issue's targets beside what this run (and the other benchmarks' files) measured: met, or by how much
    missed and why."""
    listed = target_list(results)
    for name, what in EXTERNAL.items():
        found = results.get("external", {}).get(name)
        if found is None:
            listed.append({"row": what, "now": f"(no bench/results/{name}.json: python bench/{name}.py)"})
            continue
        rows = found.get("targets") if isinstance(found, dict) else None
        listed += rows or [{"row": what, "now": f"see bench/results/{name}.json (no targets in it)"}]
    out = []
    for row in listed:
        met = row.get("met")
        out.append((str(row.get("row", "")), str(row.get("now", "")), str(row.get("target", "")),
                    "?" if met is None else ("yes" if met else "NO"), str(row.get("by", "")),
                    str(row.get("why", "")) if met is False else ""))
    return out


def print_profiles(results: dict[str, Any]) -> None:
    """The top functions of every profiled operation, by cumulative and by self time."""
    for size, result in results["sizes"].items():
        for op, profile in result.get("profiles", {}).items():
            for order, key in (("cumulative", "cumulative_s"), ("self", "self_s")):
                rows = [(r["function"], str(r["calls"]), f"{r[key] * 1000:.1f}", f"{r[order + '_pct']:.0f}%")
                        for r in profile[f"by_{order}"]]
                print_table(f"Profile of {op} at {size} ({profile['calls']} calls, {profile['per_call_ms']:.2f} ms a "
                            f"call under cProfile): top by {order} time", rows,
                            ("function", "calls", f"{order} ms", "share"))


def external_results(results_dir: Path, own: Path | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in EXTERNAL:
        path = results_dir / f"{name}.json"
        if path.exists() and path != own:
            try:
                found[name] = json.loads(path.read_text())
            except json.JSONDecodeError:
                found[name] = {"targets": [{"row": EXTERNAL[name], "now": f"unreadable {path.name}"}]}
    return found


# -- main --------------------------------------------------------------------------------------------------------


def start_store(store: str | None, work: Path) -> Any:
    """None (embedded stores in ``work``), or the :class:`tests.sparql_servers.Server` of --store."""
    if store is None:
        return None
    sys.path.insert(0, str(ROOT))
    from tests.sparql_servers import external_store, start_server

    return start_server(store, work) if store in ("oxigraph", "virtuoso") else external_store(store)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="memories of the one agent, per run")
    parser.add_argument("--batch", type=int, default=5000, help="store_many batch size")
    parser.add_argument("--queries", type=int, default=200, help="queries per token count (1, 2, 3)")
    parser.add_argument("--vector-queries", type=int, default=30, help="queries of the exact vector baseline")
    parser.add_argument("--quick", action="store_true", help="sizes 2000,10000 and 50 queries per token count")
    parser.add_argument("--json", type=Path, default=None, help="where to write the JSON (bench/results/scale.json; with --quick scale-quick.json)")
    parser.add_argument("--store", default=None, help="oxigraph, virtuoso (a private server started here) or a "
                                                      "sparql+http(s):// location (its data is wiped)")
    parser.add_argument("--skip", default="", help="comma-separated sections to leave out: load, query, cold, "
                                                   "baselines, vectors, external")
    parser.add_argument("--keep", type=Path, default=None, help="keep the stores in this directory (reused "
                                                                "with --skip load)")
    parser.add_argument("--profile", nargs="?", const="missed", default=None,
                        help="run operations under cProfile and print their top functions: 'missed' (the default: "
                             "each operation whose target at a measured size is missed), 'all', or a list of load, "
                             f"recall, bm25, cold. Profiling load stores {PROFILE_LOAD_BATCHES} more batches in the "
                             "store")
    # the worker processes' options
    parser.add_argument("--worker", choices=("load", "query", "profile"), help=argparse.SUPPRESS)
    parser.add_argument("--op", help=argparse.SUPPRESS)
    parser.add_argument("--location", help=argparse.SUPPRESS)
    parser.add_argument("--state", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sample-file", help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.queries, args.vector_queries = "2000,10000", 50, 10
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if args.profile not in (None, "missed", "all"):
        unknown = {op.strip() for op in args.profile.split(",")} - {"load", "recall", "bm25", "cold", ""}
        if unknown:
            parser.error(f"--profile: unknown operation(s) {', '.join(sorted(unknown))} (load, recall, bm25, cold)")
    if args.state == "":
        args.state = None
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    if args.worker:
        out = {"load": work_load, "query": work_query, "profile": work_profile}[args.worker](args)
        print(json.dumps(out))
        return out
    sizes = sorted(int(s) for s in args.sizes.split(","))
    import cortex

    results: dict[str, Any] = {"cortex": str(Path(cortex.__file__).parent.parent), "store": args.store or "embedded",
                               "params": {k: (sorted(v) if isinstance(v, set) else str(v) if isinstance(v, Path) else v)
                                          for k, v in vars(args).items() if k not in (
                                              "worker", "location", "state", "op", "n", "sample_file", "queries_file")},
                               "cpus": os.cpu_count(), "sizes": {}}
    temp = None if args.keep else tempfile.TemporaryDirectory(prefix="cortex-scale-")
    work = args.keep or Path(temp.name)  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    server = start_store(args.store, work)
    try:
        for n in sizes:
            results["sizes"][str(n)] = measure_size(n, args, work, server)
            print_table(f"Scale benchmark at {n} ({results['store']} store)", size_rows(
                {"sizes": {str(n): results["sizes"][str(n)]}}), ("memories", "measure", "value", "note"))
    finally:
        if server is not None and args.store in ("oxigraph", "virtuoso"):
            server.stop()
        if temp is not None:
            temp.cleanup()
    # a smoke run never overwrites the full run's results (the docs quote them)
    target = args.json or RESULTS / ("scale-quick.json" if args.quick else "scale.json")
    if "external" not in args.skip:
        results["external"] = external_results(RESULTS, target)
    print_table(f"Cortex at scale ({results['store']} store, embeddings off, {os.cpu_count()} CPUs)",
                size_rows(results), ("memories", "measure", "value", "note"))
    print_profiles(results)
    results["targets"] = target_list(results)
    print_table("Issue 31 targets" + ("" if results["store"] == "embedded" else
                                      f" (set for the embedded store; this run: {results['store']})"),
                target_rows(results), ("row", "now", "target", "met", "missed by", "why"))
    path = write_json("scale", results, target)
    print(f"\nresults written to {path}")
    return results


if __name__ == "__main__":
    main()
