"""Assemble the hand-written TEST split (test_batch.py) into ../test_sessions.jsonl.

Numbers the sessions t001..t030, shuffles the display order of each session's
memories (seeded, so position carries no signal), sets "split": "test", validates
the result (same schema rules as check.py, plus: tool_use inputs are single-line
JSON, no memory text is shared with sessions.jsonl) and prints counts per kind.
Standard library only. Usage: python3 build_test.py
"""
import json, random, pathlib, sys
from collections import Counter

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_batch  # noqa: E402

OUT = HERE.parent / "test_sessions.jsonl"
OLD = HERE.parent / "sessions.jsonl"
KINDS = ["verbatim", "other_words", "partial", "mention", "negation", "unrelated"]
USED = {"verbatim", "other_words", "partial"}
TOOLS = {"Bash", "Read", "Edit", "Write", "Grep"}


def validate(recs):
    errors = []
    old_mem = set()
    if OLD.exists():
        for line in OLD.open(encoding="utf-8"):
            if line.strip():
                old_mem.update(m["content"] for m in json.loads(line)["shown"])
    keys = set()
    for r in recs:
        sid = r["session"]
        if not (3 <= len(r["shown"]) <= 6):
            errors.append(f"{sid}: {len(r['shown'])} memories")
        contents = [m["content"] for m in r["shown"]]
        if len(set(contents)) != len(contents):
            errors.append(f"{sid}: duplicate memory text within session")
        for m in r["shown"]:
            if m["key"] in keys:
                errors.append(f"{sid}: duplicate key {m['key']}")
            keys.add(m["key"])
            if m["content"] in old_mem:
                errors.append(f"{sid}: memory reused from sessions.jsonl: {m['content']!r}")
            if r["labels"].get(m["key"]) not in KINDS:
                errors.append(f"{sid}: bad label for {m['key']}")
        if set(r["labels"]) != {m["key"] for m in r["shown"]}:
            errors.append(f"{sid}: labels/shown key mismatch")
        if not r["output"].strip():
            errors.append(f"{sid}: empty output")
        for i, line in enumerate(r["output"].split("\n"), 1):
            if line.startswith("tool_use "):
                parts = line.split(" ", 2)
                if len(parts) < 3 or parts[1] not in TOOLS:
                    errors.append(f"{sid} line {i}: bad tool_use line")
                    continue
                try:
                    inp = json.loads(parts[2])
                except json.JSONDecodeError as e:
                    errors.append(f"{sid} line {i}: tool_use input not JSON ({e})")
                    continue
                if parts[1] == "Edit" and not {"file_path", "old_string", "new_string"} <= set(inp):
                    errors.append(f"{sid} line {i}: Edit without file_path/old_string/new_string")
    return errors


def main():
    sessions = test_batch.SESSIONS
    rng = random.Random(20240612)
    recs = []
    for i, s in enumerate(sessions, 1):
        sid = f"t{i:03d}"
        mem = list(s["mem"])
        rng.shuffle(mem)
        shown, labels = [], {}
        for j, (kind, content) in enumerate(mem, 1):
            key = f"{sid}-m{j}"
            shown.append({"key": key, "content": content})
            labels[key] = kind
        recs.append({"session": sid, "project": s["project"], "task": s["task"],
                     "shown": shown, "output": s["out"], "labels": labels,
                     "split": "test"})
    errors = validate(recs)
    if errors:
        print(f"{len(errors)} problem(s):")
        for e in errors:
            print("  " + e)
        return 1
    with OUT.open("w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    c = Counter(k for r in recs for k in r["labels"].values())
    total = sum(c.values())
    used = sum(c[k] for k in USED)
    lines = [len(r["output"].split("\n")) for r in recs]
    noprefix = sum(1 for r in recs if "assistant: " not in r["output"])
    print(f"wrote {len(recs)} sessions to {OUT}")
    print(f"pairs: {total}")
    for k in KINDS:
        print(f"  {k:<12} {'yes' if k in USED else 'no':>4} {c[k]:>4}")
    print(f"USED {used} ({100 * used / total:.1f}%)  NOT USED {total - used}")
    print(f"output lines: min {min(lines)}, max {max(lines)}, sessions >= 60 lines: "
          f"{sum(l >= 60 for l in lines)}; sessions without 'assistant: ' prefix: {noprefix}")
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
