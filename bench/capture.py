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

Prints tables and writes bench/results/capture.json.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import print_table, write_json  # noqa: E402

from cortex.capture.redact import Redactor  # noqa: E402

LABELLED = Path(__file__).parent / "data" / "redaction.jsonl"
#: Written after the rules were tuned, never used to change them (bench/data/make_redaction_set.py).
HELD_OUT = Path(__file__).parent / "data" / "redaction_heldout.jsonl"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench" / "data"


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
    target = write_json("capture", results)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
