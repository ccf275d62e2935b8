"""Capture benchmark: what automatic capture keeps out and how fast.

    python bench/capture.py

* **Redaction on the labelled set** (bench/data/redaction.jsonl, made by bench/data/make_redaction_set.py:
  secrets of every kind Cortex redacts in the sentences agents write, and near-misses that must stay: commit
  hashes, digests, UUIDs, memory ids, identifiers, paths, placeholders). Recall: secrets no longer in the
  output. Precision: redacted spans that cover a labelled secret, over all redacted spans. Per kind and overall.
* **A held-out labelled set** (bench/data/redaction_heldout.jsonl): other templates and near-misses, written
  after the rules were tuned and never used to change them.
* **False redactions in real conversations**: every redaction in the LongMemEval and LoCoMo dialogue turns
  (../shared/bench/data: public chat data without credentials) counts as a false positive; per MB. The rules
  were tuned on the LongMemEval subset and LoCoMo; the sessions of longmemeval_oracle.json outside the subset
  are held out.
* **Throughput** of redaction over those turns, in MB/s.
* **The quality gate** (cortex/capture/gate.py) on its labelled sets (bench/data/gate.jsonl, tuned on, and
  bench/data/gate_heldout.jsonl, written after tuning; made by bench/data/make_gate_set.py): each candidate is
  judged against the memories stored before it. Per action precision and recall, accuracy, the precision of
  refuse and confirm together (a wrong refusal or merge loses a learning: the costly error; a confirm of the
  wrong memory counts as wrong), and how often a right refusal gives the expected reason. Lexical only, then
  with the local embedding model's vectors (all-MiniLM-L6-v2 int8) when it is installed.

Prints tables and writes bench/results/capture.json.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import print_table, write_json  # noqa: E402

from cortex.capture.gate import Gate  # noqa: E402
from cortex.capture.redact import Redactor  # noqa: E402

LABELLED = Path(__file__).parent / "data" / "redaction.jsonl"
#: Written after the rules were tuned, never used to change them (bench/data/make_redaction_set.py).
HELD_OUT = Path(__file__).parent / "data" / "redaction_heldout.jsonl"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench" / "data"
#: The quality gate's labelled sets (bench/data/make_gate_set.py): tuned on, and written after tuning.
GATE = Path(__file__).parent / "data" / "gate.jsonl"
GATE_HELD_OUT = Path(__file__).parent / "data" / "gate_heldout.jsonl"
ACTIONS = ("store", "confirm", "refuse")


def labelled(redactor: Redactor, path: Path = LABELLED) -> dict:
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    examples: list[str] = []
    for line in path.read_text().splitlines():
        item = json.loads(line)
        text, secrets = item["text"], item["secrets"]
        out = redactor.redact(text).text
        kind = per_kind[item["kind"]]
        for secret in secrets:
            kind["caught" if secret not in out else "missed"] += 1
        places = [(text.find(s), len(s)) for s in secrets]
        for start, end, rule in redactor.find(text):
            hit = any(p <= start < p + n or start <= p < end for p, n in places if p >= 0)
            kind["true_spans" if hit else "false_spans"] += 1
            if not hit and len(examples) < 10:
                examples.append(f"{rule}: {text[start:end][:60]!r}")
        kind["items"] += 1
    total: Counter[str] = Counter()
    for counts in per_kind.values():
        total.update(counts)
    return {"per_kind": {k: dict(v) for k, v in per_kind.items()}, "total": dict(total),
            "false_examples": examples}


def _lme_turns(name: str, skip: set[str]) -> tuple[list[str], set[str]]:
    """The user and assistant turns of the sessions of a LongMemEval file (each session once, none of
    ``skip``), and the ids of those sessions."""
    turns: list[str] = []
    seen: set[str] = set()
    path = SHARED / name
    if path.exists():
        for question in json.loads(path.read_text()):
            for session_id, session in zip(question["haystack_session_ids"], question["haystack_sessions"]):
                if session_id not in seen and session_id not in skip:
                    seen.add(session_id)
                    turns += [turn["content"] for turn in session]
    return turns, seen


def conversations() -> list[str]:
    """The turns the context rules were tuned on (their false redactions were looked at): the LongMemEval
    subset's sessions and LoCoMo's dialogues."""
    turns, _ = _lme_turns("longmemeval_s_subset101.json", set())
    locomo = SHARED / "locomo10.json"
    if locomo.exists():
        for sample in json.loads(locomo.read_text()):
            conversation = sample["conversation"]
            for key, value in conversation.items():
                if key.startswith("session_") and isinstance(value, list):
                    turns += [turn["text"] for turn in value]
    return turns


def held_out() -> list[str]:
    """Sessions never looked at while tuning: those of longmemeval_oracle.json that are not in the subset."""
    _, tuned = _lme_turns("longmemeval_s_subset101.json", set())
    return _lme_turns("longmemeval_oracle.json", tuned)[0]


def real_text(redactor: Redactor, turns: list[str]) -> dict:
    size = sum(len(t.encode()) for t in turns)
    started = time.perf_counter()
    found: Counter[str] = Counter()
    examples: list[str] = []
    for turn in turns:
        for start, end, rule in redactor.find(turn):
            found[rule] += 1
            if len(examples) < 15:
                examples.append(f"{rule}: {turn[start:end][:60]!r}")
    seconds = time.perf_counter() - started
    return {"turns": len(turns), "mb": size / 1e6, "seconds": seconds, "mb_per_s": size / 1e6 / seconds,
            "redactions": dict(found), "per_mb": sum(found.values()) / (size / 1e6), "examples": examples}


def _cached(embed: Callable[[list[str]], np.ndarray]) -> Callable[[list[str]], np.ndarray]:
    """``embed`` remembering each text's row (the sets repeat their pool memories)."""
    rows: dict[str, np.ndarray] = {}

    def vectors(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in rows]
        if missing:
            rows.update(zip(missing, embed(missing)))
        return np.stack([rows[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)

    return vectors


def gate(path: Path, vectors: Callable[[list[str]], np.ndarray] | None = None) -> dict:
    """The gate's verdicts on a labelled set: per action precision and recall, accuracy, refuse+confirm
    precision (a confirm of another memory than the labelled one is wrong), reasons of the right refusals."""
    confusion: Counter[tuple[str, str]] = Counter()
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    costly: list[str] = []
    reasons: Counter[str] = Counter()
    started = time.perf_counter()
    items = [json.loads(line) for line in path.read_text().splitlines()]
    for item in items:
        existing = [(f"m{i}", text) for i, text in enumerate(item["existing"])]
        verdict = Gate(existing, vectors=vectors).judge(item["candidate"])
        expected, got = item["expected"], verdict.action
        if got == expected == "confirm" and verdict.match is not None:
            matched = item["existing"][int(verdict.match[1:])]
            if matched != item["existing"][item["match"]]:
                got = "confirm-other"
        confusion[expected, got] += 1
        per_kind[item["kind"]]["right" if got == expected else "wrong"] += 1
        if got == expected == "refuse":
            reasons["same" if verdict.reason == item["reason"] else "other"] += 1
        if got != expected and got != "store" and len(costly) < 12:
            costly.append(f"{expected} -> {got} ({verdict.reason}): {item['candidate'][:90]!r}")
    seconds = time.perf_counter() - started

    def share(a: int, b: int) -> float | None:
        return a / b if b else None

    actions = {}
    for action in ACTIONS:
        said = sum(n for (_, got), n in confusion.items() if got == action or (action == "confirm"
                                                                                   and got == "confirm-other"))
        truth = sum(n for (expected, _), n in confusion.items() if expected == action)
        right = confusion[action, action]
        actions[action] = {"said": said, "expected": truth, "precision": share(right, said),
                           "recall": share(right, truth)}
    right = sum(confusion[a, a] for a in ACTIONS)
    not_stored = actions["refuse"]["said"] + actions["confirm"]["said"]
    return {"items": len(items), "accuracy": right / len(items), "actions": actions,
            "refuse_confirm_precision": share(confusion["refuse", "refuse"] + confusion["confirm", "confirm"],
                                              not_stored),
            "wrong_refusals": sum(n for (e, g), n in confusion.items() if g == "refuse" and e != "refuse"),
            "wrong_merges": sum(n for (e, g), n in confusion.items() if g.startswith("confirm") and e != g),
            "reason_agreement": share(reasons["same"], reasons["same"] + reasons["other"]),
            "per_kind": {k: dict(v) for k, v in sorted(per_kind.items())},
            "confusion": {f"{e}->{g}": n for (e, g), n in sorted(confusion.items())},
            "costly_examples": costly, "ms_per_item": seconds * 1000 / max(1, len(items))}


def gate_runs() -> dict:
    """The gate on both sets, lexical only and (when the model is installed) with local embeddings."""
    from cortex.embeddings import OnnxEmbeddings, local_available

    runs = {"tuned": gate(GATE), "held_out": gate(GATE_HELD_OUT)}
    if local_available():
        model = OnnxEmbeddings()
        vectors = _cached(lambda texts: model.embed(texts))
        runs["tuned_local"], runs["held_out_local"] = gate(GATE, vectors), gate(GATE_HELD_OUT, vectors)
    return runs


def main() -> dict:
    redactor = Redactor()
    results = {"labelled": labelled(redactor), "labelled_held_out": labelled(redactor, HELD_OUT),
               "real": real_text(redactor, conversations()),
               "held_out": real_text(redactor, held_out())}

    def ratio(a: int, b: int) -> str:
        return f"{a / b:.3f}" if b else "-"

    rows = []
    for kind, c in sorted(results["labelled"]["per_kind"].items()):
        secrets = c.get("caught", 0) + c.get("missed", 0)
        rows.append((kind, str(c["items"]), ratio(c.get("caught", 0), secrets),
                     ratio(c.get("true_spans", 0), c.get("true_spans", 0) + c.get("false_spans", 0)),
                     str(c.get("false_spans", 0))))
    t = results["labelled"]["total"]
    recall = t.get("caught", 0) / (t.get("caught", 0) + t.get("missed", 0))
    precision = t.get("true_spans", 0) / (t.get("true_spans", 0) + t.get("false_spans", 0))
    rows.append(("all", str(t["items"]), f"{recall:.3f}", f"{precision:.3f}", str(t.get("false_spans", 0))))
    results["precision"], results["recall"] = precision, recall
    print_table("Redaction on the labelled set (bench/data/redaction.jsonl)", rows,
                ("kind", "items", "recall", "precision", "false spans"))
    for example in results["labelled"]["false_examples"]:
        print("  false:", example)
    h = results["labelled_held_out"]["total"]
    results["held_out_recall"] = h.get("caught", 0) / max(1, h.get("caught", 0) + h.get("missed", 0))
    results["held_out_precision"] = h.get("true_spans", 0) / max(1, h.get("true_spans", 0) + h.get("false_spans", 0))
    missed = {k: c.get("missed", 0) for k, c in results["labelled_held_out"]["per_kind"].items() if c.get("missed")}
    print_table("Held-out labelled set (bench/data/redaction_heldout.jsonl: never used to tune the rules)", [
        (str(h["items"]), f"{results['held_out_recall']:.3f}", f"{results['held_out_precision']:.3f}",
         str(h.get("false_spans", 0)), ", ".join(f"{k} {n}" for k, n in sorted(missed.items())) or "-")],
        ("items", "recall", "precision", "false spans", "missed by kind"))
    for example in results["labelled_held_out"]["false_examples"]:
        print("  false:", example)
    rows = [(name, f"{r['turns']:,} turns, {r['mb']:.1f} MB", str(sum(r["redactions"].values())),
             f"{r['per_mb']:.2f}", f"{r['mb_per_s']:.1f}")
            for name, r in (("tuned on", results["real"]), ("held out", results["held_out"]))]
    print_table("Redaction of real conversations (no credentials in them: every redaction is a false one)", rows,
                ("set", "text", "redactions", "per MB", "MB/s"))
    for example in results["real"]["examples"] + results["held_out"]["examples"]:
        print("  false:", example)
    results["gate"] = gate_runs()

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    names = {"tuned": "tuned on (gate.jsonl)", "held_out": "held out (gate_heldout.jsonl)",
             "tuned_local": "tuned on, local vectors", "held_out_local": "held out, local vectors"}
    rows = []
    for name, r in results["gate"].items():
        a = r["actions"]
        rows.append((names[name], str(r["items"]), fmt(r["accuracy"]),
                     *(f"{fmt(a[x]['precision'])} / {fmt(a[x]['recall'])}" for x in ACTIONS),
                     fmt(r["refuse_confirm_precision"]), f"{r['wrong_refusals']} / {r['wrong_merges']}",
                     fmt(r["reason_agreement"])))
    print_table("Quality gate on its labelled sets (bench/data/gate*.jsonl)", rows,
                ("set", "items", "accuracy", "store P / R", "confirm P / R", "refuse P / R",
                 "refuse+confirm P", "wrong refusals / merges", "reasons"))
    for name, r in results["gate"].items():
        for example in r["costly_examples"]:
            print(f"  {name}: {example}")
    target = write_json("capture", results)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
