#!/usr/bin/env python3
"""Validate sessions.jsonl and print label counts. Standard library only.

Usage: python3 check.py [path/to/sessions.jsonl]
Exits non-zero on any schema problem.
"""
import json, sys, pathlib
from collections import Counter

KINDS = {"verbatim", "other_words", "partial", "mention", "negation", "unrelated"}
USED = {"verbatim", "other_words", "partial"}
SPLITS = {"dev", "heldout"}

def main(path):
    errors = []
    seen_sessions, seen_keys = set(), set()
    by_kind, by_split_kind, by_split_used = Counter(), Counter(), Counter()
    sessions_per_split = Counter()
    n_sessions = 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"line {lineno}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"{where}: invalid JSON ({e})")
                continue
            n_sessions += 1
            required = {"session": str, "project": str, "task": str, "shown": list,
                        "output": str, "labels": dict, "split": str}
            for field, typ in required.items():
                if not isinstance(rec.get(field), typ):
                    errors.append(f"{where}: field {field!r} missing or not {typ.__name__}")
            if errors and errors[-1].startswith(where):
                continue
            sid = rec["session"]
            where = f"line {lineno} ({sid})"
            if sid in seen_sessions:
                errors.append(f"{where}: duplicate session id")
            seen_sessions.add(sid)
            if rec["split"] not in SPLITS:
                errors.append(f"{where}: invalid split {rec['split']!r}")
            sessions_per_split[rec["split"]] += 1
            if not (3 <= len(rec["shown"]) <= 6):
                errors.append(f"{where}: {len(rec['shown'])} shown memories (expected 3-6)")
            if not rec["output"].strip():
                errors.append(f"{where}: empty output")
            shown_keys = []
            for m in rec["shown"]:
                if not isinstance(m, dict) or not isinstance(m.get("key"), str) \
                        or not isinstance(m.get("content"), str) or not m["content"].strip():
                    errors.append(f"{where}: malformed shown entry {m!r}")
                    continue
                k = m["key"]
                if k in seen_keys:
                    errors.append(f"{where}: duplicate memory key {k}")
                seen_keys.add(k)
                shown_keys.append(k)
            labels = rec["labels"]
            for k in shown_keys:
                if k not in labels:
                    errors.append(f"{where}: shown key {k} has no label")
            for k, kind in labels.items():
                if k not in shown_keys:
                    errors.append(f"{where}: label for key {k} that was not shown")
                if kind not in KINDS:
                    errors.append(f"{where}: invalid kind {kind!r} for {k}")
                    continue
                by_kind[kind] += 1
                by_split_kind[(rec["split"], kind)] += 1
                by_split_used[(rec["split"], kind in USED)] += 1

    if errors:
        print(f"{len(errors)} problem(s):")
        for e in errors:
            print("  " + e)
        return 1

    total = sum(by_kind.values())
    print(f"sessions: {n_sessions}  (dev {sessions_per_split['dev']}, heldout {sessions_per_split['heldout']})")
    print(f"pairs:    {total}")
    print()
    order = ["verbatim", "other_words", "partial", "mention", "negation", "unrelated"]
    print(f"{'kind':<12} {'used':>5} {'dev':>5} {'heldout':>8} {'total':>6}")
    for k in order:
        print(f"{k:<12} {('yes' if k in USED else 'no'):>5} {by_split_kind[('dev', k)]:>5} "
              f"{by_split_kind[('heldout', k)]:>8} {by_kind[k]:>6}")
    print()
    for used in (True, False):
        name = "USED" if used else "NOT USED"
        d, h = by_split_used[("dev", used)], by_split_used[("heldout", used)]
        print(f"{name:<9} dev {d:>4}  heldout {h:>4}  total {d + h:>4}  ({100 * (d + h) / total:.1f}%)")
    print("\nOK")
    return 0

if __name__ == "__main__":
    p = sys.argv[1] if len(sys.argv) > 1 else str(pathlib.Path(__file__).resolve().parent / "sessions.jsonl")
    sys.exit(main(p))
