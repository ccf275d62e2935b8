"""The engine switch's merge and its cost, on LongMemEval, through the public ``Cortex.search`` API.

    python bench/providers.py                         # 30 questions, local (ONNX) embeddings, hybrid
    python bench/providers.py --questions 101 --embeddings none --mode bm25

Each question's haystack is one Cortex agent (bench/retrieval.py's loader: the user turns, turn-level gold = the
``has_answer`` turns). Two providers stand beside the store, as mem0 and OpenViking would: each holds the user
turns of *other* questions' haystacks (a pool of plausible distractors, none of them relevant) and answers a query
with its best token-overlap matches. So every relevant memory is Cortex's own, and the question is the one the issue
asks: does merging the providers' hits (``CORTEX_ENGINE=both``) push Cortex's own relevant hits out of the top
results? Figures: turn-level R@5 and R@10 of ``builtin`` and ``both`` on the same store, the share of the top 10
that the providers take, and search latency: ``builtin``, ``both`` (answering providers), and ``both`` with one
provider that hangs (time-out 0.5 s; the answer must come within the time-out plus 1 s). Prints a table and writes
bench/results/providers.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import percentiles, print_table, target_row, write_json  # noqa: E402
from retrieval import DEFAULT_DATA, load_longmemeval, recall_at  # noqa: E402

from cortex import Cortex  # noqa: E402
from cortex.providers.base import MemoryProvider, ProviderHit  # noqa: E402
from cortex.providers.engine import Engine, EngineSettings  # noqa: E402
from cortex.providers.guard import Guarded  # noqa: E402

_WORD = re.compile(r"[a-z0-9]+")
TIMEOUT = 0.5


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class PoolProvider(MemoryProvider):
    """A provider over a fixed pool of texts, ranked by BM25 over their tokens (what a vector store's top hits look
    like to a merge: plausible, scored, and here never relevant)."""

    def __init__(self, name: str, pool: list[str]) -> None:
        self.name = name
        self.pool = pool
        self.docs = [Counter(_tokens(t)) for t in pool]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(1, len(self.lengths))
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, d in enumerate(self.docs):
            for t in d:
                self.postings.setdefault(t, []).append(i)

    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        scores: Counter[int] = Counter()
        for t in set(_tokens(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.postings[t]:
                f = self.docs[i][t]
                scores[i] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lengths[i] / self.avg))
        return [ProviderHit(id=f"{self.name}-{i}", content=self.pool[i], score=s) for i, s in scores.most_common(limit)]


class Hanging(MemoryProvider):
    name = "hanging"

    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        time.sleep(3600)
        return []


def engine_of(kind: str, providers: list[MemoryProvider]) -> Engine:
    engine = Engine(EngineSettings("builtin"))
    engine.settings = EngineSettings(kind, tuple(p.name for p in providers), TIMEOUT)
    engine.providers = [Guarded(p, timeout=TIMEOUT, name=p.name) for p in providers]
    return engine


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--embeddings", default="local")
    parser.add_argument("--mode", default="hybrid")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    path = args.data / "longmemeval_s_subset101.json"
    data = json.loads(path.read_text())[: args.questions]
    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "subset.json"
        subset.write_text(json.dumps(data))
        with Cortex.open(Path(tmp) / "store", embeddings=args.embeddings, client=False) as cx:
            questions, build = load_longmemeval(cx, subset)
            texts_of = {agent: [m.content for m in cx.list_memories(agent, limit=1000).items]
                        for agent, *_ in questions}
            builtin = engine_of("builtin", [])

            def pool(skip: int, parity: int) -> list[str]:  # other questions' turns, split between the providers
                return [t for j, (agent, *_) in enumerate(questions) if j != skip and j % 2 == parity
                        for t in texts_of[agent]]

            rows: dict[str, list[tuple[float, float, float]]] = {"builtin": [], "both": []}
            latency: dict[str, list[float]] = {"builtin": [], "both": [], "both, one provider hangs": []}
            for j, (agent, question, _sessions, gold, _of) in enumerate(questions):
                if not gold:
                    continue
                both = engine_of("both", [PoolProvider("mem0", pool(j, 0)), PoolProvider("openviking", pool(j, 1))])
                hanging = engine_of("both", [both.providers[0].provider, Hanging()])
                for label, engine in (("builtin", builtin), ("both", both)):
                    cx.engine = engine
                    t0 = time.perf_counter()
                    result = cx.search(agent, question, mode=args.mode, limit=10, rerank=False)
                    latency[label].append(time.perf_counter() - t0)
                    ranked = [h.memory.id for h in result.hits]
                    foreign = sum(h.memory.origin != "cortex" for h in result.hits) / max(1, len(result.hits))
                    rows[label].append((recall_at(ranked, gold, 5), recall_at(ranked, gold, 10), foreign))
                cx.engine = hanging
                t0 = time.perf_counter()
                cx.search(agent, question, mode=args.mode, limit=10, rerank=False)
                latency["both, one provider hangs"].append(time.perf_counter() - t0)
            cx.engine = builtin

    def avg(label: str, i: int) -> float:
        return sum(r[i] for r in rows[label]) / max(1, len(rows[label]))

    n = len(rows["both"])
    kept5 = avg("both", 0) / avg("builtin", 0) if avg("builtin", 0) else 1.0
    kept10 = avg("both", 1) / avg("builtin", 1) if avg("builtin", 1) else 1.0
    lat = {k: percentiles(v) for k, v in latency.items()}
    print_table(f"Merge on LongMemEval ({n} questions, mode {args.mode}, embeddings {args.embeddings})",
                [(label, f"{avg(label, 0):.3f}", f"{avg(label, 1):.3f}", f"{avg(label, 2):.0%}",
                  f"{lat[label]['p50_ms']:.1f}", f"{lat[label]['p95_ms']:.1f}") for label in ("builtin", "both")]
                + [("both, one provider hangs", "", "", "", f"{lat['both, one provider hangs']['p50_ms']:.1f}",
                    f"{lat['both, one provider hangs']['p95_ms']:.1f}")],
                ("engine", "R@5 (turns)", "R@10 (turns)", "providers' share of top 10", "p50 ms", "p95 ms"))
    hang_max = max(latency["both, one provider hangs"]) if latency["both, one provider hangs"] else None
    targets = [
        target_row("both keeps Cortex's own R@5 (ratio to builtin)", kept5, 0.95, at_least=True, spec=".3f",
                   why="the providers' first hits rank among Cortex's top five"),
        target_row("both keeps Cortex's own R@10 (ratio to builtin)", kept10, 0.95, at_least=True, spec=".3f",
                   why="the providers' hits take slots that Cortex's relevant hits held"),
        target_row(f"a hanging provider: slowest search (s), time-out {TIMEOUT} s", hang_max, TIMEOUT + 1.0,
                   spec=".2f", unit=" s", why="the search waited past the time-out"),
    ]
    print_table("Targets", [(t["row"], t["now"], t["target"], "yes" if t["met"] else "NO", t["by"]) for t in targets],
                ("target", "now", "limit", "met", "by"))
    out = {"questions": n, "mode": args.mode, "embeddings": args.embeddings, "build_s": build,
           "recall": {label: {"R@5": avg(label, 0), "R@10": avg(label, 1), "provider_share_top10": avg(label, 2)}
                      for label in rows},
           "kept": {"R@5": kept5, "R@10": kept10}, "latency": lat, "targets": targets}
    print(f"results written to {write_json('providers', out, args.json)}")
    return out


if __name__ == "__main__":
    main()
