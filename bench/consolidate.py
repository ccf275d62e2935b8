"""Consolidation benchmark (docs/consolidation.md): merge precision and recall on labelled pairs, a run over 10k
memories (time and memory, against storing them in the same run), and the effect of consolidating on retrieval.

    python bench/consolidate.py                         # everything (LongMemEval part: 30 questions)
    python bench/consolidate.py --only pairs,scale      # sections: pairs, scale, retrieval
    python bench/consolidate.py --questions 101 --embeddings local

* pairs: ``bench/data/merge_pairs_dev.jsonl`` (the rules were looked at on it) and ``merge_pairs_heldout.jsonl``
  (written apart, never tuned on): each pair goes through the merge step itself (``find_clusters`` on the two
  memories); a merge of a ``duplicate: false`` pair is a false positive. Lexical rules, and with the local
  embedding model when installed.
* scale: 10,000 memories of one agent (synthetic, 10% planted near duplicates: the same text with filler words,
  case and punctuation changed), stored with ``store_many`` (the baseline), then one ``consolidate`` (no language
  model: merges; its time and the peak of Python allocations, tracemalloc), then ``--undo``.
* retrieval: LongMemEval-S questions (one agent each, the user turns of the haystack as memories), search before
  and after consolidating every agent; a merged memory counts as found when its survivor is (the same text).
  The change is paired per question, with its standard error: within noise when it is not below -2 SE.
Prints tables and writes bench/results/consolidate.json.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, print_table, write_json  # noqa: E402

from cortex import Cortex  # noqa: E402
from cortex.consolidation.duplicates import find_clusters  # noqa: E402
from cortex.validation import memory_from_entry  # noqa: E402

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench" / "data"


# -- pairs -----------------------------------------------------------------------------------------------------

def pairs(path: Path, vectors=None) -> dict:  # type: ignore[no-untyped-def]
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc)
    tp = fp = fn = tn = 0
    per_kind: dict[str, list[int]] = {}
    wrong: list[dict] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        pair = json.loads(line)
        memories = [memory_from_entry("bench", {"content": pair["a"]}, now),
                    memory_from_entry("bench", {"content": pair["b"]}, now)]
        clusters, _ = find_clusters(memories, vectors=vectors)
        merged = bool(clusters)
        truth = bool(pair["duplicate"])
        tp += merged and truth
        fp += merged and not truth
        fn += truth and not merged
        tn += not truth and not merged
        per_kind.setdefault(pair["kind"], [0, 0])
        per_kind[pair["kind"]][0] += merged == truth
        per_kind[pair["kind"]][1] += 1
        if merged != truth and len(wrong) < 12:
            wrong.append({"kind": pair["kind"], "merged": merged, "a": pair["a"], "b": pair["b"]})
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"pairs": tp + fp + fn + tn, "tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision,
            "recall": recall, "per_kind_correct": {k: f"{a}/{n}" for k, (a, n) in sorted(per_kind.items())},
            "wrong": wrong}


def run_pairs() -> dict:
    from cortex.embeddings import OnnxEmbeddings, local_available

    sets = {"dev": "merge_pairs_dev.jsonl", "heldout": "merge_pairs_heldout.jsonl", "fresh": "merge_pairs_fresh.jsonl",
            "fresh2": "merge_pairs_fresh2.jsonl"}
    out = {name: pairs(DATA / file) for name, file in sets.items()}
    if local_available():
        model = OnnxEmbeddings()
        embed = lambda texts: model.embed(texts)  # noqa: E731
        out.update({f"{name}_local": pairs(DATA / file, embed) for name, file in sets.items()})
    rows = [(name, str(r["pairs"]), str(r["tp"]), str(r["fp"]), str(r["fn"]), f"{r['precision']:.3f}",
             f"{r['recall']:.3f}") for name, r in out.items()]
    print_table("Merge precision/recall on labelled pairs (lexical; *_local: with all-MiniLM-L6-v2 int8)", rows,
                ("set", "pairs", "merged right", "merged wrong", "missed", "precision", "recall"))
    for name, r in out.items():
        print(f"{name}: correct by kind {r['per_kind_correct']}")
    return out


# -- scale -----------------------------------------------------------------------------------------------------

FILLERS = ("Always ", "Remember: ", "Note that ", "Make sure to ", "")


def variant(text: str, rng: random.Random) -> str:
    """The same learning written again: a filler word, other case, other final punctuation."""
    body = text.rstrip(".")
    start = rng.choice(FILLERS)
    if start:
        body = body[0].lower() + body[1:]
    if rng.random() < 0.5:
        body = body.upper() if rng.random() < 0.2 else body.lower()
    return start + body + rng.choice(("", ".", "!"))


def run_scale(n: int = 10_000, embeddings: str = "none") -> dict:
    rng = random.Random(11)
    base = Corpus(seed=5).contents(int(n * 0.9))
    planted = [variant(rng.choice(base), rng) for _ in range(n - len(base))]
    contents = base + planted
    rng.shuffle(contents)
    with tempfile.TemporaryDirectory() as tmp, Cortex.open(Path(tmp) / "store", embeddings=embeddings) as cx:
        cx.agents.register("bench")
        cx.llm = None
        t0 = time.perf_counter()
        for start in range(0, n, 1000):
            cx.store_many("bench", [{"content": c} for c in contents[start:start + 1000]])
        store_s = time.perf_counter() - t0
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        report = cx.consolidate("bench")
        run_s = time.perf_counter() - t0
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        merged = sum(len(m.merged) for m in report.merges)
        t0 = time.perf_counter()
        cx.undo_consolidation(report.run or "last")
        undo_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        dry = cx.consolidate("bench", dry_run=True)
        dry_s = time.perf_counter() - t0
        # the same planning again, under tracemalloc (which slows it several times: not timed)
        tracemalloc.start()
        cx.consolidate("bench", dry_run=True)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    result = {"memories": n, "planted": len(planted), "merged": merged, "clusters": len(report.merges),
              "store_many_s": store_s, "consolidate_s": run_s, "ratio_to_store": run_s / store_s,
              "peak_python_mb": peak / 2**20, "max_rss_mb_before": rss0 / 1024, "max_rss_mb_after": rss1 / 1024,
              "undo_s": undo_s, "dry_run_s": dry_s,
              "dry_run_merged": sum(len(m.merged) for m in dry.merges), "embeddings": embeddings}
    print_table(f"One consolidation run over {n} memories (embeddings {embeddings})", [
        ("store_many (baseline)", f"{store_s:.2f}", ""),
        ("consolidate", f"{run_s:.2f}", f"{run_s / store_s:.2f}x store"),
        ("undo", f"{undo_s:.2f}", ""),
        ("dry run (after undo)", f"{dry_s:.2f}", ""),
    ], ("step", "seconds", "ratio"))
    print(f"planted {len(planted)} near duplicates; merged {merged} in {len(report.merges)} clusters (at most "
          f"max_merges={cx.consolidation.max_merges} per run); peak Python allocations while planning "
          f"{peak / 2**20:.0f} MB; process max RSS {rss0 / 1024:.0f} MB before the run, {rss1 / 1024:.0f} MB after")
    return result


# -- retrieval -------------------------------------------------------------------------------------------------

def run_retrieval(questions: int, embeddings: str) -> dict:
    import retrieval

    data = json.loads((SHARED / "longmemeval_s_subset101.json").read_text())[:questions]
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "lme.json"
        sample.write_text(json.dumps(data))
        with Cortex.open(Path(tmp) / "store", embeddings=embeddings) as cx:
            cx.llm = None
            asked, build = retrieval.load_longmemeval(cx, sample)
            modes = ["bm25"] + (["hybrid"] if embeddings != "none" else [])

            def scores(aliases: dict[str, list[str]]) -> dict[str, list[float]]:
                out: dict[str, list[float]] = {}
                for mode in modes:
                    rows = []
                    for agent, question, gold_sessions, gold_turns, session_of in asked:
                        hits = cx.search(agent, question, mode=mode, limit=50, rerank=False).hits
                        ranked = [i for h in hits for i in aliases.get(h.memory.id, [h.memory.id])]
                        if gold_turns:
                            rows.append(retrieval.recall_at(ranked, gold_turns, 10))
                        sessions = list(dict.fromkeys(session_of[i] for i in ranked if i in session_of))
                        rows.append(retrieval.recall_at(sessions, gold_sessions, 10))
                    out[mode] = rows
                return out

            before = scores({})
            t0 = time.perf_counter()
            aliases: dict[str, list[str]] = {}
            merged = 0
            for agent, *_ in asked:
                report = cx.consolidate(agent)
                for merge in report.merges:
                    aliases[merge.survivor] = [merge.survivor, *merge.merged]
                    merged += len(merge.merged)
            run_s = time.perf_counter() - t0
            after = scores(aliases)
    result: dict = {"questions": len(asked), "memories": sum(len(q[4]) for q in asked), "merged": merged,
                    "consolidate_s": run_s, "embeddings": embeddings, "modes": {}}
    rows = []
    for mode in modes:
        b, a = before[mode], after[mode]
        diffs = [y - x for x, y in zip(b, a)]
        mean = sum(diffs) / len(diffs)
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1))
        se = sd / math.sqrt(len(diffs))
        within = mean >= -2 * se
        result["modes"][mode] = {"before_R@10": sum(b) / len(b), "after_R@10": sum(a) / len(a), "change": mean,
                                 "se": se, "within_noise": within}
        rows.append((mode, f"{sum(b) / len(b):.4f}", f"{sum(a) / len(a):.4f}", f"{mean:+.4f}", f"{se:.4f}",
                     "yes" if within else "NO"))
    print_table(f"Retrieval before/after consolidating {len(asked)} LongMemEval-S agents "
                f"({result['memories']} memories, {merged} merged; R@10 of turns and sessions)", rows,
                ("mode", "before", "after", "change", "SE", "within noise"))
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="pairs,scale,retrieval")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--embeddings", default="none", choices=["none", "local"],
                        help="the store's embeddings for scale and retrieval (pairs use the local model anyway)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    results: dict = {}
    if "pairs" in only:
        results["pairs"] = run_pairs()
    if "scale" in only:
        results["scale"] = run_scale(args.memories, args.embeddings)
    if "retrieval" in only:
        results["retrieval"] = run_retrieval(args.questions, args.embeddings)
    target = write_json("consolidate", results, args.json)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
