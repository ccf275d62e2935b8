"""Retrieval benchmark on LoCoMo and LongMemEval through the public ``Cortex.search`` API, on an on-disk store.

    python bench/retrieval.py                      # data from ../shared/bench/data
    python bench/retrieval.py --data DIR --modes all,bm25 --skip-longmemeval

LoCoMo: one agent per conversation, each dialog turn one memory ``[{session date}] {speaker}: {text}``
(`` [photo: {caption}]`` appended when present); questions of categories 1-4; gold = evidence turn ids
(normalised with ``D:?(\\d+):(\\d+)``). LongMemEval (S subset): one agent per question, the user turns of
every haystack session as memories (session date as createdAt); ``_abs`` questions skipped; gold at session
level (answer sessions) and turn level (``has_answer`` turns). Recall@k = share of gold items in the top k;
NDCG@10 with binary gains. Reranking is off (the data is historical) unless ``--rerank``.
Prints a table and writes bench/results/retrieval.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import percentiles, print_table, write_json  # noqa: E402

from cortex import Cortex  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "data"
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def recall_at(ranked: list[str], gold: set[str], k: int) -> float:
    return len(gold & set(ranked[:k])) / len(gold) if gold else 0.0


def ndcg_at(ranked: list[str], gold: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in gold)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def _locomo_date(text: str) -> datetime:
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def run_locomo(cx: Cortex, path: Path, modes: list[str], rerank: bool) -> dict:
    data = json.loads(path.read_text())
    build = 0.0
    questions = []  # (agent, question, gold memory ids, category)
    for conv in data:
        agent = "locomo-" + conv["sample_id"].lower().replace("_", "-")
        cx.agents.register(agent)
        c = conv["conversation"]
        entries, dia_ids = [], []
        n = 1
        while f"session_{n}" in c:
            date_text = c[f"session_{n}_date_time"]
            for turn in c[f"session_{n}"]:
                text = f"[{date_text}] {turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [photo: {turn['blip_caption']}]"
                entries.append({"content": text, "created_at": _locomo_date(date_text)})
                dia_ids.append(turn["dia_id"])
            n += 1
        t0 = time.perf_counter()
        stored = cx.store_many(agent, entries)
        build += time.perf_counter() - t0
        by_dia = {d: m.id for d, m in zip(dia_ids, stored)}
        for qa in conv["qa"]:
            if qa["category"] == 5:
                continue
            gold = set()
            for ref in qa.get("evidence", []):
                for s, t in _EVIDENCE.findall(ref):
                    memory_id = by_dia.get(f"D{int(s)}:{int(t)}")
                    if memory_id:
                        gold.add(memory_id)
            if gold:
                questions.append((agent, qa["question"], gold, qa["category"]))
    results: dict = {"memories": sum(cx.count(a) for a in {q[0] for q in questions}), "questions": len(questions),
                     "build_s": build, "modes": {}}
    for mode in modes:
        per_cat: dict[int, list[tuple[float, float, float]]] = defaultdict(list)
        latencies = []
        empty = 0
        for agent, question, gold, cat in questions:
            t0 = time.perf_counter()
            result = cx.search(agent, question, mode=mode, limit=10, rerank=rerank)
            latencies.append(time.perf_counter() - t0)
            ranked = [h.memory.id for h in result]
            empty += not ranked
            per_cat[cat].append((recall_at(ranked, gold, 5), recall_at(ranked, gold, 10), ndcg_at(ranked, gold)))
        rows = [r for rs in per_cat.values() for r in rs]
        results["modes"][mode] = {
            "R@5": sum(r[0] for r in rows) / len(rows), "R@10": sum(r[1] for r in rows) / len(rows),
            "NDCG@10": sum(r[2] for r in rows) / len(rows), "empty_share": empty / len(rows),
            "latency": percentiles(latencies), "mode_used": result.mode, "note": result.note,
            "per_category": {str(c): {"n": len(rs), "R@10": sum(r[1] for r in rs) / len(rs),
                                      "NDCG@10": sum(r[2] for r in rs) / len(rs)} for c, rs in sorted(per_cat.items())},
        }
    return results


def _lme_date(text: str) -> datetime:
    return datetime.strptime(text.split(" (")[0] + " " + text.split(") ")[1], "%Y/%m/%d %H:%M").replace(
        tzinfo=timezone.utc)


def run_longmemeval(cx: Cortex, path: Path, modes: list[str], rerank: bool) -> dict:
    data = json.loads(path.read_text())
    build = 0.0
    questions = []  # (agent, question, gold sessions, gold turn ids, memory id -> session)
    for i, inst in enumerate(data):
        if inst["question_id"].endswith("_abs"):
            continue
        agent = f"lme-{i}"
        cx.agents.register(agent)
        entries, sessions, answer_turn = [], [], []
        for sid, date, session in zip(inst["haystack_session_ids"], inst["haystack_dates"], inst["haystack_sessions"]):
            for turn in session:
                if turn["role"] == "user" and turn["content"].strip():
                    entries.append({"content": turn["content"][:60_000], "created_at": _lme_date(date)})
                    sessions.append(sid)
                    answer_turn.append(bool(turn.get("has_answer")))
        t0 = time.perf_counter()
        stored = cx.store_many(agent, entries)
        build += time.perf_counter() - t0
        session_of = {m.id: s for m, s in zip(stored, sessions)}
        gold_turns = {m.id for m, a in zip(stored, answer_turn) if a}
        gold_sessions = set(inst["answer_session_ids"]) & set(sessions)
        questions.append((agent, inst["question"], gold_sessions, gold_turns, session_of))
    results: dict = {"questions": len(questions), "build_s": build, "modes": {}}
    for mode in modes:
        latencies, turn_rows, session_rows = [], [], []
        for agent, question, gold_sessions, gold_turns, session_of in questions:
            t0 = time.perf_counter()
            result = cx.search(agent, question, mode=mode, limit=50, rerank=rerank)
            latencies.append(time.perf_counter() - t0)
            ranked = [h.memory.id for h in result]
            ranked_sessions = list(dict.fromkeys(session_of[m] for m in ranked))
            if gold_turns:
                turn_rows.append((recall_at(ranked, gold_turns, 5), recall_at(ranked, gold_turns, 10),
                                  ndcg_at(ranked, gold_turns)))
            session_rows.append((recall_at(ranked_sessions, gold_sessions, 5),
                                 recall_at(ranked_sessions, gold_sessions, 10), ndcg_at(ranked_sessions, gold_sessions)))

        def avg(rows: list, j: int) -> float:
            return sum(r[j] for r in rows) / len(rows) if rows else 0.0

        results["modes"][mode] = {
            "turn": {"n": len(turn_rows), "R@5": avg(turn_rows, 0), "R@10": avg(turn_rows, 1),
                     "NDCG@10": avg(turn_rows, 2)},
            "session": {"n": len(session_rows), "R@5": avg(session_rows, 0), "R@10": avg(session_rows, 1),
                        "NDCG@10": avg(session_rows, 2)},
            "latency": percentiles(latencies),
        }
    return results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--modes", default="all,bm25,semantic,hybrid")
    parser.add_argument("--rerank", action="store_true", help="keep recency/usage/confidence reranking on")
    parser.add_argument("--skip-longmemeval", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    results: dict = {"rerank": args.rerank}
    with tempfile.TemporaryDirectory() as tmp, Cortex.open(Path(tmp) / "store") as cx:
        results["locomo"] = run_locomo(cx, args.data / "locomo10.json", modes, args.rerank)
        if not args.skip_longmemeval:
            results["longmemeval_s_subset"] = run_longmemeval(cx, args.data / "longmemeval_s_subset101.json",
                                                              modes, args.rerank)
    rows = []
    for mode, r in results["locomo"]["modes"].items():
        rows.append(("LoCoMo turns", mode, r["mode_used"], f"{r['R@5']:.3f}", f"{r['R@10']:.3f}",
                     f"{r['NDCG@10']:.3f}", f"{r['latency']['p50_ms']:.2f}", f"{r['latency']['p95_ms']:.2f}"))
    for mode, r in results.get("longmemeval_s_subset", {}).get("modes", {}).items():
        for level in ("turn", "session"):
            x = r[level]
            rows.append((f"LongMemEval-S {level}", mode, "", f"{x['R@5']:.3f}", f"{x['R@10']:.3f}",
                         f"{x['NDCG@10']:.3f}", f"{r['latency']['p50_ms']:.2f}", f"{r['latency']['p95_ms']:.2f}"))
    print_table(f"Retrieval (rerank {'on' if args.rerank else 'off'})", rows,
                ("data", "mode", "used", "R@5", "R@10", "NDCG@10", "p50 ms", "p95 ms"))
    for mode, r in results["locomo"]["modes"].items():
        cats = ", ".join(f"cat {c}: R@10 {v['R@10']:.3f}" for c, v in r["per_category"].items())
        print(f"LoCoMo {mode}: {cats}; empty results {r['empty_share']:.1%}")
    target = write_json("retrieval", results, args.json)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
