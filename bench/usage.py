"""The "used" signal on a labelled set: did the agent's later work apply each memory it was shown?

    python bench/usage.py                      # both splits of bench/data/usage_set
    python bench/usage.py --split heldout      # one split

The set (bench/data/usage_set, its README says how it was written: by hand, without seeing the detector) holds 60
coding-agent sessions: the memories shown at the start, the agent's later work (messages, tool calls and their
results, the final message) and, per shown memory, its kind: ``verbatim``, ``other_words`` (acted on in other
words), ``partial`` (used; recall per kind), ``mention``, ``negation``, ``unrelated`` (not used: any mark is a false
positive). For each split: precision and recall of "used" overall, recall (used kinds) or false marks (the others)
per kind, and the detector's time per shown memory (``cortex.capture.usage.drawn_on``, the function every channel
calls).

The replay (``--replay``, also part of the default run): sessions of one agent on one task, on a real on-disk
store; memory A is drawn on in every session's output, B is shown every time and never used, C (as relevant) is
stored after the fifth session. Per session: search rank of each and the usage part of its score (``explain``,
with ``Reranking(unused=True)``: the block's rule), and which of them the two-memory block shows.

Prints tables and writes bench/results/usage.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import print_table, write_json  # noqa: E402

from cortex.capture.usage import drawn_on  # noqa: E402

SET = Path(__file__).parent / "data" / "usage_set" / "sessions.jsonl"
USED_KINDS = ("verbatim", "other_words", "partial")
UNUSED_KINDS = ("mention", "negation", "unrelated")


def load(path: Path, split: str | None) -> list[dict]:
    """The set's sessions, those of ``split`` only when given."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if split in (None, "all", r["split"])]


def evaluate(sessions: list[dict]) -> dict:
    """Per kind: pairs and marked; overall precision and recall; milliseconds per shown memory."""
    marked: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    errors: list[str] = []
    elapsed = 0.0
    for s in sessions:
        shown = [(m["key"], m["content"]) for m in s["shown"]]
        t0 = time.perf_counter()
        found = dict(drawn_on(shown, s["output"]))
        elapsed += time.perf_counter() - t0
        for key, content in shown:
            kind = s["labels"][key]
            pairs[kind] += 1
            marked[kind] += key in found
            if (key in found) != (kind in USED_KINDS) and len(errors) < 40:
                errors.append(f"{'fp' if key in found else 'fn'} {kind} {s['session']}: {content[:80]!r}")
    tp = sum(marked[k] for k in USED_KINDS)
    fp = sum(marked[k] for k in UNUSED_KINDS)
    used = sum(pairs[k] for k in USED_KINDS)
    shown_total = sum(pairs.values())
    return {"sessions": len(sessions), "pairs": shown_total, "used": used,
            "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / used if used else None,
            "kinds": {k: {"pairs": pairs[k], "marked": marked[k],
                          ("recall" if k in USED_KINDS else "false_mark_rate"): marked[k] / pairs[k] if pairs[k] else None}
                      for k in USED_KINDS + UNUSED_KINDS},
            "ms_per_shown_memory": elapsed * 1000 / max(1, shown_total), "errors": errors}


REPLAY_TASK = "deploy the api"
REPLAY_MEMORIES = {
    "A": "Before you deploy the api, run the database migrations with alembic upgrade head",
    "B": "Deploy the api only after the release tag is pushed to the deploy repository",
    "C": "After you deploy the api, watch the canary dashboard for five minutes",
}
REPLAY_OUTPUT = "As noted: run the database migrations with alembic upgrade head first. Deployed the api."


def replay(sessions: int = 15, c_after: int = 5) -> list[dict]:
    """Per session: each memory's search rank (1-based), usage factor, shown and used counts, and the block."""
    import tempfile

    from cortex import Cortex, Reranking

    rows = []
    with tempfile.TemporaryDirectory() as tmp, Cortex.open(Path(tmp) / "store", embeddings=None) as cx:
        cx.agents.register("dev", description="a developer")
        ids = {k: cx.store("dev", REPLAY_MEMORIES[k]).id for k in "AB"}
        for session in range(1, sessions + 1):
            block = cx.agent_start("dev", task=REPLAY_TASK, limit=2)
            if session == c_after:
                ids["C"] = cx.store("dev", REPLAY_MEMORIES["C"]).id
            cx.agent_end("dev", REPLAY_OUTPUT)
            # search's explain with the rule on (the block has it on; search by default not: a touch is a use)
            hits = cx.search("dev", REPLAY_TASK, mode="bm25", explain=True, rerank=Reranking(unused=True)).hits
            rank = {h.memory.id: n for n, h in enumerate(hits, 1)}
            row: dict = {"session": session, "block": [k for k, i in ids.items()
                                                        if REPLAY_MEMORIES[k] in block]}
            for key, memory_id in ids.items():
                memory = cx.get("dev", memory_id)
                hit = next(h for h in hits if h.memory.id == memory_id)
                row[key] = {"rank": rank[memory_id], "usage": hit.explain["usage"] if hit.explain else None,
                            "shown": memory.usage_count, "used": memory.used_count}
            rows.append(row)
    return rows


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, default=SET)
    parser.add_argument("--split", choices=["dev", "heldout", "all"], default=None,
                        help="one split (default: dev, heldout and all, each reported)")
    parser.add_argument("--replay", action="store_true", help="only the replay")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results: dict = {"set": str(args.set), "splits": {}}
    results["replay"] = replay()
    rows = [(str(r["session"]), *(f"{r[k]['rank']} / {r[k]['usage']:.2f} / {r[k]['shown']}:{r[k]['used']}"
                                  if k in r else "-" for k in "ABC"), " ".join(r["block"]))
            for r in results["replay"]]
    print_table("Replay: one task, A used every session, B shown and never used, C stored after session 5 "
                "(search rank / usage factor / shown:used)", rows, ("session", "A", "B", "C", "block of 2"))
    if args.replay:
        write_json("usage", results, args.json)
        return results
    splits = [args.split] if args.split else ["dev", "heldout", "all"]
    drawn_on([("warm", "warm up the detector")], "warm up")  # a model's load is not the detector's cost
    for split in splits:
        results["splits"][split] = evaluate(load(args.set, split))
    rows = []
    for split, r in results["splits"].items():
        per = defaultdict(str, {k: f"{v['marked']}/{v['pairs']}" for k, v in r["kinds"].items()})
        rows.append((split, str(r["pairs"]), _fmt(r["precision"]), _fmt(r["recall"]),
                     *(per[k] for k in USED_KINDS + UNUSED_KINDS), f"{r['ms_per_shown_memory']:.2f}"))
    print_table('The "used" signal (marked / pairs per kind; targets: precision >= 0.9, recall >= 0.8, each used kind'
                ' >= 0.7, mention and negation unmarked)', rows,
                ("split", "pairs", "precision", "recall", *USED_KINDS, *UNUSED_KINDS, "ms/memory"))
    write_json("usage", results, args.json)
    return results


if __name__ == "__main__":
    main()
