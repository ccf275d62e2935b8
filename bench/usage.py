"""The "used" signal on labelled sets: did the agent's later work apply each memory it was shown?

    python bench/usage.py                      # every split, both modes, and the replay
    python bench/usage.py --split test         # one split
    python bench/usage.py --fit                # refit the detector's weights and threshold (prints them)

The set (bench/data/usage_set, its README says how it was written: by hand, without seeing the detector) holds 60
coding-agent sessions (splits ``dev``, on which the weights are fitted, and ``heldout``) and a ``test`` split of 30
more, written later by another helper blind to the detector: the memories shown at the start, the agent's later
work (messages, tool calls and their results, the final message) and, per shown memory, its kind: ``verbatim``,
``other_words`` (acted on in other words), ``partial`` (used; recall per kind), ``mention``, ``negation``,
``unrelated`` (not used: any mark is a false positive). ``recorded-heldout`` is bench/data/usage_heldout.jsonl
(recorded sessions, never fitted on; bench/data/usage.jsonl is fitted on with the dev split). For each split:
precision and recall of "used" overall, recall (used kinds) or false marks (the others) per kind, and the
detector's time per shown memory (``cortex.capture.usage.drawn_on``, the function every channel calls), in two
modes: ``lexical`` (no embedding model) and ``local`` (the store's all-MiniLM-L6-v2 re-judges the borderline
scores; the shown memories' vectors come from the index, as in a store, so they are embedded before the clock
starts).

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
#: The test split, written later and blind to the detector by another helper (its README's "Test split").
TEST_SET = SET.parent / "test_sessions.jsonl"
USED_KINDS = ("verbatim", "other_words", "partial")
UNUSED_KINDS = ("mention", "negation", "unrelated")


RECORDED = Path(__file__).parent / "data" / "usage.jsonl"
#: Recorded sessions written after those (bench/capture.py's held-out usage rows): never fitted on.
RECORDED_HELD_OUT = Path(__file__).parent / "data" / "usage_heldout.jsonl"


def load_recorded(path: Path = RECORDED) -> list[dict]:
    """bench/data/usage.jsonl (recorded sessions of bench/capture.py's usage rows) in the set's shape: a shown
    memory is ``verbatim`` when labelled used, else ``unrelated``."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{"session": f"r{k}", "split": "recorded", "output": r["output"],
             "shown": [{"key": i, "content": c} for i, c in r["memories"]],
             "labels": {i: "verbatim" if i in r["used"] else "unrelated" for i, _ in r["memories"]}}
            for k, r in enumerate(rows)]


def load(path: Path, split: str | None) -> list[dict]:
    """The set's sessions, those of ``split`` only when given (``test``: the blind test split's file)."""
    if split == "test":
        path = TEST_SET
    elif split == "recorded-heldout":
        return load_recorded(RECORDED_HELD_OUT)
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if split in (None, "all", r["split"])]


def evaluate(sessions: list[dict], embed=None) -> dict:
    """Per kind: pairs and marked; overall precision and recall; milliseconds per shown memory. With ``embed``,
    the borderline memories are judged again with it (their vectors computed first, as the index holds them)."""
    marked: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    errors: list[str] = []
    elapsed = 0.0
    for s in sessions:
        shown = [(m["key"], m["content"]) for m in s["shown"]]
        vectors = dict(zip((k for k, _ in shown), embed([c for _, c in shown]))) if embed is not None else None
        t0 = time.perf_counter()
        found = dict(drawn_on(shown, s["output"], embed=embed, vectors=vectors))
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


def fit(sessions: list[dict], embed) -> dict:
    """Refit the detector's weights (a logistic regression, scikit-learn) on ``sessions`` (the dev split): the
    lexical features, and with ``embed`` the semantic ones (every memory's cosines computed). Prints the
    dictionaries to paste into cortex/capture/applied.py."""
    from sklearn.linear_model import LogisticRegression

    from cortex.capture import applied

    rows: list[tuple[dict, bool]] = []
    for s in sessions:
        shown = [(m["key"], m["content"]) for m in s["shown"]]
        for (key, _), j in zip(shown, applied.judge(shown, s["output"], embed=embed, border=(-1.0, 2.0))):
            if j.why != "cited" and j.features:
                rows.append((j.features, s["labels"][key] in USED_KINDS))
    out = {}
    for name, keys in (("LEXICAL", list(applied.LEXICAL_WEIGHTS)), ("SEMANTIC", list(applied.SEMANTIC_WEIGHTS))):
        if name == "SEMANTIC" and embed is None:
            continue
        model = LogisticRegression(C=1.0, max_iter=5000).fit([[f.get(k, 0.0) for k in keys] for f, _ in rows],
                                                              [y for _, y in rows])
        out[name] = ({k: round(float(c), 3) for k, c in zip(keys, model.coef_[0])},
                     round(float(model.intercept_[0]), 3))
        print(f"{name}_WEIGHTS = {out[name][0]}\n{name}_INTERCEPT = {out[name][1]}")
    return out


def pick_threshold(sessions: list[dict], embed, precision: float = 0.9) -> float:
    """The lowest threshold whose precision on ``sessions`` (the dev split) reaches ``precision``: precision
    comes first (a memory wrongly marked used is lifted for every later task), then recall. Without one, the
    threshold of the best F1."""
    from cortex.capture import applied

    judged = []
    for s in sessions:
        shown = [(m["key"], m["content"]) for m in s["shown"]]
        judged += [(j, s["labels"][key] in USED_KINDS)
                   for (key, _), j in zip(shown, applied.judge(shown, s["output"], embed=embed))]
    best = (-1.0, 0.0)
    for step in range(6, 17):
        threshold = step / 20
        marked = [(j.why == "cited" or (not j.deviated and j.score >= threshold), used) for j, used in judged]
        tp = sum(m and u for m, u in marked)
        if tp and tp / sum(m for m, _ in marked) >= precision:
            print(f"THRESHOLD = {threshold}  # dev precision {tp / sum(m for m, _ in marked):.3f}")
            return threshold
        best = max(best, (2 * tp / max(1, sum(m for m, _ in marked) + sum(u for _, u in marked)), threshold))
    print(f"THRESHOLD = {best[1]}  # dev F1 {best[0]:.3f}")
    return best[1]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, default=SET)
    parser.add_argument("--split", choices=["dev", "heldout", "test", "recorded-heldout", "all"], default=None,
                        help="one split (default: each; all: dev and heldout together)")
    parser.add_argument("--replay", action="store_true", help="only the replay")
    parser.add_argument("--lexical", action="store_true", help="only the lexical mode (no embedding model)")
    parser.add_argument("--fit", action="store_true", help="refit the weights on the dev split and print them")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results: dict = {"set": str(args.set), "splits": {}}
    if args.fit:
        from cortex.embeddings import OnnxEmbeddings

        train = load(args.set, "dev") + load_recorded()
        embed = None if args.lexical else OnnxEmbeddings().embed
        return {"weights": fit(train, embed), "threshold": pick_threshold(load(args.set, "dev"), embed)}
    results["replay"] = replay()
    rows = [(str(r["session"]), *(f"{r[k]['rank']} / {r[k]['usage']:.2f} / {r[k]['shown']}:{r[k]['used']}"
                                  if k in r else "-" for k in "ABC"), " ".join(r["block"]))
            for r in results["replay"]]
    print_table("Replay: one task, A used every session, B shown and never used, C stored after session 5 "
                "(search rank / usage factor / shown:used)", rows, ("session", "A", "B", "C", "block of 2"))
    if args.replay:
        write_json("usage", results, args.json)
        return results
    splits = [args.split] if args.split else ["dev", "heldout", "test", "recorded-heldout", "all"]
    from cortex.embeddings import OnnxEmbeddings, local_available

    modes: dict[str, object] = {"lexical": None}
    if local_available() and not args.lexical:
        provider = OnnxEmbeddings()
        provider.embed(["warm up the model"] * 4)  # a model's load is not the detector's cost
        modes["local"] = provider.embed
    drawn_on([("warm", "warm up the detector")], "warm up")
    rows = []
    for mode, embed in modes.items():
        for split in splits:
            r = results["splits"].setdefault(split, {})[mode] = evaluate(load(args.set, split), embed)
            per = defaultdict(str, {k: f"{v['marked']}/{v['pairs']}" for k, v in r["kinds"].items()})
            rows.append((mode, split, str(r["pairs"]), _fmt(r["precision"]), _fmt(r["recall"]),
                         *(per[k] for k in USED_KINDS + UNUSED_KINDS), f"{r['ms_per_shown_memory']:.2f}"))
    print_table('The "used" signal (marked / pairs per kind; targets: precision >= 0.9, recall >= 0.8, each used kind'
                ' >= 0.7, mention and negation unmarked; fitted on dev and bench/data/usage.jsonl)', rows,
                ("mode", "split", "pairs", "precision", "recall", *USED_KINDS, *UNUSED_KINDS, "ms/memory"))
    write_json("usage", results, args.json)
    return results


if __name__ == "__main__":
    main()
