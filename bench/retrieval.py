"""Retrieval benchmark on LoCoMo and LongMemEval through the public ``Cortex.search`` API, on an on-disk store.

    python bench/retrieval.py                      # data from ../shared/bench/data, local (ONNX) embeddings
    python bench/retrieval.py --embeddings torch   # the same MiniLM, fp32 on torch (the torch extra)
    python bench/retrieval.py --data DIR --modes all,bm25 --skip-longmemeval --embeddings none
    python bench/retrieval.py --fusions linear:0.5,rrf:60,dbsf:0.5   # compare fusion methods

Modes are evaluated on the same store: ``hybrid`` with the default fusion, plus ``hybrid/<spec>`` for
every variant given with ``--fusions`` (``method:weight`` for linear and dbsf, ``rrf:k``).
``--latency`` adds one agent of 10,000 LongMemEval turns and measures bm25 and hybrid search latency on it.

LoCoMo: one agent per conversation, each dialog turn one memory ``[{session date}] {speaker}: {text}``
(`` [photo: {caption}]`` appended when present); questions of categories 1-4; gold = evidence turn ids
(normalised with ``D:?(\\d+):(\\d+)``). LongMemEval (S subset): one agent per question, the user turns of
every haystack session as memories (session date as createdAt); ``_abs`` questions skipped; gold at session
level (answer sessions) and turn level (``has_answer`` turns). Recall@k = share of gold items in the top k;
NDCG@10 with binary gains; MRR@10 = reciprocal rank of the first gold item. Reranking is off (the data is historical) unless ``--rerank``; with it, each
question is asked at its own moment (LongMemEval's question date, the last session of a LoCoMo conversation), so
recency and the per-source decay see the ages an agent would see, and ``--no-decay`` measures the same run
without the decay factor. Prints a table and writes bench/results/retrieval.json.
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
from datetime import datetime, timedelta, timezone
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import percentiles, print_table, write_json  # noqa: E402

from cortex import Cortex, Reranking  # noqa: E402
from cortex.search import Fusion  # noqa: E402


class Clock:
    """The benchmark's clock: set to the moment each question is asked."""

    def __init__(self) -> None:
        self.now = datetime.now(timezone.utc)

    def __call__(self) -> datetime:
        return self.now


CLOCK = Clock()
#: When each agent's questions are asked (set by the loaders).
ASKED_AT: dict[str, datetime] = {}

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "data"
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def recall_at(ranked: list[str], gold: set[str], k: int) -> float:
    return len(gold & set(ranked[:k])) / len(gold) if gold else 0.0


def ndcg_at(ranked: list[str], gold: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in gold)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def mrr_at(ranked: list[str], gold: set[str], k: int = 10) -> float:
    """Reciprocal rank of the first gold item in the top k (0 when none is there)."""
    return next((1 / (i + 1) for i, item in enumerate(ranked[:k]) if item in gold), 0.0)


def parse_fusion(spec: str) -> Fusion:
    """``gated:3/0.35`` (semantic weight / confidence spread), ``linear:0.5`` (lexical weight), ``dbsf:0.5``,
    ``rrf:60`` (k), ``floor:0.2`` (the default fusion with another relevance floor)."""
    method, _, value = spec.partition(":")
    if method == "gated":
        weight, _, spread = value.partition("/")
        return Fusion(semantic_weight=float(weight or 3.0), confidence_spread=float(spread or 0.35))
    if method == "rrf":
        return Fusion(method="rrf", rrf_k=int(value or 60))
    if method == "floor":
        return Fusion(min_similarity=float(value))
    return Fusion(method=method, lexical_weight=float(value or 0.5))


def variants(modes: list[str], fusions: list[str]) -> list[tuple[str, str, Fusion | None]]:
    """(label, mode, fusion) to evaluate; fusion None = the store's default."""
    out: list[tuple[str, str, Fusion | None]] = [(m, m, None) for m in modes]
    for mode in ("semantic", "hybrid"):
        if mode in modes:
            out += [(f"{mode}/{spec}", mode, parse_fusion(spec)) for spec in fusions
                    if mode == "hybrid" or spec.startswith("floor:")]
    return out


def search(cx: Cortex, fusion: Fusion | None, agent: str, query: str, mode: str, limit: int,
           rerank: Reranking | bool):
    default = cx.fusion
    cx.fusion = fusion or default
    CLOCK.now = ASKED_AT.get(agent, CLOCK.now)
    try:
        return cx.search(agent, query, mode=mode, limit=limit, rerank=rerank)
    finally:
        cx.fusion = default


def _locomo_date(text: str) -> datetime:
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def _locomo_sessions(conv: dict) -> Iterator[tuple[int, str, list[dict]]]:
    """(number, date text, turns) of each session of a LoCoMo conversation, in order."""
    c = conv["conversation"]
    n = 1
    while f"session_{n}" in c:
        yield n, c[f"session_{n}_date_time"], c[f"session_{n}"]
        n += 1


def _turn_text(turn: dict) -> str:
    """``{speaker}: {text}``, with `` [photo: {caption}]`` when the turn shared one."""
    text = f"{turn['speaker']}: {turn['text']}"
    return text + f" [photo: {turn['blip_caption']}]" if turn.get("blip_caption") else text


def load_locomo(cx: Cortex, path: Path) -> tuple[list[tuple[str, str, set[str], int]], float]:
    """Store every conversation (one agent each); the questions (agent, question, gold ids, category) and
    the time spent in ``store_many``."""
    data = json.loads(path.read_text())
    build = 0.0
    questions = []  # (agent, question, gold memory ids, category)
    for conv in data:
        agent = "locomo-" + conv["sample_id"].lower().replace("_", "-")
        cx.agents.register(agent)
        entries, dia_ids = [], []
        for _, date_text, turns in _locomo_sessions(conv):
            for turn in turns:
                entries.append({"content": f"[{date_text}] {_turn_text(turn)}", "created_at": _locomo_date(date_text)})
                dia_ids.append(turn["dia_id"])
        ASKED_AT[agent] = max(e["created_at"] for e in entries)  # questions come after the conversation
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
    return questions, build


def load_locomo_sessions(cx: Cortex, path: Path) -> tuple[list[tuple[str, str, set[str], int]], float]:
    """Long memories: every LoCoMo session stored whole as one memory (``[{date}]`` then one
    ``{speaker}: {text}`` line per turn, ~1,000-4,000 characters, longer than the model's 256 tokens); gold =
    the sessions holding a question's evidence. The questions and the time spent in ``store_many``."""
    data = json.loads(path.read_text())
    build, questions = 0.0, []
    for conv in data:
        agent = "locomo-sessions-" + conv["sample_id"].lower().replace("_", "-")
        cx.agents.register(agent)
        entries, numbers = [], []
        for n, date_text, turns in _locomo_sessions(conv):
            entries.append({"content": f"[{date_text}]\n" + "\n".join(_turn_text(t) for t in turns)[:60_000],
                            "created_at": _locomo_date(date_text)})
            numbers.append(n)
        ASKED_AT[agent] = max(e["created_at"] for e in entries)
        t0 = time.perf_counter()
        stored = cx.store_many(agent, entries)
        build += time.perf_counter() - t0
        by_number = {k: m.id for k, m in zip(numbers, stored)}
        for qa in conv["qa"]:
            if qa["category"] == 5:
                continue
            gold = {by_number[int(s)] for ref in qa.get("evidence", []) for s, _ in _EVIDENCE.findall(ref)
                    if int(s) in by_number}
            if gold:
                questions.append((agent, qa["question"], gold, qa["category"]))
    return questions, build


def load_longmemeval_sessions(cx: Cortex, path: Path) -> tuple[list[tuple[str, str, set[str], int]], float]:
    """Long memories: every LongMemEval-S haystack session's user turns stored as one memory (one line per
    turn, session date as createdAt; median ~1,100 characters, up to 60,000); gold = the answer sessions."""
    data = json.loads(path.read_text())
    build, questions = 0.0, []
    for i, inst in enumerate(data):
        if inst["question_id"].endswith("_abs"):
            continue
        agent = f"lme-sessions-{i}"
        cx.agents.register(agent)
        entries, ids = [], []
        for sid, date, session in zip(inst["haystack_session_ids"], inst["haystack_dates"], inst["haystack_sessions"]):
            text = "\n".join(t["content"].strip() for t in session if t["role"] == "user" and t["content"].strip())
            if text:
                entries.append({"content": text[:60_000], "created_at": _lme_date(date)})
                ids.append(sid)
        ASKED_AT[agent] = max(_lme_date(inst["question_date"]), max(e["created_at"] for e in entries))
        t0 = time.perf_counter()
        stored = cx.store_many(agent, entries)
        build += time.perf_counter() - t0
        by_session = {sid: m.id for sid, m in zip(ids, stored)}
        gold = {by_session[s] for s in inst["answer_session_ids"] if s in by_session}
        if gold:
            questions.append((agent, inst["question"], gold, 0))
    return questions, build


def evaluate(cx: Cortex, questions: list[tuple[str, str, set[str], int]], modes: list[tuple[str, str, Fusion | None]],
             rerank: Reranking | bool, memories: int, build: float) -> dict:
    """R@5, R@10, NDCG@10, MRR@10 and latency of each mode over ``questions`` (agent, question, gold ids, group)."""
    results: dict = {"memories": memories, "questions": len(questions), "build_s": build,
                     "store_per_s": memories / build if build else 0.0, "modes": {}}
    for label, mode, fusion in modes:
        rows, latencies = [], []
        for agent, question, gold, _ in questions:
            t0 = time.perf_counter()
            result = search(cx, fusion, agent, question, mode, 10, rerank)
            latencies.append(time.perf_counter() - t0)
            ranked = [h.memory.id for h in result]
            rows.append((recall_at(ranked, gold, 5), recall_at(ranked, gold, 10), ndcg_at(ranked, gold),
                         mrr_at(ranked, gold)))
        results["modes"][label] = {
            "R@5": sum(r[0] for r in rows) / len(rows), "R@10": sum(r[1] for r in rows) / len(rows),
            "NDCG@10": sum(r[2] for r in rows) / len(rows), "MRR@10": sum(r[3] for r in rows) / len(rows),
            "latency": percentiles(latencies), "mode_used": result.mode, "note": result.note}
    return results


def run_sessions(cx: Cortex, data: Path, modes: list[tuple[str, str, Fusion | None]], rerank: Reranking | bool,
                 skip_longmemeval: bool) -> dict:
    """Both datasets with whole sessions as memories."""
    out = {}
    loaders = [("locomo", load_locomo_sessions, data / "locomo10.json")]
    if not skip_longmemeval:
        loaders.append(("longmemeval_s_subset", load_longmemeval_sessions, data / "longmemeval_s_subset101.json"))
    for name, loader, path in loaders:
        questions, build = loader(cx, path)
        memories = sum(cx.count(a) for a in {q[0] for q in questions})
        out[name] = evaluate(cx, questions, modes, rerank, memories, build)
    return out


#: Questions no LoCoMo conversation is about: what a search returns for them is noise (relevance floor).
OFF_TOPIC = [
    "How do I configure the ingress controller of a Kubernetes cluster?",
    "Which PostgreSQL isolation level prevents phantom reads?",
    "What is the time complexity of inserting into a binary heap?",
    "How should the CI pipeline cache pip wheels between builds?",
    "Why does the TLS handshake fail with an unknown certificate authority?",
    "Explain the difference between a mutex and a semaphore",
    "What does the HTTP status code 409 mean for a REST API?",
    "How do I rebase a feature branch onto main without losing commits?",
]


def run_locomo(cx: Cortex, path: Path, modes: list[tuple[str, str, Fusion | None]], rerank: Reranking | bool) -> dict:
    questions, build = load_locomo(cx, path)
    memories = sum(cx.count(a) for a in {q[0] for q in questions})
    results: dict = {"memories": memories, "questions": len(questions), "build_s": build,
                     "store_per_s": memories / build, "modes": {}}
    for label, mode, fusion in modes:
        per_cat: dict[int, list[tuple[float, float, float, float]]] = defaultdict(list)
        latencies = []
        empty = hits = 0
        for agent, question, gold, cat in questions:
            t0 = time.perf_counter()
            result = search(cx, fusion, agent, question, mode, 10, rerank)
            latencies.append(time.perf_counter() - t0)
            ranked = [h.memory.id for h in result]
            empty += not ranked
            hits += len(ranked)
            per_cat[cat].append((recall_at(ranked, gold, 5), recall_at(ranked, gold, 10), ndcg_at(ranked, gold),
                                 mrr_at(ranked, gold)))
        rows = [r for rs in per_cat.values() for r in rs]
        agents = sorted({q[0] for q in questions})
        off_topic = [len(search(cx, fusion, agent, q, mode, 10, rerank).hits) for agent in agents for q in OFF_TOPIC]
        results["modes"][label] = {
            "R@5": sum(r[0] for r in rows) / len(rows), "R@10": sum(r[1] for r in rows) / len(rows),
            "NDCG@10": sum(r[2] for r in rows) / len(rows),
            "MRR@10": sum(r[3] for r in rows) / len(rows), "empty_share": empty / len(rows),
            "hits_per_question": hits / len(rows), "off_topic_hits": sum(off_topic) / len(off_topic),
            "latency": percentiles(latencies), "mode_used": result.mode, "note": result.note,
            "per_category": {str(c): {"n": len(rs), "R@10": sum(r[1] for r in rs) / len(rs),
                                      "NDCG@10": sum(r[2] for r in rs) / len(rs)} for c, rs in sorted(per_cat.items())},
        }
    return results


def _lme_date(text: str) -> datetime:
    return datetime.strptime(text.split(" (")[0] + " " + text.split(") ")[1], "%Y/%m/%d %H:%M").replace(
        tzinfo=timezone.utc)


def load_longmemeval(cx: Cortex, path: Path) -> tuple[list[tuple[str, str, set[str], set[str], dict[str, str]]], float]:
    """Store every question's haystack (one agent each); the questions (agent, question, gold sessions,
    gold turn ids, memory id -> session) and the time spent in ``store_many``."""
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
        ASKED_AT[agent] = max(_lme_date(inst["question_date"]), max(e["created_at"] for e in entries))
        t0 = time.perf_counter()
        stored = cx.store_many(agent, entries)
        build += time.perf_counter() - t0
        session_of = {m.id: s for m, s in zip(stored, sessions)}
        gold_turns = {m.id for m, a in zip(stored, answer_turn) if a}
        gold_sessions = set(inst["answer_session_ids"]) & set(sessions)
        questions.append((agent, inst["question"], gold_sessions, gold_turns, session_of))
    return questions, build


def run_longmemeval(cx: Cortex, path: Path, modes: list[tuple[str, str, Fusion | None]],
                    rerank: Reranking | bool) -> dict:
    questions, build = load_longmemeval(cx, path)
    memories = sum(len(q[4]) for q in questions)
    results: dict = {"questions": len(questions), "memories": memories, "build_s": build,
                     "store_per_s": memories / build, "modes": {}}
    for label, mode, fusion in modes:
        latencies, turn_rows, session_rows = [], [], []
        for agent, question, gold_sessions, gold_turns, session_of in questions:
            t0 = time.perf_counter()
            result = search(cx, fusion, agent, question, mode, 50, rerank)
            latencies.append(time.perf_counter() - t0)
            ranked = [h.memory.id for h in result]
            ranked_sessions = list(dict.fromkeys(session_of[m] for m in ranked))
            if gold_turns:
                turn_rows.append((recall_at(ranked, gold_turns, 5), recall_at(ranked, gold_turns, 10),
                                  ndcg_at(ranked, gold_turns), mrr_at(ranked, gold_turns)))
            session_rows.append((recall_at(ranked_sessions, gold_sessions, 5),
                                 recall_at(ranked_sessions, gold_sessions, 10), ndcg_at(ranked_sessions, gold_sessions),
                                 mrr_at(ranked_sessions, gold_sessions)))

        def avg(rows: list, j: int) -> float:
            return sum(r[j] for r in rows) / len(rows) if rows else 0.0

        results["modes"][label] = {
            "mode_used": result.mode,
            "turn": {"n": len(turn_rows), "R@5": avg(turn_rows, 0), "R@10": avg(turn_rows, 1),
                     "NDCG@10": avg(turn_rows, 2), "MRR@10": avg(turn_rows, 3)},
            "session": {"n": len(session_rows), "R@5": avg(session_rows, 0), "R@10": avg(session_rows, 1),
                        "NDCG@10": avg(session_rows, 2), "MRR@10": avg(session_rows, 3)},
            "latency": percentiles(latencies),
        }
    return results


CODING = Path(__file__).resolve().parent / "data" / "coding"


def load_coding(cx: Cortex, directory: Path) -> tuple[list[dict], dict[str, str]]:
    """The coding-agent set (bench/data/coding/README.md): one agent holds the project's memories, stored in
    the order they were written, each at its moment; a memory that ``supersedes`` another replaces it through
    :meth:`Cortex.supersede`. Returns the questions and the memory id of each key."""
    agent = "coding"
    cx.agents.register(agent)
    rows = [json.loads(line) for line in (directory / "memories.jsonl").read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: r["created_at"])
    ids: dict[str, str] = {}
    batch: list[dict] = []

    def flush() -> None:
        if batch:
            for row, memory in zip(batch, cx.store_many(agent, [
                    {"content": r["content"], "created_at": _iso(r["created_at"])} for r in batch])):
                ids[row["key"]] = memory.id
            batch.clear()

    for row in rows:
        if row.get("supersedes"):
            flush()
            CLOCK.now = _iso(row["created_at"])
            ids[row["key"]] = cx.supersede(agent, ids[row["supersedes"]], row["content"]).id
        else:
            batch.append(row)
    flush()
    ASKED_AT[agent] = _iso(rows[-1]["created_at"]) + timedelta(days=1)
    questions = [json.loads(line) for line in (directory / "questions.jsonl").read_text().splitlines() if line.strip()]
    return questions, ids


def _iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def run_coding(cx: Cortex, directory: Path, modes: list[tuple[str, str, Fusion | None]]) -> dict:
    """Each mode on the coding-agent set, with the product's defaults (reranking on, each question asked the
    day after the last memory): R@5 per kind, top-1 (the first hit is a gold memory) and outdated memories
    (superseded versions) in the top 10."""
    questions, ids = load_coding(cx, directory)
    results: dict = {"memories": cx.count("coding"), "questions": len(questions), "modes": {}}
    for label, mode, fusion in modes:
        per_kind: dict[str, list[tuple[float, float, int]]] = defaultdict(list)
        latencies = []
        for q in questions:
            gold = {ids[k] for k in q["gold"]}
            outdated = {ids[k] for k in q.get("outdated", [])}
            t0 = time.perf_counter()
            result = search(cx, fusion, "coding", q["question"], mode, 10, True)
            latencies.append(time.perf_counter() - t0)
            ranked = [h.memory.id for h in result]
            for kind in (q["kind"], "all", f"split:{q.get('split', 'dev')}"):
                per_kind[kind].append((recall_at(ranked, gold, 5), float(bool(ranked) and ranked[0] in gold),
                                       len(outdated & set(ranked[:10]))))
        results["modes"][label] = {
            "mode_used": result.mode, "latency": percentiles(latencies),
            "kinds": {k: {"n": len(v), "R@5": sum(r[0] for r in v) / len(v), "top1": sum(r[1] for r in v) / len(v),
                          "outdated_in_top10": sum(r[2] for r in v)} for k, v in sorted(per_kind.items())}}
    return results


def run_latency(cx: Cortex, path: Path, n: int = 10_000) -> dict:
    """bm25 and hybrid search latency (default settings, limit 10) on one agent of ``n`` memories."""
    data = json.loads(path.read_text())
    texts = list(dict.fromkeys(
        turn["content"][:60_000] for inst in data for session in inst["haystack_sessions"] for turn in session
        if turn["role"] == "user" and turn["content"].strip()))[:n]
    queries = [inst["question"] for inst in data if not inst["question_id"].endswith("_abs")]
    agent = "latency"
    cx.agents.register(agent)
    t0 = time.perf_counter()
    cx.store_many(agent, [{"content": t} for t in texts])
    build = time.perf_counter() - t0
    out: dict = {"memories": cx.count(agent), "build_s": build, "store_per_s": len(texts) / build, "modes": {}}
    for mode in ("bm25", "hybrid"):
        cx.search(agent, queries[0], mode=mode)  # warm-up
        latencies = []
        for q in queries * 3:
            t0 = time.perf_counter()
            result = cx.search(agent, q, mode=mode)
            latencies.append(time.perf_counter() - t0)
        out["modes"][mode] = {"mode_used": result.mode, "latency": percentiles(latencies)}
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--modes", default="all,bm25,semantic,hybrid")
    parser.add_argument("--fusions", default="", help="extra hybrid fusion variants, e.g. linear:0.3,rrf:60,dbsf:0.5")
    parser.add_argument("--embeddings", default="local", choices=["local", "torch", "none"],
                        help="local: the default int8 ONNX MiniLM; torch: the fp32 MiniLM on sentence-transformers")
    parser.add_argument("--rerank", action="store_true",
                        help="keep reranking on (recency, usage, confidence, decay), each question asked at its moment")
    parser.add_argument("--no-decay", action="store_true", help="with --rerank: without the per-source decay")
    parser.add_argument("--decay-floor", type=float, default=None,
                        help="with --rerank: the least weight decay gives (default: the library's)")
    parser.add_argument("--skip-longmemeval", action="store_true")
    parser.add_argument("--levels", default="turns,sessions,coding",
                        help="turns: one memory per turn; sessions: whole sessions as memories; coding: the "
                             "coding-agent set of bench/data/coding")
    parser.add_argument("--coding", type=Path, default=CODING, help="the coding-agent set's directory")
    parser.add_argument("--latency", action="store_true", help="also measure search latency at 10k memories")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    todo = variants(args.modes.split(","), [f for f in args.fusions.split(",") if f])
    floor = {"decay_floor": args.decay_floor} if args.decay_floor is not None else {}
    rerank: Reranking | bool = Reranking(decay=not args.no_decay, **floor) if args.rerank else False
    results: dict = {"rerank": args.rerank, "decay": args.rerank and not args.no_decay, "embeddings": args.embeddings,
                     "decay_floor": rerank.decay_floor if isinstance(rerank, Reranking) else None}
    with tempfile.TemporaryDirectory() as tmp, Cortex.open(Path(tmp) / "store", embeddings=args.embeddings,
                                                           clock=CLOCK) as cx:
        results["model"] = cx.embeddings.model if cx.embeddings else None
        results["default_fusion"] = vars(cx.fusion)
        levels = args.levels.split(",")
        if "coding" in levels:
            results["coding"] = run_coding(cx, args.coding, todo)
        if "sessions" in levels:
            results["sessions"] = run_sessions(cx, args.data, todo, rerank, args.skip_longmemeval)
        if "turns" in levels:
            results["locomo"] = run_locomo(cx, args.data / "locomo10.json", todo, rerank)
        if "turns" in levels and not args.skip_longmemeval:
            results["longmemeval_s_subset"] = run_longmemeval(cx, args.data / "longmemeval_s_subset101.json",
                                                              todo, rerank)
        CLOCK.now = datetime.now(timezone.utc)
        if args.latency:
            results["latency_10k"] = run_latency(cx, args.data / "longmemeval_s_subset101.json")
    rows = []
    for mode, r in results.get("locomo", {}).get("modes", {}).items():
        rows.append(("LoCoMo turns", mode, r["mode_used"], f"{r['R@5']:.3f}", f"{r['R@10']:.3f}",
                     f"{r['NDCG@10']:.3f}", f"{r['MRR@10']:.3f}", f"{r['latency']['p50_ms']:.2f}", f"{r['latency']['p95_ms']:.2f}"))
    for mode, r in results.get("longmemeval_s_subset", {}).get("modes", {}).items():
        for level in ("turn", "session"):
            x = r[level]
            rows.append((f"LongMemEval-S {level}", mode, r["mode_used"], f"{x['R@5']:.3f}", f"{x['R@10']:.3f}",
                         f"{x['NDCG@10']:.3f}", f"{x['MRR@10']:.3f}", f"{r['latency']['p50_ms']:.2f}", f"{r['latency']['p95_ms']:.2f}"))
    for name, title in (("locomo", "LoCoMo sessions whole"), ("longmemeval_s_subset", "LongMemEval-S sessions whole")):
        for mode, r in results.get("sessions", {}).get(name, {}).get("modes", {}).items():
            rows.append((title, mode, r["mode_used"], f"{r['R@5']:.3f}", f"{r['R@10']:.3f}", f"{r['NDCG@10']:.3f}",
                         f"{r['MRR@10']:.3f}", f"{r['latency']['p50_ms']:.2f}", f"{r['latency']['p95_ms']:.2f}"))
    for mode, r in results.get("coding", {}).get("modes", {}).items():
        x = r["kinds"]["all"]
        rows.append(("coding set (R@5, top-1)", mode, r["mode_used"], f"{x['R@5']:.3f}", "", "", f"{x['top1']:.3f}",
                     f"{r['latency']['p50_ms']:.2f}", f"{r['latency']['p95_ms']:.2f}"))
    for mode, r in results.get("latency_10k", {}).get("modes", {}).items():
        rows.append(("10k memories, limit 10", mode, r["mode_used"], "", "", "", "",
                     f"{r['latency']['p50_ms']:.2f}", f"{r['latency']['p95_ms']:.2f}"))
    setting = ("on, decay " + ("off" if args.no_decay else f"on, floor {results['decay_floor']}")) \
        if args.rerank else "off"
    print_table(f"Retrieval (rerank {setting}, embeddings {results['model']})", rows,
                ("data", "mode", "used", "R@5", "R@10", "NDCG@10", "MRR@10", "p50 ms", "p95 ms"))
    for mode, r in results.get("coding", {}).get("modes", {}).items():
        kinds = ", ".join(f"{k}: R@5 {v['R@5']:.3f} top-1 {v['top1']:.3f}" for k, v in r["kinds"].items() if k != "all")
        outdated = r["kinds"]["all"]["outdated_in_top10"]
        print(f"coding {mode}: {kinds}; outdated memories in a top 10: {outdated}")
    for mode, r in results.get("locomo", {}).get("modes", {}).items():
        cats = ", ".join(f"cat {c}: R@10 {v['R@10']:.3f}" for c, v in r["per_category"].items())
        print(f"LoCoMo {mode}: {cats}; empty results {r['empty_share']:.1%}; hits per question "
              f"{r['hits_per_question']:.1f}; hits for an off-topic question {r['off_topic_hits']:.1f}")
    for name in ("locomo", "longmemeval_s_subset", "latency_10k"):
        if name in results:
            r = results[name]
            print(f"{name}: stored {r['memories']} memories in {r['build_s']:.1f} s ({r['store_per_s']:.0f}/s, store_many)")
    target = write_json("retrieval", results, args.json)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
